// SPDX-License-Identifier: MIT
#include "args.hpp"

#include <arpa/inet.h>
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
#include "args_sub.hpp"
#include "exporter_metrics.hpp"

namespace archpmu::tool {
namespace {

constexpr std::string_view kDefaultEvents = "cycles,instructions,ref-cycles,branches,branch-misses";

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

void refuse(std::string_view option, const std::string& why)
{
    throw Error(EINVAL, std::string(option) + ": " + why);
}

void misuse(const std::string& what)
{
    throw Error(EINVAL, what);
}

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

std::string parse_listen(std::string_view text)
{
    // One numeric address: civetweb reads commas as more ports, letters after the port
    // as options, a lone port as every address.
    const std::size_t colon = text.rfind(':');
    const std::string host(text.substr(0, colon == std::string_view::npos ? 0 : colon));
    const std::string_view port = colon == std::string_view::npos ? text : text.substr(colon + 1);
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    in6_addr addr{};
    const bool v6 = host.size() > 2 && host.front() == '[' && host.back() == ']' &&
                    ::inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), &addr) == 1;
    const bool v4 = ::inet_pton(AF_INET, host.c_str(), &addr) == 1;
    if (colon == std::string_view::npos || (!v4 && !v6) || ec != std::errc() ||
        end != port.data() + port.size() || port.empty() || value == 0 || value > 65535)
        refuse("--listen", "'" + std::string(text) +
                               "' is not ADDR:PORT, one IPv4 address or an IPv6 one in brackets "
                               "and a port of 1 to 65535 (e.g. 127.0.0.1:10738, [::1]:10738, "
                               "0.0.0.0:10738)");
    return std::string(text);
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

    std::vector<std::string> exporter_events;
    std::string exporter_cpus;
    std::string exporter_listen = cmd.exporter.listen;
    auto* exporter = app.add_subcommand(
        "exporter",
        "serve one counting session's counts to Prometheus at http://ADDR:PORT/metrics, in "
        "the text format or OpenMetrics, until SIGTERM; SIGHUP counts afresh; needs "
        "CAP_PERFMON (docs/exporter.md)");
    exporter->add_option("--listen", exporter_listen, "where to listen")
        ->type_name("ADDR:PORT")
        ->capture_default_str();
    exporter
        ->add_option("-e,--event", exporter_events,
                     "events in perf's syntax (default instructions,cycles)")
        ->type_name("EVENTS");
    auto* exporter_cpu_opt =
        exporter->add_option("-C,--cpu", exporter_cpus, "these CPUs only (default: every online)")
            ->type_name("LIST");

    StatArgs stat_args;
    auto* stat = add_stat(app, stat_args, cmd.stat);

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
        if (exporter->parsed())
            return "archpmu exporter: ";
        return "archpmu: ";
    };
    // As perf: the reason, the usage line, exit status 129.
    const auto usage = [&](const std::string& what) {
        cmd.status = kUsageStatus;
        std::string sub = "<command>";
        for (const auto* s : {info, list, monitor, who, regs, selftest, exporter, stat, record})
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
        if (exporter->parsed()) {
            if (!command.empty())
                return usage("takes no COMMAND");
            cmd.exporter.listen = parse_listen(exporter_listen);
            cmd.exporter.events = parse_events(exporter_events.empty()
                                                   ? std::vector<std::string>{"instructions,cycles"}
                                                   : exporter_events);
            try {
                check_family_names(cmd.exporter.events);
            } catch (const Error& e) {
                refuse("-e/--event", reason(e));
            }
            if (exporter_cpu_opt->count())
                cmd.exporter.cpus = parse_cpus(exporter_cpus);
            cmd.exporter.device = cmd.device;
            cmd.action = Command::Action::exporter;
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
        check_stat(stat_args, cmd.stat, std::move(command));
        cmd.stat.device = cmd.device;
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
