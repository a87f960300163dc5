// SPDX-License-Identifier: MIT
// archpmu monitor, who and regs: what the module says about the PMU and its holders.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace archpmu::tool {

// Events as they happen, a line (or a JSON object) each, until Ctrl-C.
int run_monitor(bool json);
// Every counter of every CPU and its holder.
int run_who(bool json);
// Every architectural PMU register of each CPU (all online CPUs when `cpus` is empty).
int run_regs(const std::string& device, const std::vector<std::uint32_t>& cpus, bool json);

}  // namespace archpmu::tool
