// SPDX-License-Identifier: MIT
// stat's options (args_sub.hpp).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <string>
#include <utility>

#include "archpmu/pmu.hpp"
#include "args.hpp"
#include "args_sub.hpp"

namespace archpmu::tool {
namespace {

// -M's metric groups that archpmu computes: perf's top-down groups, by level. perf's
// others come from its per-model JSON tables.
unsigned topdown_group_level(const std::string& name)
{
    // perf matches metric group names without regard to case.
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    if (lower == "topdownl1")
        return 1;
    if (lower == "topdownl2")
        return 2;
    refuse("-M/--metrics", "'" + name +
                               "' is not a metric group archpmu computes: give TopdownL1 or "
                               "TopdownL2 (perf's others come from its per-model tables)");
}

// --td-level N as perf's unsigned option reads it ("00" is 0).
unsigned parse_td_level(const std::string& text)
{
    const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
    if (!digits)
        refuse("--td-level", "'" + text + "': give 0 (the highest level there is), 1 or 2");
    const std::size_t first = std::min(text.find_first_not_of('0'), text.size() - 1);
    const std::string value = text.substr(first);
    if (value.size() > 1 || value[0] > '2')
        refuse("--td-level", "'" + text + "': the max level is 2");
    return static_cast<unsigned>(value[0] - '0');
}

// --topdown's level from --td-level and -M: kTopdownHighest as perf's default.
unsigned topdown_level(const StatArgs& a)
{
    unsigned level = kTopdownHighest;
    if (a.td_level_opt->count()) {
        const unsigned n = parse_td_level(a.td_level);
        level = n ? n : kTopdownHighest;
    }
    if (!a.metric_groups.empty()) {
        unsigned deepest = 0;
        for (const auto& name : a.metric_groups)
            deepest = std::max(deepest, topdown_group_level(name));
        if (a.td_level_opt->count())
            misuse("-M/--metrics and --td-level exclude each other: -M TopdownL" +
                   std::to_string(deepest) + " is the level");
        level = deepest;
    }
    return level;
}

}  // namespace

CLI::App* add_stat(CLI::App& app, StatArgs& a, StatOptions& st)
{
    auto* stat = app.add_subcommand(
        "stat",
        "count events while COMMAND and its children run (stat [options] [--] COMMAND ARGS), in "
        "processes (-p) or threads (-t), or system-wide on CPUs (-a, -C)");
    stat->add_option("-e,--event", a.events,
                     "events, comma-separated (default: cycles, instructions, ref-cycles, "
                     "branches, branch-misses); repeatable")
        ->type_name("EVENTS")
        ->allow_extra_args(false);
    a.all_opt = stat->add_flag("-a,--all-cpus", a.all_cpus,
                               "system-wide on every online CPU (the default without a "
                               "COMMAND, -p or -t)");
    a.cpu_opt = stat->add_option("-C,--cpu", a.cpus,
                                 "system-wide on these CPUs only (e.g. 0-3,6; CPUs 0-" +
                                     std::to_string(kMaxCpuNumber) + ")")
                    ->type_name("LIST")
                    ->excludes(a.all_opt);
    a.pid_opt = stat->add_option("-p,--pid", a.pids,
                                 "count these processes (every thread, and what they "
                                 "start from now on), e.g. 1234,5678")
                    ->type_name("PIDS")
                    ->excludes(a.all_opt)
                    ->excludes(a.cpu_opt);
    a.tid_opt = stat->add_option("-t,--tid", a.tids,
                                 "count these threads (and what they start from now on)")
                    ->type_name("TIDS")
                    ->excludes(a.all_opt)
                    ->excludes(a.cpu_opt);
    a.per_cpu_opt = stat->add_flag("-A,--per-cpu", st.per_cpu,
                                   "a count per CPU instead of the sum (system-wide only)");
    a.interval_opt =
        stat->add_option("-I,--interval-print", a.interval,
                         "print every MS milliseconds (" + std::to_string(kMinIntervalMs) + "-" +
                             std::to_string(kMaxIntervalMs) + ")")
            ->type_name("MS");
    auto* json_lines_opt =
        stat->add_flag("-j,--json-output", a.json_lines, "perf's JSON: an object per line");
    auto* json_opt =
        stat->add_flag("--json", a.json_doc, "archpmu's JSON document (per CPU counts and times)")
            ->excludes(json_lines_opt);
    a.separator_opt = stat->add_option("-x,--field-separator", a.separator,
                                       "perf's CSV with this separator (\\t: a tab)")
                          ->type_name("SEP")
                          ->excludes(json_opt)
                          ->excludes(json_lines_opt);
    a.output_opt =
        stat->add_option("-o,--output", st.output, "print the counts to FILE, not to stderr")
            ->type_name("FILE");
    a.append_opt = stat->add_flag("--append", st.append, "append to the -o FILE");
    a.repeat_opt = stat->add_option("-r,--repeat", a.repeat,
                                    "run COMMAND N times (1-" + std::to_string(kMaxRepeat) +
                                        ") and print each count's mean and spread, as perf does")
                       ->type_name("N");
    stat->add_flag("--topdown", a.topdown,
                   "the top-down metrics as perf stat --topdown (retiring, bad speculation, "
                   "frontend and backend bound; level 2 where there is one), from PERF_METRICS "
                   "or the architectural top-down events");
    a.td_level_opt =
        stat->add_option("--td-level", a.td_level,
                         "the top-down level: 1, or 2 where PERF_METRICS has it (0, as in perf "
                         "and the default: the highest there is)")
            ->type_name("N");
    stat->add_option("-M,--metrics", a.metric_groups,
                     "perf's metric groups TopdownL1 and TopdownL2, comma-separated: "
                     "--topdown at that level")
        ->type_name("GROUPS")
        ->delimiter(',')
        ->allow_extra_args(false);
    stat->add_flag("-d,--detailed", a.detailed,
                   "add perf's detailed events: L1 data cache and LLC; -dd: also L1 "
                   "instruction cache and TLBs; -ddd: also L1 data prefetches");
    a.duration_opt = stat->add_option("--duration", a.duration,
                                      "count for SECONDS, without a COMMAND (more than 0, "
                                      "at most " +
                                          std::to_string(kMaxDurationS) + ")")
                         ->type_name("SECONDS");
    return stat;
}

void check_stat(const StatArgs& a, StatOptions& st, std::vector<std::string> command)
{
    const bool topdown = a.topdown || !a.metric_groups.empty();
    if (a.detailed && topdown)
        misuse("--topdown (or -M) and -d/--detailed exclude each other");
    st.detailed = a.detailed;
    if (a.td_level_opt->count() && !topdown)
        misuse("--td-level sets the level of --topdown: add it");
    if (topdown) {
        if (!a.events.empty())
            misuse("--topdown (or -M) and -e/--event exclude each other");
        if (a.per_cpu_opt->count())
            misuse("--topdown (or -M) and -A/--per-cpu exclude each other");
        st.topdown_level = topdown_level(a);
    }
    st.events = parse_events(a.events);
    if (a.cpu_opt->count())
        st.cpus = parse_cpus(a.cpus);
    if (a.pid_opt->count())
        st.pids = parse_ids("-p/--pid", a.pids);
    if (a.tid_opt->count())
        st.tids = parse_ids("-t/--tid", a.tids);
    st.system_wide = a.all_opt->count() || a.cpu_opt->count() ||
                     (command.empty() && st.pids.empty() && st.tids.empty());
    if (a.per_cpu_opt->count() && !st.system_wide)
        misuse(
            "-A/--per-cpu is for system-wide counting: add -a or -C (a COMMAND, "
            "-p and -t count tasks, on whatever CPU they run)");
    if (a.interval_opt->count())
        st.interval_ms = parse_interval_ms(a.interval);
    if (a.separator_opt->count()) {
        st.separator = parse_separator(a.separator);
        st.style = StatFormat::Style::csv;
    }
    if (a.json_lines)
        st.style = StatFormat::Style::json_lines;
    if (a.json_doc)
        st.style = StatFormat::Style::json;
    if (a.append_opt->count() && !a.output_opt->count())
        misuse("--append appends to the -o/--output FILE: give one");
    if (a.output_opt->count() && st.output.empty())
        refuse("-o/--output", "the file name is empty");
    if (a.duration_opt->count())
        st.duration = parse_duration(a.duration);
    if (command.empty() && !st.duration && !st.interval_ms && st.pids.empty() && st.tids.empty())
        misuse(
            "give a COMMAND, -p PIDS, -t TIDS, --duration SECONDS or -I MS (then "
            "Ctrl-C stops)");
    if (!command.empty() && st.duration)
        misuse("--duration and a COMMAND exclude each other");
    if (a.repeat_opt->count()) {
        st.repeat = static_cast<unsigned>(parse_count("-r/--repeat", a.repeat, kMaxRepeat));
        if (command.empty() || !st.pids.empty() || !st.tids.empty())
            misuse(
                "-r/--repeat runs a COMMAND again and again: give one, "
                "without -p or -t");
        if (st.interval_ms)
            misuse("-r/--repeat and -I/--interval-print exclude each other");
    }
    st.command = std::move(command);
}

}  // namespace archpmu::tool
