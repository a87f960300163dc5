// SPDX-License-Identifier: MIT
// archpmu stat: count events on CPUs while a command runs or for a duration.
#pragma once

#include <sys/types.h>
#include <chrono>
#include <cstdint>

#include <optional>
#include <string>
#include <vector>

#include "archpmu/events.hpp"
#include "stat_format.hpp"

namespace archpmu::tool {

// --td-level's "the highest level there is" (perf's 0).
constexpr unsigned kTopdownHighest = ~0U;

// Checked options (parse_command_line in args.hpp makes them).
struct StatOptions {
    std::string device;
    std::vector<EventSpec> events;
    // CPUs (system-wide on them: -a, -C, or no COMMAND and no -p/-t), or tasks:
    // the COMMAND and its children, -p processes, -t threads (perf's targets).
    bool system_wide = false;
    std::vector<std::uint32_t> cpus;  // system-wide; empty: every online CPU
    std::vector<pid_t> pids;          // -p
    std::vector<pid_t> tids;          // -t
    bool per_cpu = false;
    unsigned interval_ms = 0;  // 0: no -I
    StatFormat::Style style = StatFormat::Style::human;
    std::string separator;  // -x
    // -o FILE (empty: stderr, as perf), --append to it.
    std::string output;
    bool append = false;
    std::optional<std::chrono::nanoseconds> duration;  // without a COMMAND
    unsigned repeat = 1;                               // -r: runs of the COMMAND
    // --topdown (its events replace -e): --td-level's 1 or 2, or kTopdownHighest (perf's
    // 0, the default); 0: no top-down
    unsigned topdown_level = 0;
    unsigned detailed = 0;  // -d, -dd, -ddd: perf's detailed events after the others
    std::vector<std::string> command;
};

// Returns the exit status for the tool: the command's, 127 when it could not be
// run, or 0. After a Ctrl-C it ends by SIGINT instead, as perf does.
int run_stat(const StatOptions& opts);

}  // namespace archpmu::tool
