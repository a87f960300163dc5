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
// in PATH). A child that cannot exec it exits 127, as a shell does, and hands
// the exec's errno back: exec_error() reads it once the child is reaped, so
// the caller tells "cannot run" from a command that itself exits 127.
// Destroyed before release(), the child exits without running the command,
// and is reaped. Move-only; throws archpmu::Error.
class PendingCommand {
public:
    explicit PendingCommand(const std::vector<std::string>& argv);
    ~PendingCommand();
    PendingCommand(PendingCommand&& other) noexcept;
    PendingCommand& operator=(PendingCommand&&) = delete;
    PendingCommand(const PendingCommand&) = delete;
    PendingCommand& operator=(const PendingCommand&) = delete;

    [[nodiscard]] pid_t pid() const noexcept { return pid_; }
    // Let it exec; from now on the caller waits for it (waitpid). It does not wait
    // for the exec itself.
    void release();
    // After the caller has reaped the child: the errno its exec failed with, or 0
    // when it ran the command (or was never released).
    [[nodiscard]] int exec_error();

private:
    pid_t pid_ = -1;
    bool released_ = false;
    UniqueFd go_;          // the write end of the pipe the child waits on
    UniqueFd exec_errno_;  // the read end of the pipe a failed exec writes its errno to
};

}  // namespace archpmu
