// SPDX-License-Identifier: MIT
// archpmu stat -d, -dd, -ddd: perf's detailed events (L1 data and instruction caches,
// last level cache, TLBs), encoded for the CPU model as the kernel encodes perf's
// generic cache events.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "archpmu/events.hpp"
#include "archpmu/pmu.hpp"
#include "stat_report.hpp"

namespace archpmu::tool {

// One detailed event of perf stat: its perf name and how it counts on the CPUs asked
// for, or why it does not (perf's <not supported>).
struct DetailedEvent {
    std::string name;               // "L1-dcache-loads"
    std::optional<EventSpec> spec;  // empty: not supported
    std::string why;                // empty, or why not supported
    std::uint32_t flags = 0;        // ARCHPMU_EVENT_ON_CORE_TYPE: one core type's event
};

// perf 6.1's events of `level` (1: -d, 2: -dd, 3 and more: -ddd), in perf's order,
// for `cpus`. An event is not supported where the kernel's table has no encoding for
// a CPU's model (or no table: that model's perf has none either), where the
// encoding needs OFFCORE_RSP (an MSR outside the architectural PMU, which archpmu never
// writes), or where CPUs that are counted together encode it differently (the P- and
// E-cores of a hybrid part). With `by_core_type` (a module with ARCHPMU_CAP_CORE_TYPE),
// a hybrid part's P- and E-cores counted together get an event each, for its core type
// (perf's cpu_core/L1-dcache-loads/ and cpu_atom/L1-dcache-loads/), P-cores first.
std::vector<DetailedEvent> detailed_events(unsigned level, const std::vector<CpuInfo>& cpus,
                                           bool by_core_type);

// `events` as rows of the report, in order, with -e's cache events (EventSpec::cache_event)
// encoded for `cpus` as perf's: one that cannot be counted there is a <not supported> row,
// and, where `by_core_type` and a hybrid part's P- and E-cores are counted together, one
// outside a group is an event per core type (cpu_core/NAME/ and cpu_atom/NAME/). A cache
// event in a group that cannot be counted (or would need both core types) is refused:
// archpmu::Error names it and says why. Every other event is a row as it is.
std::vector<DetailedEvent> with_cache_events(const std::vector<EventSpec>& events,
                                             const std::vector<CpuInfo>& cpus, bool by_core_type);

// The report's rows: `rows`, of which those `opened` are t's events, in order; the
// others are perf's <not supported> rows (absent on every CPU, never counted). rows
// empty: t as it is.
StatTotals with_unopened_rows(const StatTotals& t, const std::vector<EventSpec>& rows,
                              const std::vector<bool>& opened);

}  // namespace archpmu::tool
