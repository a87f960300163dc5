// SPDX-License-Identifier: MIT
// archpmu regs: the registers of each CPU as a table or one JSON document.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "archpmu/device.hpp"

namespace archpmu {

struct CpuRegisters {
    std::uint32_t cpu = 0;
    std::vector<Register> regs;
};

// A table per CPU (register, value, decoded fields), and one JSON document.
std::string registers_table(const std::vector<CpuRegisters>& cpus);
std::string registers_json(const std::vector<CpuRegisters>& cpus);

}  // namespace archpmu
