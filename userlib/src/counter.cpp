// SPDX-License-Identifier: MIT
#include "archpmu/counter.hpp"

#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "archpmu/device.hpp"
#include "archpmu/error.hpp"
#include "archpmu/events.hpp"

namespace archpmu {
namespace {

// The calling thread's id, asking the kernel once per thread: start and stop
// check it every time. A fork's child asks again (its thread inherits the
// parent's copy), and a thread new in a reused pthread_t starts at 0.
thread_local pid_t cached_tid = 0;

pid_t current_tid()
{
    static const int registered = ::pthread_atfork(nullptr, nullptr, [] { cached_tid = 0; });
    (void)registered;
    if (!cached_tid)
        cached_tid = ::gettid();
    return cached_tid;
}

// The events as the caller may count them: without CAP_PERFMON, where the
// module lets one count one's own tasks in user mode, in user mode (as perf).
std::vector<EventSpec> counter_events(std::string_view events, const std::string& device)
{
    std::vector<EventSpec> specs = parse_event_list(events);
    if (Device(device).info().privilege == Privilege::own_user)
        return user_mode_only(std::move(specs));
    return specs;
}

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
    : session_(counter_events(events, device), counter_options(scope, device)),
      owner_(scope == Scope::thread ? current_tid() : 0)
{
}

void Counter::check_thread(const char* what) const
{
    if (owner_ && current_tid() != owner_)
        throw Error(EINVAL, std::string("Counter::") + what + " on thread " +
                                std::to_string(current_tid()) + ": this Counter counts thread " +
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
    session_.read_totals(results_);
    return results_;
}

}  // namespace archpmu
