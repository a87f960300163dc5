// SPDX-License-Identifier: MIT
// archpmu selftest: proves, on whatever backend is loaded, that the PMU works
// end to end, and prints a report to paste into a bug.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace archpmu::tool {

struct SelftestOptions {
    std::string device;
    std::optional<std::uint32_t> cpu;  // the CPU the checks run on; default: the first online
};

// 0 when no check failed (notes and skips do not fail), 1 otherwise.
int run_selftest(const SelftestOptions& options);

}  // namespace archpmu::tool
