// SPDX-License-Identifier: MIT
#include "stat.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <iostream>
#include <optional>

#include "archpmu.h"
#include "archpmu/command.hpp"
#include "archpmu/device.hpp"
#include "archpmu/error.hpp"
#include "archpmu/pmu.hpp"
#include "archpmu/session.hpp"
#include "archpmu/unique_fd.hpp"
#include "child.hpp"
#include "stat_detailed.hpp"
#include "stat_format.hpp"
#include "stat_report.hpp"
#include "stat_topdown.hpp"

namespace archpmu::tool {
namespace {

using Clock = std::chrono::steady_clock;

// Where the report goes: stderr, as perf, or -o FILE after perf's "# started on"
// line. The file is close-on-exec: the command does not inherit it.
class ReportSink {
public:
    explicit ReportSink(const StatOptions& opts)
    {
        if (opts.output.empty())
            return;
        const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (opts.append ? O_APPEND : O_TRUNC);
        file_ = UniqueFd(::open(opts.output.c_str(), flags, 0666));
        if (!file_.valid())
            throw Error(errno, "-o/--output: cannot open '" + opts.output + "'");
        fd_ = file_.get();
        path_ = opts.output;
        if (opts.style != StatFormat::Style::json) {
            const std::time_t now = std::time(nullptr);
            char when[64] = "";
            (void)std::strftime(when, sizeof(when), "%a %b %e %H:%M:%S %Y", std::localtime(&now));
            write(std::string("# started on ") + when + "\n\n");
        }
    }

    void write(const std::string& text)
    {
        std::size_t done = 0;
        while (done < text.size()) {
            const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                throw Error(n < 0 ? errno : EIO, "writing the counts to " + path_);
            done += static_cast<std::size_t>(n);
        }
    }

private:
    UniqueFd file_;
    int fd_ = STDERR_FILENO;
    std::string path_ = "stderr";
};

std::uint64_t ns_since(Clock::time_point t)
{
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count());
}

std::uint64_t ns_of(const struct timeval& t)
{
    return static_cast<std::uint64_t>(t.tv_sec) * 1000000000ULL +
           static_cast<std::uint64_t>(t.tv_usec) * 1000ULL;
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
    int status = 0;           // the tool's exit status: the command's, or 0
    bool cannot_run = false;  // the command could not be run: no counts to show
    StatTotals totals;        // the counts of the whole run
};

// What every run shares, asked of the device once: the report's form (on a hybrid
// part, each event per core type as perf's cpu_core/NAME/), and whether the COMMAND's
// session can start at its exec (enable-on-exec); else it starts at the release, a
// few hundred instructions of the held child before its exec.
struct StatPlan {
    StatFormat format;
    bool on_exec = false;
    std::vector<EventSpec> events;  // the events opened
    // -d: the rows of the report, in order, and which of them are opened (the
    // others are perf's <not supported>); empty: every row is an opened event.
    std::vector<EventSpec> rows;
    std::vector<bool> opened;
};

// The CPUs counted: -C's, else every one (tasks run anywhere).
std::vector<CpuInfo> counted_cpus(const StatOptions& opts, const Device& device)
{
    auto cpus = device.all_cpu_info();
    if (opts.system_wide && !opts.cpus.empty())
        cpus.erase(std::remove_if(cpus.begin(), cpus.end(),
                                  [&](const CpuInfo& c) {
                                      return std::find(opts.cpus.begin(), opts.cpus.end(), c.cpu) ==
                                             opts.cpus.end();
                                  }),
                   cpus.end());
    return cpus;
}

// The report's rows, each opened or shown <not supported> (why, on stderr, once per
// reason): -e's events, their cache events encoded for the CPUs, then -d's.
void set_rows(StatPlan& plan, const std::vector<DetailedEvent>& rows)
{
    plan.events.clear();
    std::vector<std::pair<std::string, std::string>> why;  // reason, names
    for (const auto& d : rows) {
        if (d.spec) {
            plan.events.push_back(*d.spec);
            plan.rows.push_back(*d.spec);
            plan.opened.push_back(true);
            continue;
        }
        EventSpec row;
        row.name = d.name;
        row.flags = d.flags;
        plan.rows.push_back(row);
        plan.opened.push_back(false);
        const auto type = event_core_type(d.flags);
        const std::string shown = type ? name_on_core_type(d.name, to_string(*type)) : d.name;
        auto same =
            std::find_if(why.begin(), why.end(), [&](const auto& w) { return w.first == d.why; });
        if (same == why.end())
            why.emplace_back(d.why, shown);
        else
            same->second += ", " + shown;
    }
    for (const auto& [reason, names] : why)
        std::cerr << "archpmu stat: not supported: " << names << ": " << reason << "\n";
}

StatPlan plan_of(const StatOptions& opts)
{
    const Device device(opts.device);
    StatPlan plan;
    StatFormat& fmt = plan.format;
    fmt.style = opts.style;
    fmt.per_cpu = opts.per_cpu;
    fmt.separator = opts.separator;
    fmt.target = target_label(opts);
    fmt.task = !opts.system_wide;
    for (const auto& cpu : device.all_cpu_info())
        if (cpu.hybrid())
            fmt.core_types[cpu.cpu] = std::string(to_string(cpu.core_type));
    const Info info = device.info();
    plan.on_exec = !opts.system_wide && !opts.command.empty() && opts.pids.empty() &&
                   opts.tids.empty() && (info.capabilities & ARCHPMU_CAP_ENABLE_ON_EXEC) != 0;
    plan.events = opts.events;
    if (opts.topdown_level) {
        auto cpus = counted_cpus(opts, device);
        // An older module does not drive PERF_METRICS: the architectural events then.
        if (!(info.capabilities & ARCHPMU_CAP_PERF_METRICS))
            for (auto& c : cpus)
                c.pmu_flags &= ~ARCHPMU_PMU_PERF_METRICS;
        const unsigned highest = topdown_max_level(cpus);
        if (opts.topdown_level != kTopdownHighest && opts.topdown_level > highest)
            throw Error(EINVAL, "top-down level " + std::to_string(opts.topdown_level) +
                                    " (--td-level, -M TopdownL" +
                                    std::to_string(opts.topdown_level) +
                                    "): the max level here is " + std::to_string(highest) +
                                    " (level 2 needs PERF_METRICS of Sapphire Rapids, Alder "
                                    "Lake's P-cores or later)");
        fmt.topdown_level = std::min(opts.topdown_level, highest);
        plan.events = topdown_events(cpus, fmt.topdown_level);
    }
    const bool by_core_type = (info.capabilities & ARCHPMU_CAP_CORE_TYPE) != 0;
    const bool cache_events =
        std::any_of(plan.events.begin(), plan.events.end(),
                    [](const EventSpec& e) { return !e.cache_event.empty(); });
    if (cache_events || opts.detailed) {
        const auto cpus = counted_cpus(opts, device);
        auto rows = with_cache_events(plan.events, cpus, by_core_type);
        if (opts.detailed) {
            auto more = detailed_events(opts.detailed, cpus, by_core_type);
            rows.insert(rows.end(), more.begin(), more.end());
        }
        set_rows(plan, rows);
        if (plan.events.empty())
            throw Error(EOPNOTSUPP,
                        "none of the events can count here (each is <not supported>, as "
                        "above): nothing to count");
    }
    if (info.privilege == Privilege::own_user && !opts.system_wide) {
        plan.events = user_mode_named(plan.events);
        // The rows' names as the events' (a <not supported> row has no mode to add).
        for (std::size_t r = 0, e = 0; r < plan.rows.size(); ++r)
            if (plan.opened[r])
                plan.rows[r] = plan.events.at(e++);
    }
    return plan;
}

// One run: open the sessions, run the COMMAND (or wait), read; print the totals unless -r.
RunOutcome run_once(const StatOptions& opts, const StatPlan& plan, ReportSink& sink)
{
    std::vector<Session> sessions;
    std::optional<PendingCommand> pending;
    if (!opts.command.empty())
        pending.emplace(opts.command);
    // As perf: events that do not fit at once take turns, and are scaled.
    SessionOptions so;
    so.device = opts.device;
    so.multiplex = true;
    const auto on_task = [&](const TaskScope& task) {
        SessionOptions o = so;
        o.task = task;
        sessions.emplace_back(plan.events, o);
    };
    if (opts.system_wide) {
        so.cpus = opts.cpus;
        sessions.emplace_back(plan.events, so);
    } else {
        // The command is counted from its exec on, with everything it starts;
        // with -p or -t it only says how long to count them, as in perf.
        if (pending && opts.pids.empty() && opts.tids.empty())
            on_task(TaskScope{TaskScope::Kind::process, pending->pid(), true, plan.on_exec});
        for (const pid_t pid : opts.pids)
            on_task(TaskScope{TaskScope::Kind::process, pid, true});
        for (const pid_t tid : opts.tids)
            on_task(TaskScope{TaskScope::Kind::thread, tid, true});
    }
    const StatFormat& fmt = plan.format;

    catch_interrupt();

    const auto start = Clock::now();
    for (auto& session : sessions)
        session.start();
    const pid_t child = release(pending);
    ChildGuard guard;
    guard.watch(child);
    TaskWatch watch(child, opts.pids, opts.tids);
    Snapshot last = read_all(sessions);
    auto last_print = start;
    const auto interval = std::chrono::milliseconds(opts.interval_ms);
    auto next_interval = start + interval;
    unsigned intervals = 0;
    // parse_duration keeps it to a year: no overflow.
    const auto deadline = opts.duration
                              ? start + std::chrono::duration_cast<Clock::duration>(*opts.duration)
                              : Clock::time_point::max();
    // One interval's counts, from the last print to now; perf's header every 25.
    const auto print_interval = [&](const Snapshot& now) {
        const auto at = Clock::now();
        StatFormat f = fmt;
        f.interval_ns = static_cast<std::int64_t>(ns_since(start));
        f.interval_header = intervals++ % 25 == 0;
        const auto length = static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(at - last_print).count());
        sink.write(stat_report(with_unopened_rows(stat_totals(sessions.front(), &last, now, length),
                                                  plan.rows, plan.opened),
                               f));
        last = now;
        last_print = at;
    };

    for (;;) {
        // Ctrl-C ends a count without a command; a command gets it too, and ends.
        if (child <= 0 && interrupted())
            break;
        const auto until = opts.interval_ms ? std::min(next_interval, deadline) : deadline;
        if (watch.wait_until(until) || Clock::now() >= deadline)
            break;
        if (opts.interval_ms && Clock::now() >= next_interval) {
            print_interval(read_all(sessions));
            // After a stall (Ctrl-Z, a paused VM) the next tick is the next one due,
            // not a burst of the ones missed.
            while (next_interval <= Clock::now())
                next_interval += interval;
        }
    }
    struct rusage usage {};
    const bool reaped = guard.watching();
    const int status = guard.reap(&usage);
    for (auto& session : sessions)
        session.stop();
    const std::uint64_t elapsed = ns_since(start);
    const Snapshot final_counts = read_all(sessions);
    RunOutcome outcome;
    outcome.status = exit_status(child, status);
    if (const int err = pending ? pending->exec_error() : 0) {
        say_cannot_run("stat", opts.command.front(), err);
        outcome.status = kCannotRunStatus;
        outcome.cannot_run = true;
        return outcome;
    }
    // The last, partial interval, as perf prints it.
    if (opts.interval_ms && Clock::now() > last_print)
        print_interval(final_counts);
    outcome.totals = with_unopened_rows(
        stat_totals(sessions.front(), nullptr, final_counts, elapsed), plan.rows, plan.opened);
    if (reaped && !opts.system_wide && opts.pids.empty() && opts.tids.empty())
        outcome.totals.command_times =
            StatTotals::CpuTimes{ns_of(usage.ru_utime), ns_of(usage.ru_stime)};
    if (!opts.interval_ms && opts.repeat <= 1)
        sink.write(stat_report(outcome.totals, fmt));
    warn_not_counted(outcome.totals);
    if (std::any_of(final_counts.values.begin(), final_counts.values.end(),
                    [](const CountValue& v) { return v.incomplete; }))
        std::cerr << "archpmu stat: children were created faster than the module could follow "
                     "them; some are not counted\n";
    return outcome;
}

}  // namespace

// -r N: the runs one after another (until Ctrl-C), then their mean, as perf prints it;
// the exit status is the last run's.
int run_stat(const StatOptions& opts)
{
    ReportSink sink(opts);
    const StatPlan plan = plan_of(opts);
    if (opts.repeat <= 1)
        return exit_by_interrupt(run_once(opts, plan, sink).status);
    std::vector<StatTotals> runs;
    int status = 0;
    for (unsigned i = 0; i < opts.repeat && !interrupted(); ++i) {
        RunOutcome one = run_once(opts, plan, sink);
        if (one.cannot_run)
            return exit_by_interrupt(one.status);
        status = one.status;
        runs.push_back(std::move(one.totals));
    }
    if (!runs.empty())
        sink.write(stat_report(stat_mean(runs), plan.format));
    return exit_by_interrupt(status);
}

}  // namespace archpmu::tool
