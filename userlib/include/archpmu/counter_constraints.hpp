// SPDX-License-Identifier: MIT
// archpmu: the GP counters Intel's model-specific events can count on, from
// perf's event tables (libpfm4 does not expose its counter masks).
#pragma once

#include <cstdint>
#include <string_view>

#include "archpmu/pmu.hpp"

namespace archpmu {

// The GP counters (bit n: IA32_PMCn) that an event (event select | umask << 8, as
// archpmu's EventSpec code) can count on for a CPU, from perf's event tables
// (tools/perf/pmu-events/arch/x86, the kernel version the table came from is
// counter_constraints_source()); 0 when the tables know no restriction.
// cpuid_01_eax: the CPU's signature, CPUID.1:EAX; core_type: for hybrid parts.
// Bits of code above the umask are ignored. On a hybrid part with core type
// none or unknown, an event is restricted only if both core types restrict it,
// to the union of their counters.
std::uint32_t gp_counter_constraint(std::uint32_t cpuid_01_eax, CoreType core_type,
                                    std::uint32_t code);
// perf's name of the event tables a CPU uses (its directory under
// tools/perf/pmu-events/arch/x86, e.g. "skylakex"), found from the signature as
// perf finds it; empty when perf has none for it.
std::string_view counter_constraints_model(std::uint32_t cpuid_01_eax);
std::string_view counter_constraints_source();  // e.g. "Linux 7.3.4"

}  // namespace archpmu
