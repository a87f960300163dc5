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

namespace archpmu::tool {

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
    std::string separator;     // empty: no CSV
    bool json = false;
    std::optional<std::chrono::nanoseconds> duration;  // without a COMMAND
    unsigned repeat = 1;                               // -r: runs of the COMMAND
    std::vector<std::string> command;
};

// Returns the exit status for the tool: the command's, or 0.
int run_stat(const StatOptions& opts);

}  // namespace archpmu::tool
