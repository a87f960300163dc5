// SPDX-License-Identifier: MIT
#include "child.hpp"

#include <sys/wait.h>
#include <unistd.h>

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

}  // namespace

pid_t spawn(const std::vector<std::string>& command, const char* tool)
{
    std::vector<char*> argv;
    argv.reserve(command.size() + 1);
    for (const auto& a : command)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0)
        throw Error(errno, "fork");
    if (pid == 0) {
        (void)std::signal(SIGINT, SIG_DFL);
        ::execvp(argv[0], argv.data());
        std::cerr << "archpmu " << tool << ": cannot run '" << command[0]
                  << "': " << std::strerror(errno) << '\n';
        ::_exit(127);
    }
    return pid;
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
    sa.sa_handler = on_interrupt;
    ::sigaction(SIGINT, &sa, nullptr);
}

bool interrupted()
{
    return g_interrupted != 0;
}

}  // namespace archpmu::tool
