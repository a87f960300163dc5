// SPDX-License-Identifier: MIT
// archpmu stat -d, -dd, -ddd: perf's detailed events (L1 data and instruction caches,
// last level cache, TLBs), encoded for the CPU model as the kernel encodes perf's
// generic cache events.
#pragma once

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
};

// perf 6.1's events of `level` (1: -d, 2: -dd, 3 and more: -ddd), in perf's order,
// for `cpus`. An event is not supported where the kernel's table has no encoding for
// a CPU's model (or no table: that model's perf has none either), where the
// encoding needs OFFCORE_RSP (an MSR outside the architectural PMU, which archpmu never
// writes), or where CPUs that are counted together encode it differently (the P- and
// E-cores of a hybrid part).
std::vector<DetailedEvent> detailed_events(unsigned level, const std::vector<CpuInfo>& cpus);

// The report's rows: `rows`, of which those `opened` are t's events, in order; the
// others are perf's <not supported> rows (absent on every CPU, never counted). rows
// empty: t as it is.
StatTotals with_unopened_rows(const StatTotals& t, const std::vector<EventSpec>& rows,
                              const std::vector<bool>& opened);

// One of perf's detailed events' names ("dTLB-loads"), without modifiers.
bool detailed_event_name(std::string_view name);

// "Linux 7.3.4": the kernel whose tables these are.
std::string_view cache_table_source();

}  // namespace archpmu::tool
