// SPDX-License-Identifier: MIT
// archpmu: the `archpmu info` report, as JSON and as a human table.
#pragma once

#include <string>
#include <vector>

#include "archpmu/pmu.hpp"

namespace archpmu {

// {"abi_version": N, "backend": "hw"|"model", "cpus": [{"cpu": 0, ...}]}
std::string info_json(const Info& info, const std::vector<CpuInfo>& cpus, int indent = 2);

// One row per distinct PMU description, with the CPUs that share it.
std::string info_table(const Info& info, const std::vector<CpuInfo>& cpus);

}  // namespace archpmu
