// SPDX-License-Identifier: MIT
#include "child.hpp"

#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>

#include "archpmu/error.hpp"

namespace archpmu::tool {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;

void on_interrupt(int /*sig*/)
{
    g_interrupted = 1;
}

constexpr int kThreadPollMs = 50;

int pidfd_open(pid_t pid)
{
    return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

bool gone(pid_t id)
{
    return ::kill(id, 0) != 0 && errno == ESRCH;
}

}  // namespace

void say_cannot_run(const char* tool, const std::string& command, int err)
{
    std::cerr << "archpmu " << tool << ": cannot run '" << command << "': " << std::strerror(err)
              << '\n';
}

int exit_status(pid_t child, int status)
{
    if (child > 0) {
        if (WIFEXITED(status))
            return WEXITSTATUS(status);
        if (WIFSIGNALED(status))
            return 128 + WTERMSIG(status);
    }
    return 0;
}

void catch_interrupt()
{
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;  // no SA_RESTART: poll() returns EINTR
    ::sigaction(SIGINT, &sa, nullptr);
}

bool interrupted()
{
    return g_interrupted != 0;
}

int exit_by_interrupt(int status)
{
    if (!interrupted())
        return status;
    std::cout.flush();
    std::cerr.flush();
    (void)std::signal(SIGINT, SIG_DFL);
    (void)std::raise(SIGINT);
    return 128 + SIGINT;  // SIGINT blocked or ignored by whoever started us
}

TaskWatch::TaskWatch(pid_t child, const std::vector<pid_t>& pids, const std::vector<pid_t>& tids)
{
    std::vector<pid_t> processes = pids;
    if (child > 0)
        processes = {child};  // with a command, -p and -t do not end the count (perf)
    else
        polled_ = tids;
    watching_ = !processes.empty() || !polled_.empty();
    for (const pid_t pid : processes) {
        UniqueFd fd(pidfd_open(pid));
        if (fd.valid())
            pidfds_.push_back(std::move(fd));
        else if (errno != ESRCH)
            polled_.push_back(pid);  // a kernel before 5.3
    }
}

bool TaskWatch::done() const noexcept
{
    return watching_ && pidfds_.empty() && polled_.empty();
}

bool TaskWatch::wait_until(Clock::time_point until)
{
    const auto now = Clock::now();
    if (done() || now >= until)
        return done();
    auto left = std::chrono::ceil<std::chrono::milliseconds>(until - now).count();
    left = std::min<decltype(left)>(left, polled_.empty() ? 1000 * 3600 : kThreadPollMs);
    std::vector<pollfd> pfds;
    pfds.reserve(pidfds_.size());
    for (const auto& fd : pidfds_)
        pfds.push_back({fd.get(), POLLIN, 0});
    if (::poll(pfds.data(), pfds.size(), static_cast<int>(left)) < 0 && errno != EINTR)
        throw Error(errno, "poll");
    for (std::size_t i = pfds.size(); i-- > 0;)
        if (pfds[i].revents != 0)
            pidfds_.erase(pidfds_.begin() + static_cast<std::ptrdiff_t>(i));
    polled_.erase(std::remove_if(polled_.begin(), polled_.end(), gone), polled_.end());
    return done();
}

}  // namespace archpmu::tool
