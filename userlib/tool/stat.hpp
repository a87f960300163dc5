// SPDX-License-Identifier: MIT
// archpmu stat: count events on CPUs while a command runs or for a duration.
#pragma once

#include <string>
#include <vector>

namespace archpmu::tool {

struct StatOptions {
    std::string device;
    std::vector<std::string> events;  // each a comma-separated list
    bool all_cpus = false;
    std::string cpu_list;
    bool per_cpu = false;
    unsigned interval_ms = 0;
    std::string separator;
    bool json = false;
    double duration_s = -1;
    std::vector<std::string> command;
};

// Returns the exit status for the tool: the command's, or 0.
int run_stat(const StatOptions& opts);

}  // namespace archpmu::tool
