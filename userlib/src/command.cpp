// SPDX-License-Identifier: MIT
#include "archpmu/command.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "archpmu/error.hpp"

namespace archpmu {
namespace {

// In the child, between fork() and exec(): only async-signal-safe calls. The
// errno pipe's write end is close-on-exec: a successful exec closes it unread.
[[noreturn]] void run_child(int wait_fd, int errno_fd, char* const* argv)
{
    (void)std::signal(SIGINT, SIG_DFL);
    char go = 0;
    ssize_t n = 0;
    do
        n = ::read(wait_fd, &go, 1);
    while (n < 0 && errno == EINTR);
    if (n != 1)
        ::_exit(127);  // the parent gave up before release()
    ::execvp(argv[0], argv);
    const int err = errno;
    (void)!::write(errno_fd, &err, sizeof(err));
    ::_exit(127);
}

}  // namespace

PendingCommand::PendingCommand(const std::vector<std::string>& argv)
{
    if (argv.empty())
        throw Error(EINVAL, "no command to run");
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const auto& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
        throw Error(errno, "pipe2");
    UniqueFd wait_end(fds[0]);
    go_ = UniqueFd(fds[1]);
    // Non-blocking: exec_error() reads it after the child is gone, and must never wait.
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0)
        throw Error(errno, "pipe2");
    exec_errno_ = UniqueFd(fds[0]);
    UniqueFd errno_end(fds[1]);
    pid_ = ::fork();
    if (pid_ < 0)
        throw Error(errno, "fork");
    if (pid_ == 0) {
        go_.reset();
        exec_errno_.reset();
        run_child(wait_end.get(), errno_end.get(), args.data());
    }
}

PendingCommand::PendingCommand(PendingCommand&& other) noexcept
    : pid_(other.pid_),
      released_(other.released_),
      go_(std::move(other.go_)),
      exec_errno_(std::move(other.exec_errno_))
{
    other.pid_ = -1;
}

void PendingCommand::release()
{
    if (released_ || pid_ <= 0)
        return;
    const char go = 1;
    ssize_t n = 0;
    // A child already gone (a Ctrl-C reached it) is an error here, not a SIGPIPE that
    // kills the caller: the signal is blocked for the write and taken back if raised.
    sigset_t pipe_set;
    sigset_t old_set;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
    do
        n = ::write(go_.get(), &go, 1);
    while (n < 0 && errno == EINTR);
    const int err = n == 1 ? 0 : (errno ? errno : EIO);
    if (err == EPIPE) {
        const timespec none{};
        ::sigtimedwait(&pipe_set, nullptr, &none);
    }
    ::pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
    go_.reset();
    if (err)
        throw Error(err, "starting the command");
    released_ = true;
}

int PendingCommand::exec_error()
{
    if (!released_ || !exec_errno_.valid())
        return 0;
    int err = 0;
    ssize_t n = 0;
    do
        n = ::read(exec_errno_.get(), &err, sizeof(err));
    while (n < 0 && errno == EINTR);
    exec_errno_.reset();
    return n == static_cast<ssize_t>(sizeof(err)) ? err : 0;
}

PendingCommand::~PendingCommand()
{
    if (pid_ <= 0 || released_)
        return;
    go_.reset();  // the child reads end of file and exits
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
}

}  // namespace archpmu
