// SPDX-License-Identifier: MIT
// archpmu: the `archpmu info` report, as JSON and as a human table.
#pragma once

#include <string>
#include <vector>

#include "archpmu/pmu.hpp"

namespace archpmu {

// The processor as /proc/cpuinfo names it (its first CPU). The model backend
// impersonates only the PMU's CPUID leaves: this stays the machine's own.
struct CpuModel {
    std::string vendor;  // "GenuineIntel"
    unsigned family = 0;
    unsigned model = 0;
    unsigned stepping = 0;
    std::string name;  // "Intel(R) Core(TM) i7-6700 CPU @ 3.40GHz"
    [[nodiscard]] bool known() const { return !vendor.empty() || !name.empty(); }
};
CpuModel parse_cpuinfo(const std::string& text);
CpuModel read_cpu_model();  // /proc/cpuinfo; an unknown model if it cannot be read
// "GenuineIntel family 6 model 94 (0x5e) stepping 3: Intel Core Processor (Skylake)"
std::string describe(const CpuModel& m);

// {"abi_version": N, "backend": "hw"|"model", ["cpu_model": {"vendor", "family",
// "model", "stepping", "name"},] "cpus": [{"cpu": 0, ...}]}
std::string info_json(const Info& info, const std::vector<CpuInfo>& cpus, int indent = 2,
                      const CpuModel& model = {});

// The processor, one row per distinct PMU description with the CPUs that share
// it, then each description's events, wrapped at 100 columns.
std::string info_table(const Info& info, const std::vector<CpuInfo>& cpus,
                       const CpuModel& model = {});

}  // namespace archpmu
