// SPDX-License-Identifier: MIT
#include "archpmu/counter.hpp"

#include <unistd.h>

#include <cerrno>
#include <string>

#include "archpmu/error.hpp"

namespace archpmu {
namespace {

SessionOptions counter_options(Counter::Scope scope, const std::string& device)
{
    SessionOptions o;
    o.device = device;
    o.multiplex = true;
    o.task = scope == Counter::Scope::thread ? TaskScope{TaskScope::Kind::thread, 0, false, false}
                                             : TaskScope{TaskScope::Kind::process, 0, true, false};
    return o;
}

}  // namespace

Counter::Counter(std::string_view events, Scope scope, const std::string& device)
    : session_(events, counter_options(scope, device)),
      owner_(scope == Scope::thread ? ::gettid() : 0),
      owner_thread_(::pthread_self())
{
}

void Counter::check_thread(const char* what) const
{
    if (owner_ && !::pthread_equal(::pthread_self(), owner_thread_))
        throw Error(EINVAL, std::string("Counter::") + what + " on thread " +
                                std::to_string(::gettid()) + ": this Counter counts thread " +
                                std::to_string(owner_) +
                                ", which made it (make one in each thread, or use "
                                "Scope::process)");
}

void Counter::start()
{
    check_thread("start");
    session_.start();
}

void Counter::stop()
{
    check_thread("stop");
    session_.stop();
}

const Results& Counter::read()
{
    session_.read(snapshot_);
    summarize(session_.events(), snapshot_, results_);
    return results_;
}

}  // namespace archpmu
