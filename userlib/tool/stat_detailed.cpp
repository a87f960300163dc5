// SPDX-License-Identifier: MIT
#include "stat_detailed.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <iterator>
#include <utility>

#include "archpmu.h"
#include "archpmu/cache_events.hpp"
#include "archpmu/error.hpp"

#include <fmt/format.h>

namespace archpmu::tool {
namespace {

// How many events each level adds up to: -d 4, -dd 10, -ddd 12.
constexpr std::array<std::size_t, 4> kLevelEnd = {0, 4, 10, 12};

// Cache event `like` (its EventSpec::cache_event, with its name, modifiers and flags) as
// `encoding` gives it: its row, or why it is not supported.
DetailedEvent row_of(const EventSpec& like, const CacheEventEncoding& encoding)
{
    DetailedEvent ev;
    ev.name = like.name;
    ev.flags = like.flags & ARCHPMU_EVENT_CORE_TYPE;
    ev.why = encoding.why;
    if (encoding.differs)
        ev.why +=
            "; count one core type's CPUs system-wide with -C, or load a newer module "
            "(ARCHPMU_CAP_CORE_TYPE)";
    if (encoding.config)
        ev.spec = encoding.encoded(like);
    return ev;
}

// Cache event `like` on `cpus`.
DetailedEvent resolve(const EventSpec& like, const std::vector<CpuInfo>& cpus)
{
    return row_of(like, cache_event_encoding(like.cache_event, cpus));
}

// A hybrid part's P- and E-cores among `cpus`, when both are counted and the module can
// keep an event to one core type: perf then opens a cache event once per core type.
bool split_by_core_type(const std::vector<CpuInfo>& cpus, bool by_core_type,
                        std::vector<CpuInfo>& core, std::vector<CpuInfo>& atom)
{
    for (const auto& cpu : cpus)
        (cpu.core_type == CoreType::atom ? atom : core).push_back(cpu);
    return by_core_type && !atom.empty() && !core.empty() &&
           std::all_of(core.begin(), core.end(),
                       [](const CpuInfo& c) { return c.core_type == CoreType::core; });
}

// `like` on each core type: cpu_core's, then cpu_atom's.
void add_per_core_type(std::vector<DetailedEvent>& out, const EventSpec& like,
                       const std::vector<CpuInfo>& core, const std::vector<CpuInfo>& atom)
{
    for (const auto& [type, of] :
         {std::pair{ARCHPMU_CORE_TYPE_CORE, &core}, std::pair{ARCHPMU_CORE_TYPE_ATOM, &atom}}) {
        EventSpec one = like;
        one.flags |= ARCHPMU_EVENT_ON_CORE_TYPE(type);
        out.push_back(resolve(one, *of));
    }
}

}  // namespace

std::vector<DetailedEvent> detailed_events(unsigned level, const std::vector<CpuInfo>& cpus,
                                           bool by_core_type)
{
    const std::size_t end = kLevelEnd[level < 3 ? level : 3];
    std::vector<CpuInfo> core;
    std::vector<CpuInfo> atom;
    const bool split = split_by_core_type(cpus, by_core_type, core, atom);
    std::vector<DetailedEvent> out;
    for (std::size_t i = 0; i < end; ++i) {
        EventSpec like;
        like.name = std::string(cache_event_names().at(i));
        like.cache_event = like.name;
        if (split)
            add_per_core_type(out, like, core, atom);
        else
            out.push_back(resolve(like, cpus));
    }
    return out;
}

std::vector<DetailedEvent> with_cache_events(const std::vector<EventSpec>& events,
                                             const std::vector<CpuInfo>& cpus, bool by_core_type)
{
    std::vector<CpuInfo> core;
    std::vector<CpuInfo> atom;
    const bool split = split_by_core_type(cpus, by_core_type, core, atom);
    std::vector<DetailedEvent> out;
    for (std::size_t i = 0; i < events.size(); ++i) {
        const EventSpec& e = events[i];
        if (e.cache_event.empty()) {
            DetailedEvent as_is;
            as_is.name = e.name;
            as_is.spec = e;
            out.push_back(std::move(as_is));
            continue;
        }
        const bool grouped = (e.flags & ARCHPMU_EVENT_GROUP) != 0 ||
                             (i + 1 < events.size() && (events[i + 1].flags & ARCHPMU_EVENT_GROUP));
        const auto type = event_core_type(e.flags);
        if (split && !type && !grouped) {
            add_per_core_type(out, e, core, atom);
            continue;
        }
        std::vector<CpuInfo> on;
        for (const auto& cpu : cpus)
            if (!type || cpu.core_type == *type)
                on.push_back(cpu);
        // No CPU of its core type: the open says so.
        if (on.empty()) {
            out.push_back(DetailedEvent{e.name, e, {}, e.flags & ARCHPMU_EVENT_CORE_TYPE});
            continue;
        }
        const auto encoding = cache_event_encoding(e.cache_event, on);
        // In a group it is not a row of its own: it counts with its group, or is refused.
        if (grouped && !encoding.config)
            throw encoding.refusal("'" + e.name + "' in a group");
        out.push_back(row_of(e, encoding));
    }
    return out;
}

StatTotals with_unopened_rows(const StatTotals& t, const std::vector<EventSpec>& rows,
                              const std::vector<bool>& opened)
{
    if (rows.empty())
        return t;
    StatTotals out = t;
    const std::size_t n_cpus = t.cpus.size();
    out.events = rows;
    out.counters.clear();
    out.multiplexed.clear();
    out.crowded_out.clear();
    out.absent.clear();
    out.per_cpu.clear();
    out.enabled_ns.clear();
    out.running_ns.clear();
    out.noise_pct.clear();
    out.run_counts.clear();
    std::size_t from = 0;
    for (std::size_t r = 0; r < rows.size(); ++r) {
        if (!opened[r]) {
            out.counters.push_back(ARCHPMU_NO_COUNTER);
            out.multiplexed.push_back(false);
            out.crowded_out.emplace_back();
            out.absent.emplace_back(n_cpus, true);
            out.per_cpu.emplace_back(n_cpus, 0);
            out.enabled_ns.emplace_back(n_cpus, 0);
            out.running_ns.emplace_back(n_cpus, 0);
            if (!t.noise_pct.empty())
                out.noise_pct.push_back(0);
            if (!t.run_counts.empty())
                out.run_counts.emplace_back(n_cpus);
            continue;
        }
        out.counters.push_back(t.counters.at(from));
        out.multiplexed.push_back(t.multiplexed.at(from));
        out.crowded_out.push_back(t.crowded_out.at(from));
        out.absent.push_back(t.absent.at(from));
        out.per_cpu.push_back(t.per_cpu.at(from));
        out.enabled_ns.push_back(t.enabled_ns.at(from));
        out.running_ns.push_back(t.running_ns.at(from));
        if (!t.noise_pct.empty())
            out.noise_pct.push_back(t.noise_pct.at(from));
        if (!t.run_counts.empty())
            out.run_counts.push_back(t.run_counts.at(from));
        ++from;
    }
    return out;
}

}  // namespace archpmu::tool
