// SPDX-License-Identifier: MIT
// archpmu selftest's checks that count and sample on one CPU, with a loop of
// known length (archpmu_selftest_spin: two instructions an iteration).
#pragma once

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "archpmu/device.hpp"
#include "archpmu/pmu.hpp"

namespace archpmu::tool {

enum class Outcome { pass, fail, skip, note };

struct Check {
    std::string name;
    Outcome outcome = Outcome::pass;
    std::string summary;             // one line
    std::vector<std::string> lines;  // details, a line each
};

struct SelftestTarget {
    std::string device;
    Info info;
    CpuInfo cpu;                 // where the checks run
    std::vector<CpuInfo> cpus;   // every enumerated CPU
    bool model = false;          // exact checks; the loop's own counts are not the model's
    bool task_sessions = false;  // the module has them and no CPU is v1: count this thread only
    std::vector<std::uint32_t> allowed_cpus;  // this thread's affinity

    [[nodiscard]] bool allowed(std::uint32_t cpu) const
    {
        return std::find(allowed_cpus.begin(), allowed_cpus.end(), cpu) != allowed_cpus.end();
    }
};

// Fixed counter 0 against a GP counter (the SDM's experiment 15-11), the loop's
// count, USR/OS, CMASK/INV, sampling, and a task session following a thread
// across CPUs, each handed to `report` as it ends. Each runs on its own: a
// refused session fails its check only.
void run_counting_checks(const SelftestTarget& t, const std::function<void(const Check&)>& report);

}  // namespace archpmu::tool
