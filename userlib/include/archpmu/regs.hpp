// SPDX-License-Identifier: MIT
// archpmu: the architectural PMU registers, named and decoded field by field
// (the SDM's field layouts).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "archpmu/device.hpp"

namespace archpmu {

// A register value as the tables print it: "0x4300c4" (and "0" for zero).
std::string hex_string(std::uint64_t value);

// "IA32_PERFEVTSEL2", "IA32_FIXED_CTR_CTRL", v6's "IA32_PMC_GP8_CFG_A", ... ("MSR 0x..."
// for others).
std::string register_name(std::uint32_t msr);

// The fields of a control register, in bit order: PERFEVTSELx and v6's CFG_A (event and umask
// always; usr, os, edge, pc, int, any, en, inv, cmask, eq, umask2 when set),
// FIXED_CTR_CTRL (per counter, when set: os, usr, any, pmi), GLOBAL_CTRL,
// GLOBAL_STATUS and GLOBAL_INUSE (pmcN and fixedN set; STATUS's named bits,
// INUSE's pmi_inuse). Counters and other registers decode to nothing.
std::vector<std::pair<std::string, std::uint64_t>> decode_register(std::uint32_t msr,
                                                                   std::uint64_t value);

}  // namespace archpmu
