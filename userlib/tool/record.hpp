// SPDX-License-Identifier: MIT
// archpmu record: sample a command, tasks or CPUs into a perf.data file.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "archpmu/events.hpp"

namespace archpmu::tool {

// perf record's default frequency.
inline constexpr std::uint64_t kDefaultRecordFreq = 4000;
// perf record --call-graph dwarf's default stack dump.
inline constexpr std::uint32_t kDefaultUserStack = 8192;

// Checked options (parse_command_line in args.hpp makes them).
struct RecordOptions {
    std::string device;
    std::vector<EventSpec> events;  // default: cycles
    // CPUs (system-wide on them: -a, -C, or no COMMAND and no -p/-t), or tasks:
    // the COMMAND and its children, -p processes, -t threads (perf's targets).
    bool system_wide = false;
    std::vector<std::uint32_t> cpus;  // system-wide; empty: every online CPU
    std::vector<pid_t> pids;          // -p
    std::vector<pid_t> tids;          // -t
    std::uint64_t period = 0;         // -c; 0: sample at freq_hz
    std::uint64_t freq_hz = kDefaultRecordFreq;
    std::uint32_t ring_pages = 0;  // -m; 0: the module's default
    bool read_group = false;       // --sample-read: samples carry every event's count
    bool callchain = false;        // -g, --call-graph fp or dwarf
    std::uint32_t user_stack = 0;  // --call-graph dwarf[,SIZE]: bytes of user stack per sample
    std::string output = "perf.data";
    std::optional<std::chrono::nanoseconds> duration;  // without a COMMAND
    std::vector<std::string> command;
    std::vector<std::string> cmdline;  // the whole command line, for the file's header
};

// Returns the exit status for the tool: the command's, or 0.
int run_record(const RecordOptions& opts);

}  // namespace archpmu::tool
