// SPDX-License-Identifier: MIT
// archpmu: Intel's model-specific event names, from libpfm4 (the library PAPI
// uses) for the CPU at hand, rather than a hand-kept table.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace archpmu {

// One event of the CPU's core PMU as libpfm4 knows it, encoded for archpmu.
struct PfmEvent {
    std::string name;          // perf's spelling: EVENT.UMASK (upper case)
    std::string description;   // libpfm4's
    std::uint64_t config = 0;  // event | umask << 8 | edge, any, inv, cmask (EventSpec::config)
};

// The Intel core PMU libpfm4 found on this machine (LIBPFM_FORCE_PMU=NAME picks
// one), with its events that archpmu can program: encodings that need another
// MSR (offcore response, load latency) or bits archpmu does not set (TSX
// filters) are left out. Empty on other vendors. The architectural events are
// archpmu's own (events.hpp); libpfm4's generic ix86arch table is not used.
std::string pfm_pmu_name();  // "skl", or "" without an Intel core PMU
std::vector<PfmEvent> pfm_events();

// The encoding of an Intel event name for this CPU: EVENT.UMASK (perf's, any
// case), EVENT:UMASK or EVENT (its default unit mask, libpfm4's spellings).
// nullopt when libpfm4 does not know the name here; throws archpmu::Error
// (EINVAL) naming the event when it needs what archpmu cannot program.
std::optional<std::uint64_t> pfm_event_config(const std::string& name);

}  // namespace archpmu
