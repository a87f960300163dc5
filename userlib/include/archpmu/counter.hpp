// SPDX-License-Identifier: MIT
// archpmu: count events around a region of one's own code.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "archpmu/device.hpp"
#include "archpmu/session.hpp"

namespace archpmu {

// The events of a list (perf's syntax, events.hpp) counted on the calling
// thread, or on every thread of the calling process, wherever they run:
//
//     archpmu::Counter c{"instructions,cycles"};
//     c.start();
//     work();
//     c.stop();
//     std::uint64_t n = c.read().get("instructions");
//
// Events that do not fit the counters at once take turns and are scaled, as
// perf's are. A task session: it needs what the module asks for counting one's
// own threads (ARCHPMU_CAP_TASK); without CAP_PERFMON, where the module allows
// it (Privilege::own_user), events that name no mode count user mode only, as
// perf's do (their names stay as written). Move-only; every method throws
// archpmu::Error.
class Counter {
public:
    enum class Scope {
        thread,   // the thread that constructs the Counter (start, stop there)
        process,  // every thread of its process and the children it forks, from then on
    };

    explicit Counter(std::string_view events, Scope scope = Scope::thread,
                     const std::string& device = kDefaultDevicePath);

    // With Scope::thread, only on the thread that made the Counter (EINVAL
    // elsewhere): it counts that thread, not the one that calls.
    void start();
    void stop();
    void reset() { session_.reset(); }
    // Each event summed over the CPUs it ran on, scaled by Result::scaled(), with
    // the per_cpu rows behind each sum.
    [[nodiscard]] Results result() const { return session_.results(); }
    // The same without the rows, into the Counter's own Results (valid until the
    // next read): the fast read (Session::read_totals), which after the first
    // allocates nothing. Should it throw, the Results are left unspecified until
    // a read succeeds.
    const Results& read();
    [[nodiscard]] const Session& session() const noexcept { return session_; }

private:
    void check_thread(const char* what) const;

    Session session_;
    pid_t owner_ = 0;  // Scope::thread: the thread counted; 0 for a process
    Results results_;
};

}  // namespace archpmu
