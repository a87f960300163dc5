// SPDX-License-Identifier: MIT
// archpmu: perf's generic cache events (L1-dcache-loads, dTLB-load-misses, ...), which
// perf's users name in `-e` and `stat -d`, encoded per CPU model and core type as the
// Linux kernel encodes them (arch/x86/events/intel/core.c's hw_cache_event_ids tables).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "archpmu/error.hpp"
#include "archpmu/events.hpp"
#include "archpmu/pmu.hpp"

namespace archpmu {

// The names archpmu knows, in perf's order of `stat -d` (the first 4), `-dd` (up to
// iTLB-load-misses) and `-ddd` (all 12).
const std::array<std::string_view, 12>& cache_event_names();

// `name` in perf's spelling when it is one of them, in any case; else empty.
std::string_view cache_event_name(std::string_view name);

// How a generic cache event counts on a set of CPUs.
struct CacheEventEncoding {
    // The PERFEVTSEL image's event | umask << 8 | cmask << 24 and the like (EventSpec's
    // config), the same on every CPU; empty: not counted there.
    std::optional<std::uint64_t> config;
    // Why not (perf's <not supported>): the model has no encoding, it needs OFFCORE_RSP or
    // OMR (model-specific MSRs archpmu never writes), the module does not report the CPU
    // model, or the CPUs encode it differently (a hybrid part's core types: `differs`).
    std::string why;
    bool differs = false;
    std::string_view name;  // the event's name in perf's spelling

    // `spec` (a cache event: EventSpec::cache_event) as the module takes it, where `config`
    // is set: the encoding added to its modifiers' bits, ARCHPMU_EVENT_RAW (the kernel's
    // table encodes it for the model; CPUID's availability bits say nothing about it, as
    // for perf's cache events), cache_event cleared.
    [[nodiscard]] EventSpec encoded(EventSpec spec) const;

    // The refusal of an event that cannot count, for `shown` (the event as the user
    // wrote it, quoted): EINVAL where the core types encode it differently, naming its
    // cpu_core/NAME/ and cpu_atom/NAME/ forms; else EOPNOTSUPP with `why`.
    [[nodiscard]] Error refusal(const std::string& shown) const;
};

// `name` (one of cache_event_names(), any case) on `cpus`, by their CPUID signature
// (CpuInfo::cpuid_01_eax) and core type. Throws archpmu::Error (EINVAL) for another name.
CacheEventEncoding cache_event_encoding(std::string_view name, const std::vector<CpuInfo>& cpus);

// "Linux 7.3.4": the kernel whose tables these are.
std::string_view cache_event_table_source();

}  // namespace archpmu
