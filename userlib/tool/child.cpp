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
#include <ctime>
#include <iostream>

#include "archpmu/error.hpp"

namespace archpmu::tool {

std::vector<EventSpec> user_mode_named(const std::vector<EventSpec>& events)
{
    std::vector<EventSpec> out = user_mode_only(events);
    for (std::size_t i = 0; i < out.size(); ++i) {
        std::string& name = out[i].name;
        if (out[i].config == events[i].config)
            continue;
        const std::size_t pmu_end = name.rfind('/');
        const bool modifiers =
            name.find(':', pmu_end == std::string::npos ? 0 : pmu_end) != std::string::npos;
        name += name.back() == '/' || modifiers ? "u" : ":u";
    }
    return out;
}

namespace {

volatile std::sig_atomic_t g_interrupted = 0;
volatile std::sig_atomic_t g_terminated = 0;

void on_signal(int sig)
{
    if (sig == SIGTERM)
        g_terminated = 1;
    else
        g_interrupted = 1;
}

// From now on `sig` only sets its flag. No SA_RESTART: poll() and the TaskWatch's
// sleep return EINTR at once.
void catch_signal(int sig)
{
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    ::sigaction(sig, &sa, nullptr);
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
    catch_signal(SIGINT);
}

bool interrupted()
{
    return g_interrupted != 0;
}

void catch_termination()
{
    catch_signal(SIGTERM);
}

bool terminated()
{
    return g_terminated != 0;
}

int exit_by_interrupt(int status)
{
    const int sig = terminated() ? SIGTERM : interrupted() ? SIGINT : 0;
    if (sig == 0)
        return status;
    std::cout.flush();
    std::cerr.flush();
    (void)std::signal(sig, SIG_DFL);
    (void)std::raise(sig);
    return 128 + sig;  // the signal blocked or ignored by whoever started us
}

pid_t release(std::optional<PendingCommand>& pending)
{
    if (!pending || interrupted())
        return -1;
    try {
        pending->release();
    } catch (const Error&) {
        if (interrupted())
            return -1;
        throw;
    }
    return pending->pid();
}

ChildGuard::~ChildGuard()
{
    (void)end();
}

int ChildGuard::end() noexcept
{
    if (pid_ > 0)
        (void)::kill(pid_, SIGTERM);
    return reap();
}

int ChildGuard::reap(struct rusage* usage) noexcept
{
    int status = 0;
    if (pid_ <= 0)
        return 0;
    while (::wait4(pid_, &status, 0, usage) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    return status;
}

TaskWatch::TaskWatch(pid_t child, const std::vector<pid_t>& pids, const std::vector<pid_t>& tids)
{
    if (child > 0) {
        // With a command, -p and -t do not end the count (perf).
        watching_ = true;
        command_ = true;
        UniqueFd fd(pidfd_open(child));
        if (fd.valid())
            pidfds_.push_back(std::move(fd));
        else
            child_ = child;  // no pidfd (seccomp, EMFILE): waitid() without reaping
        return;
    }
    polled_ = tids;  // no pidfd for a thread before Linux 6.9
    watching_ = !pids.empty() || !tids.empty();
    for (const pid_t pid : pids) {
        UniqueFd fd(pidfd_open(pid));
        if (fd.valid())
            pidfds_.push_back(std::move(fd));
        else if (errno != ESRCH)
            polled_.push_back(pid);  // ENOSYS, EPERM, EMFILE: looked at every 50 ms
    }
}

bool TaskWatch::done() const noexcept
{
    return watching_ && pidfds_.empty() && polled_.empty() && child_ <= 0;
}

bool TaskWatch::wait_until(Clock::time_point until, std::vector<int>* also)
{
    // SIGINT is blocked from the check to the sleep, which unblocks it: a Ctrl-C
    // in between still ends the sleep at once.
    sigset_t block;
    sigset_t old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    ::pthread_sigmask(SIG_BLOCK, &block, &old);
    const auto now = Clock::now();
    // A Ctrl-C ends the wait for tasks or time; a command gets it too, and is waited for.
    if (!done() && !(interrupted() && !command_) && now < until) {
        auto left = std::chrono::ceil<std::chrono::nanoseconds>(until - now);
        const bool looking = !polled_.empty() || child_ > 0;
        if (looking)
            left =
                std::min<std::chrono::nanoseconds>(left, std::chrono::milliseconds(kThreadPollMs));
        left = std::min<std::chrono::nanoseconds>(left, std::chrono::hours(1));
        const timespec timeout{static_cast<time_t>(left.count() / 1000000000),
                               static_cast<long>(left.count() % 1000000000)};
        std::vector<pollfd> pfds;
        pfds.reserve(pidfds_.size() + (also ? also->size() : 0));
        for (const auto& fd : pidfds_)
            pfds.push_back({fd.get(), POLLIN, 0});
        if (also)
            for (const int fd : *also)
                pfds.push_back({fd, POLLIN, 0});
        const int n = ::ppoll(pfds.data(), pfds.size(), &timeout, &old);
        const int err = errno;
        if (n < 0 && err != EINTR) {
            ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
            throw Error(err, "ppoll");
        }
        // Else poll() would return at once from now on.
        for (std::size_t i = pfds.size(); also && i-- > pidfds_.size();)
            if ((pfds[i].revents & (POLLHUP | POLLERR | POLLNVAL)) != 0)
                also->erase(also->begin() + static_cast<std::ptrdiff_t>(i - pidfds_.size()));
        for (std::size_t i = pidfds_.size(); i-- > 0;)
            if (pfds[i].revents != 0)
                pidfds_.erase(pidfds_.begin() + static_cast<std::ptrdiff_t>(i));
        polled_.erase(std::remove_if(polled_.begin(), polled_.end(), gone), polled_.end());
        if (child_ > 0) {
            siginfo_t info{};
            if (::waitid(P_PID, static_cast<id_t>(child_), &info, WEXITED | WNOHANG | WNOWAIT) ==
                    0 &&
                info.si_pid == child_)
                child_ = -1;
        }
    }
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return done();
}

}  // namespace archpmu::tool
