// SPDX-License-Identifier: MIT
// archpmu: `archpmu stat --topdown`, levels 1 and 2 of Yasin's top-down method from
// PERF_METRICS' metric events or the architectural top-down events (CPUID.0AH:EBX bits
// 7-11), in perf 6.1's metric-only layout.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "archpmu/events.hpp"
#include "archpmu/pmu.hpp"
#include "stat_format.hpp"

namespace archpmu {

// The four level-1 shares of the issue slots, in perf's order, each 0-1, and where the
// CPUs have them, level 2's eight as perf 6.1 derives them (light operations are
// retiring less heavy operations, and so on).
struct TopdownL1 {
    double retiring = 0;
    double bad_speculation = 0;
    double frontend_bound = 0;
    double backend_bound = 0;
    bool counted = true;  // false: no slot was counted (perf's <not counted>)
    bool level2 = false;  // the level-2 shares below are there
    double heavy_operations = 0;
    double light_operations = 0;
    double branch_mispredict = 0;
    double machine_clears = 0;
    double fetch_latency = 0;
    double fetch_bandwidth = 0;
    double memory_bound = 0;
    double core_bound = 0;
};

// How many of PERF_METRICS' metric events (uapi: event 00H, umask 80H + i) `cpu` counts:
// 0 (no PERF_METRICS or no slots), 4 (level 1) or 8 (level 2 too, as perf's tables say).
unsigned perf_metrics_fields(const CpuInfo& cpu);

// The highest level these CPUs have: 2 where PERF_METRICS has level 2 (Sapphire Rapids,
// Alder Lake's P-cores and later, as perf's tables say; not Ice, Tiger or Rocket Lake),
// else 1.
unsigned topdown_max_level(const std::vector<CpuInfo>& cpus);

// The events to open for `level` (1 or 2) on these CPUs: where a CPU has PERF_METRICS,
// slots leading perf's metric events (level 2's too where it has them); else those of
// slots, topdown-retiring, topdown-bad-spec, topdown-fe-bound and topdown-be-bound some CPU
// has. Throws Error (EOPNOTSUPP) naming why when no CPU has enough of them: the four
// categories, or slots and the three other than bad speculation (the Arrow Lake P-core's).
std::vector<EventSpec> topdown_events(const std::vector<CpuInfo>& cpus, unsigned level = 1);

// Level 1 (and 2 where the events are there) from the counts of the events topdown_events() gave,
// over the CPUs `cpus` (indices into t.cpus): the categories over their sum, as perf's
// td_metric_ratio(), or without bad speculation over slots, bad speculation being what is left; not
// counted when there were none. None when the CPUs lack those events.
std::optional<TopdownL1> topdown_level1(const StatTotals& t, const std::vector<std::size_t>& cpus);

// The report in f.style: perf's metric-only table (a header of the metric names, a
// line of percentages; per core type on a hybrid part), its -x and -j forms, or the
// --json document's events with "topdown".
std::string stat_topdown(const StatTotals& t, const StatFormat& f);

}  // namespace archpmu
