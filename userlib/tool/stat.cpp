// SPDX-License-Identifier: MIT
#include "stat.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <iostream>
#include <thread>

#include "archpmu/error.hpp"
#include "archpmu/pmu.hpp"
#include "archpmu/session.hpp"
#include "archpmu/stat_report.hpp"
#include "child.hpp"

namespace archpmu::tool {
namespace {

using Clock = std::chrono::steady_clock;

void print(const StatTotals& totals, const StatOptions& opts, const StatFormat& fmt)
{
    if (opts.json)
        std::cout << stat_json(totals, opts.interval_ms ? -1 : 2);
    else if (!opts.separator.empty())
        std::cout << stat_csv(totals, fmt);
    else
        std::cout << stat_human(totals, fmt);
    std::cout.flush();
}

std::uint64_t ns_since(Clock::time_point t)
{
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count());
}

}  // namespace

int run_stat(const StatOptions& opts)
{
    Session session(opts.device, opts.events, opts.cpus);
    StatFormat fmt;
    fmt.per_cpu = opts.per_cpu;
    fmt.separator = opts.separator;
    for (const auto& a : opts.command)
        fmt.target += (fmt.target.empty() ? "" : " ") + a;

    catch_interrupt();

    const auto start = Clock::now();
    session.start();
    pid_t child = opts.command.empty() ? -1 : spawn(opts.command, "stat");
    int status = 0;
    Snapshot last = session.read();
    auto next_interval = start + std::chrono::milliseconds(opts.interval_ms);
    // parse_duration keeps it to a year: no overflow.
    const auto deadline = opts.duration
                              ? start + std::chrono::duration_cast<Clock::duration>(*opts.duration)
                              : Clock::time_point::max();

    for (;;) {
        if (child > 0) {
            const pid_t done = ::waitpid(child, &status, WNOHANG);
            if (done == child)
                break;
        } else if (interrupted() || Clock::now() >= deadline) {
            break;
        }
        if (opts.interval_ms && Clock::now() >= next_interval) {
            const Snapshot now = session.read();
            StatFormat f = fmt;
            f.interval_s = static_cast<double>(ns_since(start)) / 1e9;
            print(stat_totals(session, &last, now, opts.interval_ms * 1000000ULL), opts, f);
            last = now;
            next_interval += std::chrono::milliseconds(opts.interval_ms);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    session.stop();
    const std::uint64_t elapsed = ns_since(start);
    if (!opts.interval_ms)
        print(stat_totals(session, nullptr, session.read(), elapsed), opts, fmt);

    return exit_status(child, status);
}

}  // namespace archpmu::tool
