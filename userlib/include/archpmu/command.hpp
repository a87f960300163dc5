// SPDX-License-Identifier: MIT
// archpmu: a command started held before its exec, so that a task session can
// be opened on it first and count it from its first instruction (perf's way
// for `perf stat -- COMMAND`).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "archpmu/unique_fd.hpp"

namespace archpmu {

// fork()s a child that waits until release() and then execs `argv` (searched
// in PATH). A child that cannot exec it prints "LABEL: cannot run 'CMD': REASON"
// on stderr and exits 127, as a shell does. Destroyed before release(), the
// child exits without running the command, and is reaped. Move-only; throws
// archpmu::Error.
class PendingCommand {
public:
    PendingCommand(const std::vector<std::string>& argv, const std::string& label);
    ~PendingCommand();
    PendingCommand(PendingCommand&& other) noexcept;
    PendingCommand& operator=(PendingCommand&&) = delete;
    PendingCommand(const PendingCommand&) = delete;
    PendingCommand& operator=(const PendingCommand&) = delete;

    [[nodiscard]] pid_t pid() const noexcept { return pid_; }
    // Let it exec; from now on the caller waits for it (waitpid).
    void release();

private:
    pid_t pid_ = -1;
    bool released_ = false;
    UniqueFd go_;  // the write end of the pipe the child waits on
};

}  // namespace archpmu
