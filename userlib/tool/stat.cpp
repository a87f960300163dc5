// SPDX-License-Identifier: MIT
#include "stat.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <iostream>
#include <optional>
#include <thread>

#include "archpmu.h"
#include "archpmu/command.hpp"
#include "archpmu/device.hpp"
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

// The sessions' snapshots as one: the counts of the same event on the same CPU
// added up (the task sessions of -p and -t all have every online CPU).
Snapshot read_all(const std::vector<Session>& sessions)
{
    Snapshot all = sessions.front().read();
    for (std::size_t i = 1; i < sessions.size(); ++i) {
        const Snapshot more = sessions[i].read();
        for (const auto& v : more.values) {
            auto same = std::find_if(all.values.begin(), all.values.end(), [&](const auto& a) {
                return a.cpu == v.cpu && a.event == v.event;
            });
            if (same == all.values.end())
                continue;  // a CPU that came online between the opens
            same->value += v.value;
            same->time_enabled_ns += v.time_enabled_ns;
            same->time_running_ns += v.time_running_ns;
            same->multiplexed = same->multiplexed || v.multiplexed;
            same->crowded_out = same->crowded_out || v.crowded_out;
        }
    }
    return all;
}

std::string join(const std::vector<pid_t>& ids)
{
    std::string out;
    for (const pid_t id : ids)
        out += (out.empty() ? "" : ",") + std::to_string(id);
    return out;
}

// Whether every process and thread of -p and -t has exited.
bool all_gone(const StatOptions& opts)
{
    const auto gone = [](pid_t id) { return ::kill(id, 0) != 0 && errno == ESRCH; };
    return std::all_of(opts.pids.begin(), opts.pids.end(), gone) &&
           std::all_of(opts.tids.begin(), opts.tids.end(), gone);
}

// perf's header: "'COMMAND'", "process id 'PIDS'", "thread id 'TIDS'" or CPUs.
std::string target_label(const StatOptions& opts)
{
    std::string command;
    for (const auto& a : opts.command)
        command += (command.empty() ? "" : " ") + a;
    if (opts.system_wide)
        return command.empty() ? std::string() : "'" + command + "'";
    std::string label;
    if (opts.pids.empty() && opts.tids.empty())
        label = "'" + command + "'";
    if (!opts.pids.empty())
        label += (label.empty() ? "" : ", ") + std::string("process id '") + join(opts.pids) + "'";
    if (!opts.tids.empty())
        label += (label.empty() ? "" : ", ") + std::string("thread id '") + join(opts.tids) + "'";
    return label;
}

// perf's <not counted>, explained: on a CPU where others held every counter an
// event could use, it never got one.
void warn_not_counted(const StatTotals& t)
{
    for (std::size_t e = 0; e < t.events.size() && e < t.crowded_out.size(); ++e)
        if (!t.crowded_out[e].empty())
            std::cerr << "archpmu stat: '" << t.events[e].name << "' was not counted on CPU "
                      << format_cpu_list(t.crowded_out[e])
                      << ": others held the counters it needs ('archpmu who' names them)\n";
}

struct RunOutcome {
    int status = 0;     // the tool's exit status: the command's, or 0
    StatTotals totals;  // the counts of the whole run
};

StatFormat format_of(const StatOptions& opts)
{
    StatFormat fmt;
    fmt.per_cpu = opts.per_cpu;
    fmt.separator = opts.separator;
    fmt.target = target_label(opts);
    fmt.task = !opts.system_wide;
    return fmt;
}

// Whether the COMMAND's session can start at its exec (enable-on-exec); else it starts at
// the release, a few hundred instructions of the held child before its exec.
bool command_starts_on_exec(const StatOptions& opts)
{
    return !opts.system_wide && !opts.command.empty() && opts.pids.empty() && opts.tids.empty() &&
           (Device(opts.device).info().capabilities & ARCHPMU_CAP_ENABLE_ON_EXEC) != 0;
}

// One run: open the sessions, run the COMMAND (or wait), read; print the totals unless -r.
RunOutcome run_once(const StatOptions& opts, bool on_exec)
{
    std::vector<Session> sessions;
    std::optional<PendingCommand> pending;
    // As perf: events that do not fit at once take turns, and are scaled.
    constexpr bool multiplex = true;
    constexpr auto later = Session::Start::later;
    if (opts.system_wide) {
        sessions.emplace_back(opts.device, opts.events, opts.cpus, later, multiplex);
    } else {
        // The command is counted from its exec on, with everything it starts;
        // with -p or -t it only says how long to count them, as in perf.
        if (!opts.command.empty() && opts.pids.empty() && opts.tids.empty()) {
            pending.emplace(opts.command, "archpmu stat");
            sessions.push_back(Session::for_task(
                opts.device, opts.events,
                TaskScope{TaskScope::Kind::process, pending->pid(), true, on_exec}, later,
                multiplex));
        }
        for (const pid_t pid : opts.pids)
            sessions.push_back(Session::for_task(opts.device, opts.events,
                                                 TaskScope{TaskScope::Kind::process, pid, true},
                                                 later, multiplex));
        for (const pid_t tid : opts.tids)
            sessions.push_back(Session::for_task(opts.device, opts.events,
                                                 TaskScope{TaskScope::Kind::thread, tid, true},
                                                 later, multiplex));
    }
    const StatFormat fmt = format_of(opts);

    catch_interrupt();

    const auto start = Clock::now();
    for (auto& session : sessions)
        session.start();
    pid_t child = -1;
    if (pending) {
        child = pending->pid();
        // A Ctrl-C before the release reached the held child too: it exits unreleased.
        if (!interrupted())
            pending->release();
    } else if (!opts.command.empty()) {
        child = spawn(opts.command, "stat");
    }
    const bool follow_tasks = child <= 0 && (!opts.pids.empty() || !opts.tids.empty());
    int status = 0;
    Snapshot last = read_all(sessions);
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
        } else if (interrupted() || Clock::now() >= deadline || (follow_tasks && all_gone(opts))) {
            break;
        }
        if (opts.interval_ms && Clock::now() >= next_interval) {
            const Snapshot now = read_all(sessions);
            StatFormat f = fmt;
            f.interval_s = static_cast<double>(ns_since(start)) / 1e9;
            print(stat_totals(sessions.front(), &last, now, opts.interval_ms * 1000000ULL), opts,
                  f);
            last = now;
            next_interval += std::chrono::milliseconds(opts.interval_ms);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    for (auto& session : sessions)
        session.stop();
    const std::uint64_t elapsed = ns_since(start);
    const Snapshot final_counts = read_all(sessions);
    RunOutcome outcome;
    outcome.totals = stat_totals(sessions.front(), nullptr, final_counts, elapsed);
    if (!opts.interval_ms && opts.repeat <= 1)
        print(outcome.totals, opts, fmt);
    warn_not_counted(outcome.totals);
    if (std::any_of(final_counts.values.begin(), final_counts.values.end(),
                    [](const CountValue& v) { return v.incomplete; }))
        std::cerr << "archpmu stat: children were created faster than the module could follow "
                     "them; some are not counted\n";

    outcome.status = exit_status(child, status);
    return outcome;
}

}  // namespace

// -r N: the runs one after another (until Ctrl-C), then their mean, as perf prints it;
// the exit status is the last run's.
int run_stat(const StatOptions& opts)
{
    const bool on_exec = command_starts_on_exec(opts);
    if (opts.repeat <= 1)
        return run_once(opts, on_exec).status;
    std::vector<StatTotals> runs;
    int status = 0;
    for (unsigned i = 0; i < opts.repeat && !interrupted(); ++i) {
        RunOutcome one = run_once(opts, on_exec);
        status = one.status;
        runs.push_back(std::move(one.totals));
    }
    print(stat_mean(runs), opts, format_of(opts));
    return status;
}

}  // namespace archpmu::tool
