// SPDX-License-Identifier: MIT
// What stat and record share: the command they run, waiting for it, Ctrl-C, and
// the events' names without privilege.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "archpmu/command.hpp"
#include "archpmu/events.hpp"
#include "archpmu/unique_fd.hpp"

namespace archpmu::tool {

// The events in user mode only (archpmu::user_mode_only), named as perf names
// what it implies: "instructions:u", "cycles:Du", "cpu/event=0xc0/u".
std::vector<EventSpec> user_mode_named(const std::vector<EventSpec>& events);

// A shell's status for a command that could not be run (not found, not executable).
inline constexpr int kCannotRunStatus = 127;

// "archpmu TOOL: cannot run 'CMD': REASON" on stderr.
void say_cannot_run(const char* tool, const std::string& command, int err);

// The tool's exit status: the command's (128 + signal if it was killed), or 0
// without a command (child <= 0). `status` is what waitpid() gave.
int exit_status(pid_t child, int status);

// From now on SIGINT only sets the flag interrupted() returns (the child, which
// gets it too, keeps the default action). The handler does not restart system
// calls: a Ctrl-C ends a TaskWatch's sleep at once.
void catch_interrupt();
bool interrupted();
// record, as perf record: from now on SIGTERM (timeout(1), kill) only sets the flag
// terminated() returns, so the recording is finished before the tool ends.
void catch_termination();
bool terminated();
// After a Ctrl-C, end as perf does: by SIGINT itself, so that a shell sees 130; after
// a caught SIGTERM, by SIGTERM. Returns `status` when there was neither.
int exit_by_interrupt(int status);

// Lets the held command run: its pid; -1 without one, or when a Ctrl-C came first
// (it reached the held child too, which exits unreleased and is reaped with
// `pending`), even while it was being released.
pid_t release(std::optional<PendingCommand>& pending);

// The released command, while stat or record runs it: if they fail (throw) before
// they reaped it, it is ended (SIGTERM, as perf does at exit) and reaped, not
// left running on its own.
class ChildGuard {
public:
    ChildGuard() = default;
    ~ChildGuard();
    ChildGuard(const ChildGuard&) = delete;
    ChildGuard& operator=(const ChildGuard&) = delete;
    void watch(pid_t pid) noexcept { pid_ = pid; }
    // It runs, or exited and is not reaped yet.
    [[nodiscard]] bool watching() const noexcept { return pid_ > 0; }
    // Reaps it (wait4) and hands back its status, and its rusage in `usage`
    // if given (left as it was if there was nothing to reap); the guard is done.
    int reap(struct rusage* usage = nullptr) noexcept;
    // Ends it first (SIGTERM), then reaps it.
    int end() noexcept;

private:
    pid_t pid_ = -1;
};

// Sleeps until what the tool waits for happens: its command exits, or every -p
// process and -t thread is gone; or a deadline, or Ctrl-C. Processes are watched
// through pidfds, without polling; threads have no pidfd before Linux 6.9, and
// they and any process pidfd_open() refuses are looked at every 50 ms.
class TaskWatch {
public:
    using Clock = std::chrono::steady_clock;
    // child > 0: the command (reaped by the caller); pids, tids: -p and -t.
    TaskWatch(pid_t child, const std::vector<pid_t>& pids, const std::vector<pid_t>& tids);
    // One sleep: until what it watches is done, `until`, a signal, or (with threads
    // to look at) 50 ms; none after a Ctrl-C unless it watches a command. True once
    // what it watches is done.
    // `also`: files whose readability ends the sleep too (record's rings); one that
    // hangs up (a side-band event whose threads are gone) is taken out of it.
    bool wait_until(Clock::time_point until, std::vector<int>* also = nullptr);
    [[nodiscard]] bool done() const noexcept;

private:
    std::vector<UniqueFd> pidfds_;  // the command's, or the -p processes' still running
    std::vector<pid_t> polled_;     // threads (and processes without a pidfd) still running
    pid_t child_ = -1;              // the command, when it has no pidfd: waitid() every 50 ms
    bool watching_ = false;         // anything to wait for at all
    bool command_ = false;          // the command: a Ctrl-C does not end the wait
};

}  // namespace archpmu::tool
