// SPDX-License-Identifier: MIT
// archpmu's command line: every argument is checked before anything runs.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "archpmu/events.hpp"
#include "exporter.hpp"
#include "record.hpp"
#include "stat.hpp"

namespace CLI {
class App;
}

namespace archpmu::tool {

// perf's exit status for a bad command line.
inline constexpr int kUsageStatus = 129;

// stat --duration SECONDS: more than 0, at most 365 days (steady_clock cannot overflow).
inline constexpr std::uint32_t kMaxDurationS = 365U * 24 * 3600;
// stat -I MS: perf's minimum of 10 ms, at most an hour.
inline constexpr unsigned kMinIntervalMs = 10;
inline constexpr unsigned kMaxIntervalMs = 3600000;
// stat -r N: perf takes any int; a million runs is past any use.
inline constexpr unsigned kMaxRepeat = 1000000;

// The checks of single options. Each throws archpmu::Error (EINVAL) whose message is
// one line that starts with the option's name and says what the option takes.
std::chrono::nanoseconds parse_duration(std::string_view text);  // --duration
unsigned parse_interval_ms(std::string_view text);               // -I/--interval-print
std::string parse_separator(std::string_view text);              // -x/--field-separator ("\t": tab)
std::vector<EventSpec> parse_events(const std::vector<std::string>& lists);  // -e/--event
std::vector<std::uint32_t> parse_cpus(std::string_view text);                // -C/--cpu
// stat -p/--pid and -t/--tid: a comma-separated list of ids, 1 and up.
std::vector<pid_t> parse_ids(std::string_view option, std::string_view text);
// record -c/--count and -F/--freq: a whole number, at least 1.
std::uint64_t parse_count(std::string_view option, std::string_view text, std::uint64_t max);
// record -m/--mmap-pages: a power of 2 up to the module's ring maximum.
std::uint32_t parse_mmap_pages(std::string_view text);
// exporter --listen: ADDR:PORT (an IPv4 address, or an IPv6 one in brackets), port 1-65535.
std::string parse_listen(std::string_view text);

// What the command line asks for.
struct Command {
    enum class Action { exit, info, list, stat, record, monitor, who, regs, selftest, exporter };
    Action action = Action::exit;
    // Action::exit: the exit status (0 after --help or --version), and for a bad
    // command line (kUsageStatus, as perf) a message for stderr: a line that names
    // the argument and what it takes, then the usage.
    int status = 0;
    std::string error;
    std::string device;               // info
    bool json = false;                // info, list, monitor, who, regs --json
    std::string pattern;              // list PATTERN
    std::vector<std::uint32_t> cpus;  // regs -C, selftest -C (one CPU)
    StatOptions stat;                 // stat
    RecordOptions record;             // record
    ExporterOptions exporter;         // exporter
};

// Where stat's or record's COMMAND starts in argv: after "--", or as in perf at the
// first word after the subcommand that is neither an option nor an option's value
// (so `stat -e cycles instructions` runs `instructions`). own_end: the end of
// archpmu's own arguments; command_begin: the COMMAND's first word (argc: none).
struct CommandSplit {
    int own_end;
    int command_begin;
};
CommandSplit split_command(int argc, const char* const* argv, const CLI::App& app);

// argv as main has it. --help and --version print to out.
Command parse_command_line(int argc, const char* const* argv, std::ostream& out);

}  // namespace archpmu::tool
