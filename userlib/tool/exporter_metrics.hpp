// SPDX-License-Identifier: MIT
// What `archpmu exporter` serves: one scrape's counts as Prometheus metric families,
// named by Prometheus' naming guide (docs/exporter.md lists them).
#pragma once

#include <prometheus/metric_family.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "archpmu/pmu.hpp"
#include "archpmu/sampling.hpp"
#include "archpmu/session.hpp"

namespace archpmu::tool {

// An event's family: archpmu_<event>_total, the event's name without its core type's
// PMU (cpu_core/cycles/ and cpu_atom/cycles/ are both archpmu_cycles_total, told apart by
// the CPUs' core_type label), in lower case, every run of other characters than letters
// and digits one '_': "L1-dcache-loads:u" is archpmu_l1_dcache_loads_u_total.
std::string event_family_name(std::string_view event);
// The event label of the time families: the event's name without its core type's PMU.
std::string event_label(std::string_view event);

// Two events of one family must count on different CPUs (cpu_core/ and cpu_atom/):
// throws archpmu::Error (EINVAL) naming both and the family otherwise.
void check_family_names(const std::vector<EventSpec>& events);

// One scrape: the session's state and, when up, its read.
struct ScrapeView {
    bool up = false;                // a session counts (the module is there and took it)
    std::vector<EventSpec> events;  // the session's
    Snapshot snapshot;              // its read
    std::vector<CpuInfo> cpus;      // the enumeration at the session's open
    Backend backend = Backend::unknown;
    std::uint64_t sessions_opened = 0;  // by this exporter: each one restarted the counts
    // Every archpmu session's throttles and lost samples on the session's CPUs, as
    // last read (an offline CPU's stay).
    std::vector<CpuSamplingTotals> sampling;
};

// What a session's scrapes reported of each event on each CPU. perf's scaling of a
// multiplexed event is an estimate that can fall between two reads, and a counter that
// falls is a reset to Prometheus' rate(): each report is at least the last.
class ReportedCounts {
public:
    std::uint64_t at_least_last(std::uint32_t cpu, std::uint32_t event, std::uint64_t scaled);
    void clear() { last_.clear(); }

private:
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> last_;
};

// Every family of a scrape, each with its HELP: archpmu_up, archpmu_sessions_opened_total,
// archpmu_pmu_info, archpmu_cpu_online, each event's family,
// archpmu_enabled_seconds_total / archpmu_running_seconds_total per event and CPU, and
// archpmu_throttled_total / archpmu_lost_samples_total per CPU. An
// event's count is scaled as perf scales it; where it did not count at all (never on
// the PMU, or the CPU's core type lacks it) the CPU has no sample of it.
std::vector<prometheus::MetricFamily> scrape_families(const ScrapeView& view,
                                                      ReportedCounts& reported);

}  // namespace archpmu::tool
