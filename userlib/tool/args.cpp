// SPDX-License-Identifier: MIT
#include "args.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <ostream>
#include <system_error>
#include <utility>

#include "archpmu.h"
#include "archpmu/device.hpp"
#include "archpmu/error.hpp"
#include "archpmu/pmu.hpp"

namespace archpmu::tool {
namespace {

constexpr std::string_view kDefaultEvents = "cycles,instructions,ref-cycles,branches,branch-misses";

[[noreturn]] void refuse(std::string_view option, const std::string& why)
{
    throw Error(EINVAL, std::string(option) + ": " + why);
}

// An archpmu::Error's reason, only its first line (an event's message goes on with a caret).
std::string reason(const Error& e)
{
    return e.reason().substr(0, e.reason().find('\n'));
}

std::string one_line(std::string text)
{
    std::replace(text.begin(), text.end(), '\n', ' ');
    return text;
}

}  // namespace

std::chrono::nanoseconds parse_duration(std::string_view text)
{
    const std::string allowed =
        "; give seconds, more than 0 and at most " + std::to_string(kMaxDurationS) + " (365 days)";
    double seconds = 0;
    const char* const last = text.data() + text.size();
    const auto result = std::from_chars(text.data(), last, seconds);
    if (text.empty() || result.ec == std::errc::invalid_argument || result.ptr != last ||
        std::isnan(seconds))
        refuse("--duration", "'" + std::string(text) + "' is not a number" + allowed);
    // Out of double's range, infinite, not positive or too long.
    if (result.ec != std::errc{} || !(seconds > 0) || seconds > kMaxDurationS)
        refuse("--duration", "'" + std::string(text) + "' is out of range" + allowed);
    return std::chrono::nanoseconds(static_cast<std::int64_t>(std::ceil(seconds * 1e9)));
}

unsigned parse_interval_ms(std::string_view text)
{
    const std::string allowed = "; give milliseconds " + std::to_string(kMinIntervalMs) + "-" +
                                std::to_string(kMaxIntervalMs);
    if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos)
        refuse("-I/--interval-print",
               "'" + std::string(text) + "' is not a whole number" + allowed);
    std::uint64_t ms = 0;
    const auto result = std::from_chars(text.data(), text.data() + text.size(), ms);
    if (result.ec != std::errc{} || ms < kMinIntervalMs || ms > kMaxIntervalMs)
        refuse("-I/--interval-print", "'" + std::string(text) + "' is out of range" + allowed);
    return static_cast<unsigned>(ms);
}

std::string parse_separator(std::string_view text)
{
    const std::string allowed = "; give one or more characters, no line break (\\t: a tab)";
    if (text.empty())
        refuse("-x/--field-separator", "the separator is empty" + allowed);
    if (text.find_first_of("\n\r") != std::string_view::npos)
        refuse("-x/--field-separator", "the separator has a line break" + allowed);
    if (text == "\\t")  // as perf
        return "\t";
    return std::string(text);
}

std::vector<EventSpec> parse_events(const std::vector<std::string>& lists)
{
    std::vector<EventSpec> events;
    try {
        if (lists.empty())
            return parse_event_list(kDefaultEvents);
        for (const auto& list : lists)
            for (auto& e : parse_event_list(list))
                events.push_back(std::move(e));
    } catch (const Error& e) {
        refuse("-e/--event", reason(e));
    }
    return events;
}

std::vector<std::uint32_t> parse_cpus(std::string_view text)
{
    try {
        return parse_cpu_list(text);
    } catch (const Error& e) {
        refuse("-C/--cpu", reason(e));
    }
}

std::vector<pid_t> parse_ids(std::string_view option, std::string_view text)
{
    std::vector<pid_t> ids;
    std::size_t pos = 0;
    for (;;) {
        const std::size_t comma = text.find(',', pos);
        const std::string_view one = text.substr(
            pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
        // PID_MAX_LIMIT is 4,194,304.
        ids.push_back(static_cast<pid_t>(parse_count(option, one, 4194304)));
        if (comma == std::string_view::npos)
            return ids;
        pos = comma + 1;
    }
}

std::uint64_t parse_count(std::string_view option, std::string_view text, std::uint64_t max)
{
    const std::string allowed = "; give a whole number 1-" + std::to_string(max);
    if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos)
        refuse(option, "'" + std::string(text) + "' is not a whole number" + allowed);
    std::uint64_t n = 0;
    const auto result = std::from_chars(text.data(), text.data() + text.size(), n);
    if (result.ec != std::errc{} || n < 1 || n > max)
        refuse(option, "'" + std::string(text) + "' is out of range" + allowed);
    return n;
}

std::uint32_t parse_mmap_pages(std::string_view text)
{
    const std::uint64_t n = parse_count("-m/--mmap-pages", text, ARCHPMU_RING_MAX_PAGES);
    if ((n & (n - 1)) != 0)
        refuse("-m/--mmap-pages", "'" + std::string(text) + "' is not a power of 2");
    return static_cast<std::uint32_t>(n);
}

namespace {

// The record subcommand's options, bound to a CLI11 subcommand.
struct RecordArgs {
    std::vector<std::string> events;
    std::string cpus;
    std::string count;
    std::string freq;
    std::string pages;
    std::string duration;
    std::string pids;
    std::string tids;
    bool all_cpus = false;
    CLI::Option* all_opt = nullptr;
    CLI::Option* cpu_opt = nullptr;
    CLI::Option* pid_opt = nullptr;
    CLI::Option* tid_opt = nullptr;
    CLI::Option* count_opt = nullptr;
    CLI::Option* freq_opt = nullptr;
    CLI::Option* pages_opt = nullptr;
    CLI::Option* duration_opt = nullptr;
    bool graph = false;
    std::string call_graph;
    CLI::Option* graph_opt = nullptr;
    CLI::Option* call_graph_opt = nullptr;
};

CLI::App* add_record(CLI::App& app, RecordArgs& a, RecordOptions& rec)
{
    auto* record = app.add_subcommand(
        "record",
        "sample events into a perf.data file: COMMAND and its children (record [options] [--] "
        "COMMAND ARGS), processes (-p) or threads (-t), or system-wide on CPUs (-a, -C)");
    record->add_option("-e,--event", a.events, "events, comma-separated (default: cycles)")
        ->type_name("EVENTS")
        ->allow_extra_args(false);
    a.count_opt = record->add_option("-c,--count", a.count, "sample every PERIOD events")
                      ->type_name("PERIOD");
    a.freq_opt = record
                     ->add_option("-F,--freq", a.freq,
                                  "sample FREQ times a second (default " +
                                      std::to_string(kDefaultRecordFreq) + ")")
                     ->type_name("FREQ")
                     ->excludes(a.count_opt);
    a.all_opt = record->add_flag("-a,--all-cpus", a.all_cpus,
                                 "system-wide on every online CPU (the default without a "
                                 "COMMAND, -p or -t)");
    a.cpu_opt =
        record->add_option("-C,--cpu", a.cpus, "system-wide on these CPUs only (e.g. 0-3,6)")
            ->type_name("LIST")
            ->excludes(a.all_opt);
    a.pid_opt = record
                    ->add_option("-p,--pid", a.pids,
                                 "sample these processes (every thread, and what they start "
                                 "from now on), e.g. 1234,5678")
                    ->type_name("PIDS")
                    ->excludes(a.all_opt)
                    ->excludes(a.cpu_opt);
    a.tid_opt = record
                    ->add_option("-t,--tid", a.tids,
                                 "sample these threads (and what they start from now on)")
                    ->type_name("TIDS")
                    ->excludes(a.all_opt)
                    ->excludes(a.cpu_opt);
    record->add_option("-o,--output", rec.output, "the perf.data file to write")
        ->capture_default_str();
    a.pages_opt = record
                      ->add_option("-m,--mmap-pages", a.pages,
                                   "data pages of each CPU's ring (a power of 2; default 64)")
                      ->type_name("PAGES");
    record->add_flag("--sample-read", rec.read_group, "samples carry every event's count");
    a.graph_opt =
        record->add_flag("-g", a.graph, "samples carry their call chains (--call-graph fp)");
    a.call_graph_opt =
        record
            ->add_option("--call-graph", a.call_graph,
                         "samples carry their call chains, kernel and user: fp (user frames by "
                         "frame pointers) or dwarf[,SIZE] (SIZE bytes of user stack, default "
                         "8192, for perf to unwind code built without frame pointers)")
            ->type_name("MODE");
    a.duration_opt = record
                         ->add_option("--duration", a.duration,
                                      "record for SECONDS, without a COMMAND (else until the "
                                      "COMMAND exits or Ctrl-C)")
                         ->type_name("SECONDS");
    return record;
}

void check_record(const RecordArgs& a, RecordOptions& rec)
{
    rec.events = a.events.empty() ? parse_events({"cycles"}) : parse_events(a.events);
    if (a.cpu_opt->count())
        rec.cpus = parse_cpus(a.cpus);
    if (a.pid_opt->count())
        rec.pids = parse_ids("-p/--pid", a.pids);
    if (a.tid_opt->count())
        rec.tids = parse_ids("-t/--tid", a.tids);
    if (a.count_opt->count()) {
        rec.period = parse_count("-c/--count", a.count, (1ULL << 48) - 1);
        rec.freq_hz = 0;
    }
    if (a.freq_opt->count())
        rec.freq_hz = parse_count("-F/--freq", a.freq, 1000000);
    if (a.pages_opt->count())
        rec.ring_pages = parse_mmap_pages(a.pages);
    if (a.duration_opt->count())
        rec.duration = parse_duration(a.duration);
    if (a.call_graph_opt->count()) {
        // perf's --call-graph mode[,size].
        const std::size_t comma = a.call_graph.find(',');
        const std::string mode = a.call_graph.substr(0, comma);
        if (mode == "dwarf") {
            rec.user_stack = kDefaultUserStack;
            if (comma != std::string::npos) {
                const std::uint64_t size = parse_count(
                    "--call-graph", a.call_graph.substr(comma + 1), ARCHPMU_STACK_USER_MAX);
                // As perf: rounded up to 8 bytes.
                rec.user_stack = static_cast<std::uint32_t>((size + 7) / 8 * 8);
            }
        } else if (mode == "lbr") {
            refuse("--call-graph", "'lbr' is not supported; give fp or dwarf");
        } else if (mode != "fp" || comma != std::string::npos) {
            refuse("--call-graph", "'" + a.call_graph + "' is not a mode; give fp or dwarf[,SIZE]");
        }
    }
    rec.callchain = a.graph_opt->count() || a.call_graph_opt->count();
    if (rec.output.empty())
        refuse("-o/--output", "the file name is empty");
}

const CLI::Option* find_option(const CLI::App* sub, const CLI::App& app, const std::string& name)
{
    const CLI::Option* opt = sub ? sub->get_option_no_throw(name) : nullptr;
    return opt ? opt : app.get_option_no_throw(name);
}

// How many of the words after argv[i] the option word argv[i] takes as its value
// (0 or 1): perf's -e EVENTS, -eEVENTS, --event=EVENTS, -aA, -aeEVENTS. An unknown
// option is left for CLI11 to refuse.
int option_values(std::string_view arg, const CLI::App* sub, const CLI::App& app)
{
    if (arg.substr(0, 2) == "--") {
        const auto* opt = find_option(sub, app, std::string(arg.substr(0, arg.find('='))));
        return opt && arg.find('=') == std::string_view::npos && opt->get_items_expected_min() > 0
                   ? 1
                   : 0;
    }
    for (std::size_t k = 1; k < arg.size(); ++k) {
        const auto* opt = find_option(sub, app, std::string{'-', arg[k]});
        if (!opt)
            return 0;
        if (opt->get_items_expected_min() > 0)
            return k + 1 == arg.size() ? 1 : 0;  // else the rest of the word is its value
    }
    return 0;
}

}  // namespace

CommandSplit split_command(int argc, const char* const* argv, const CLI::App& app)
{
    const CLI::App* sub = nullptr;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--")
            return {i, i + 1};
        if (arg.size() > 1 && arg[0] == '-') {
            i += option_values(arg, sub, app);
            continue;
        }
        if (sub) {
            // As perf: the first word that is no option's is the COMMAND, for the
            // subcommands that run one (the others refuse it as an extra argument).
            const std::string& name = sub->get_name();
            return name == "stat" || name == "record" ? CommandSplit{i, i}
                                                      : CommandSplit{argc, argc};
        }
        for (const auto* s : app.get_subcommands([](const CLI::App*) { return true; }))
            if (s->check_name(std::string(arg)))
                sub = s;
        if (!sub)
            break;
    }
    return {argc, argc};
}

Command parse_command_line(int argc, const char* const* argv, std::ostream& out)
{
    Command cmd;
    CLI::App app{"archpmu: the Intel architectural PMU through /dev/archpmu"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("archpmu version ") + ARCHPMU_VERSION_STRING);
    // --device also after the subcommand; not -d, which is perf stat's --detailed.
    app.fallthrough();
    cmd.device = kDefaultDevicePath;
    app.add_option("--device", cmd.device, "the archpmu device")->capture_default_str();

    auto* info = app.add_subcommand("info", "describe every CPU's PMU, grouped by layout");
    info->add_flag("-j,--json", cmd.json, "print JSON instead of a table");

    auto* list = app.add_subcommand(
        "list",
        "the events this machine counts: the architectural ones with the CPUs that have "
        "them, and the model-specific ones libpfm4 knows for this CPU (list [PATTERN])");
    list->add_flag("-j,--json", cmd.json, "print JSON instead of text");
    list->add_option("pattern", cmd.pattern, "only names that match (a glob, or a substring)")
        ->type_name("PATTERN");

    auto* monitor = app.add_subcommand(
        "monitor",
        "print archpmu's events as they happen, a line each (sessions opened, started, stopped "
        "and closed; refusals with the holder; foreign use of held counters; CPUs going offline "
        "and back; throttling and lost samples; the module's unload, after which it waits for "
        "the module to come back) until Ctrl-C; status lines go to stderr; needs CAP_SYS_ADMIN");
    monitor->add_flag("-j,--json", cmd.json, "one JSON object per line");
    auto* who = app.add_subcommand(
        "who",
        "who holds each counter of each CPU (an archpmu session, perf, another agent, or free; "
        "'unknown' without CAP_PERFMON, which reading the registers needs), and every session");
    who->add_flag("-j,--json", cmd.json, "print JSON instead of a table");
    std::string regs_cpus;
    auto* regs = app.add_subcommand(
        "regs",
        "every architectural PMU register of each CPU, decoded (read-only; needs "
        "CAP_PERFMON)");
    auto* regs_cpu_opt =
        regs->add_option("-C,--cpu", regs_cpus, "these CPUs only (e.g. 0-3,6)")->type_name("LIST");
    regs->add_flag("-j,--json", cmd.json, "print JSON instead of a table");
    std::string selftest_cpu;
    auto* selftest = app.add_subcommand(
        "selftest",
        "prove the PMU works end to end on the loaded backend (enumeration, fixed and GP "
        "counters together, USR/OS, CMASK/INV, sampling, a task across CPUs, the registers "
        "as found) and name what would refuse sessions; a report to paste into a bug; needs "
        "CAP_PERFMON");
    auto* selftest_cpu_opt = selftest
                                 ->add_option("-C,--cpu", selftest_cpu,
                                              "the CPU to run the checks on (default: "
                                              "the first online)")
                                 ->type_name("CPU");

    StatOptions& st = cmd.stat;
    std::vector<std::string> events;
    std::string cpus;
    std::string interval;
    std::string separator;
    std::string duration;
    std::string pids;
    std::string tids;
    bool all_cpus = false;
    auto* stat = app.add_subcommand(
        "stat",
        "count events while COMMAND and its children run (stat [options] [--] COMMAND ARGS), in "
        "processes (-p) or threads (-t), or system-wide on CPUs (-a, -C)");
    stat->add_option("-e,--event", events,
                     "events, comma-separated (default: cycles, instructions, ref-cycles, "
                     "branches, branch-misses); repeatable")
        ->type_name("EVENTS")
        ->allow_extra_args(false);
    auto* all_opt = stat->add_flag("-a,--all-cpus", all_cpus,
                                   "system-wide on every online CPU (the default without a "
                                   "COMMAND, -p or -t)");
    auto* cpu_opt = stat->add_option("-C,--cpu", cpus,
                                     "system-wide on these CPUs only (e.g. 0-3,6; CPUs 0-" +
                                         std::to_string(kMaxCpuNumber) + ")")
                        ->type_name("LIST")
                        ->excludes(all_opt);
    auto* pid_opt = stat->add_option("-p,--pid", pids,
                                     "count these processes (every thread, and what they "
                                     "start from now on), e.g. 1234,5678")
                        ->type_name("PIDS")
                        ->excludes(all_opt)
                        ->excludes(cpu_opt);
    auto* tid_opt =
        stat->add_option("-t,--tid", tids, "count these threads (and what they start from now on)")
            ->type_name("TIDS")
            ->excludes(all_opt)
            ->excludes(cpu_opt);
    auto* per_cpu_opt = stat->add_flag("-A,--per-cpu", st.per_cpu,
                                       "a count per CPU instead of the sum (system-wide only)");
    auto* interval_opt =
        stat->add_option("-I,--interval-print", interval,
                         "print every MS milliseconds (" + std::to_string(kMinIntervalMs) + "-" +
                             std::to_string(kMaxIntervalMs) + ")")
            ->type_name("MS");
    bool json_lines = false;
    bool json_doc = false;
    auto* json_lines_opt =
        stat->add_flag("-j,--json-output", json_lines, "perf's JSON: an object per line");
    auto* json_opt =
        stat->add_flag("--json", json_doc, "archpmu's JSON document (per CPU counts and times)")
            ->excludes(json_lines_opt);
    auto* separator_opt = stat->add_option("-x,--field-separator", separator,
                                           "perf's CSV with this separator (\\t: a tab)")
                              ->type_name("SEP")
                              ->excludes(json_opt)
                              ->excludes(json_lines_opt);
    auto* output_opt =
        stat->add_option("-o,--output", st.output, "print the counts to FILE, not to stderr")
            ->type_name("FILE");
    auto* append_opt = stat->add_flag("--append", st.append, "append to the -o FILE");
    std::string repeat;
    auto* repeat_opt =
        stat->add_option("-r,--repeat", repeat,
                         "run COMMAND N times (1-" + std::to_string(kMaxRepeat) +
                             ") and print each count's mean and spread, as perf does")
            ->type_name("N");
    bool topdown = false;
    std::string td_level;
    unsigned detailed = 0;
    stat->add_flag("--topdown", topdown,
                   "the top-down metrics as perf stat --topdown (retiring, bad speculation, "
                   "frontend and backend bound; level 2 where there is one), from PERF_METRICS "
                   "or the architectural top-down events");
    auto* td_level_opt =
        stat->add_option("--td-level", td_level,
                         "the top-down level: 1, or 2 where PERF_METRICS has it (0, as in perf "
                         "and the default: the highest there is)")
            ->type_name("N");
    stat->add_flag("-d,--detailed", detailed,
                   "add perf's detailed events: L1 data cache and LLC; -dd: also L1 "
                   "instruction cache and TLBs; -ddd: also L1 data prefetches");
    auto* duration_opt = stat->add_option("--duration", duration,
                                          "count for SECONDS, without a COMMAND (more than 0, "
                                          "at most " +
                                              std::to_string(kMaxDurationS) + ")")
                             ->type_name("SECONDS");

    RecordArgs rec_args;
    auto* record = add_record(app, rec_args, cmd.record);

    const CommandSplit split = split_command(argc, argv, app);
    const int own_args = split.own_end;
    std::vector<std::string> command(argv + split.command_begin, argv + argc);

    const auto prefix = [&]() -> std::string {
        if (record->parsed())
            return "archpmu record: ";
        if (stat->parsed())
            return "archpmu stat: ";
        if (info->parsed())
            return "archpmu info: ";
        if (list->parsed())
            return "archpmu list: ";
        if (monitor->parsed())
            return "archpmu monitor: ";
        if (who->parsed())
            return "archpmu who: ";
        if (regs->parsed())
            return "archpmu regs: ";
        if (selftest->parsed())
            return "archpmu selftest: ";
        return "archpmu: ";
    };
    // As perf: the reason, the usage line, exit status 129.
    const auto usage = [&](const std::string& what) {
        cmd.status = kUsageStatus;
        std::string sub = "<command>";
        for (const auto* s : {info, list, monitor, who, regs, selftest, stat, record})
            if (s->parsed())
                sub = s->get_name();
        const bool runs = sub == "stat" || sub == "record";
        cmd.error = prefix() + what + "\n\n Usage: archpmu " + sub + " [<options>]" +
                    (runs ? " [--] [<command> [<args>]]" : "") + "\n Run 'archpmu " +
                    (sub == "<command>" ? "" : sub + " ") + "--help' for more.";
        return cmd;
    };
    try {
        app.parse(own_args, argv);
        if (cmd.device.empty())
            refuse("--device", "the path is empty; give the device node (default " +
                                   std::string(kDefaultDevicePath) + ")");
        if (info->parsed()) {
            if (!command.empty())
                return usage("takes no COMMAND");
            cmd.action = Command::Action::info;
            return cmd;
        }
        if (list->parsed()) {
            if (!command.empty())
                return usage("takes no COMMAND");
            cmd.action = Command::Action::list;
            return cmd;
        }
        if (monitor->parsed() || who->parsed() || regs->parsed()) {
            if (!command.empty())
                return usage("takes no COMMAND");
            if (regs_cpu_opt->count())
                cmd.cpus = parse_cpus(regs_cpus);
            cmd.action = monitor->parsed() ? Command::Action::monitor
                         : who->parsed()   ? Command::Action::who
                                           : Command::Action::regs;
            return cmd;
        }
        if (selftest->parsed()) {
            if (!command.empty())
                return usage("takes no COMMAND");
            if (selftest_cpu_opt->count()) {
                cmd.cpus = parse_cpus(selftest_cpu);
                if (cmd.cpus.size() != 1)
                    refuse("-C/--cpu", "'" + selftest_cpu + "' names " +
                                           std::to_string(cmd.cpus.size()) + " CPUs; give one");
            }
            cmd.action = Command::Action::selftest;
            return cmd;
        }
        if (record->parsed()) {
            check_record(rec_args, cmd.record);
            if (!command.empty() && cmd.record.duration)
                return usage("--duration and a COMMAND exclude each other");
            cmd.record.system_wide =
                rec_args.all_opt->count() || rec_args.cpu_opt->count() ||
                (command.empty() && cmd.record.pids.empty() && cmd.record.tids.empty());
            cmd.record.device = cmd.device;
            cmd.record.command = std::move(command);
            cmd.record.cmdline.assign(argv, argv + argc);
            cmd.action = Command::Action::record;
            return cmd;
        }
        if (detailed && topdown)
            return usage("--topdown and -d/--detailed exclude each other");
        st.detailed = detailed;
        if (td_level_opt->count() && !topdown)
            return usage("--td-level sets the level of --topdown: add it");
        if (topdown) {
            if (!events.empty())
                return usage("--topdown and -e/--event exclude each other");
            if (per_cpu_opt->count())
                return usage("--topdown and -A/--per-cpu exclude each other");
            // As perf: 0, the default, is the highest level there is.
            st.topdown_level = kTopdownHighest;
            if (td_level_opt->count() && td_level != "0") {
                if (td_level != "1" && td_level != "2")
                    refuse("--td-level", "'" + td_level + "': the max level is 2");
                st.topdown_level = td_level == "1" ? 1 : 2;
            }
        }
        st.events = parse_events(events);
        if (cpu_opt->count())
            st.cpus = parse_cpus(cpus);
        if (pid_opt->count())
            st.pids = parse_ids("-p/--pid", pids);
        if (tid_opt->count())
            st.tids = parse_ids("-t/--tid", tids);
        st.system_wide = all_opt->count() || cpu_opt->count() ||
                         (command.empty() && st.pids.empty() && st.tids.empty());
        if (per_cpu_opt->count() && !st.system_wide)
            return usage(
                "-A/--per-cpu is for system-wide counting: add -a or -C (a COMMAND, "
                "-p and -t count tasks, on whatever CPU they run)");
        if (interval_opt->count())
            st.interval_ms = parse_interval_ms(interval);
        if (separator_opt->count()) {
            st.separator = parse_separator(separator);
            st.style = StatFormat::Style::csv;
        }
        if (json_lines)
            st.style = StatFormat::Style::json_lines;
        if (json_doc)
            st.style = StatFormat::Style::json;
        if (append_opt->count() && !output_opt->count())
            return usage("--append appends to the -o/--output FILE: give one");
        if (output_opt->count() && st.output.empty())
            refuse("-o/--output", "the file name is empty");
        if (duration_opt->count())
            st.duration = parse_duration(duration);
        if (command.empty() && !st.duration && !st.interval_ms && st.pids.empty() &&
            st.tids.empty())
            return usage(
                "give a COMMAND, -p PIDS, -t TIDS, --duration SECONDS or -I MS (then "
                "Ctrl-C stops)");
        if (!command.empty() && st.duration)
            return usage("--duration and a COMMAND exclude each other");
        if (repeat_opt->count()) {
            st.repeat = static_cast<unsigned>(parse_count("-r/--repeat", repeat, kMaxRepeat));
            if (command.empty() || !st.pids.empty() || !st.tids.empty())
                return usage(
                    "-r/--repeat runs a COMMAND again and again: give one, "
                    "without -p or -t");
            if (st.interval_ms)
                return usage("-r/--repeat and -I/--interval-print exclude each other");
        }
        st.device = cmd.device;
        st.command = std::move(command);
        cmd.action = Command::Action::stat;
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) {  // --help, --version
            cmd.status = app.exit(e, out, out);
            return cmd;
        }
        std::string why = one_line(e.what());
        // -d was the device option before it became perf stat's --detailed.
        if (why.find("not expected") != std::string::npos &&
            (why + " ").find(" -d ") != std::string::npos)
            why += " (the device option is --device)";
        return usage(why);
    } catch (const Error& e) {
        return usage(reason(e));
    }
    return cmd;
}

}  // namespace archpmu::tool
