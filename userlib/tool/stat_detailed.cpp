// SPDX-License-Identifier: MIT
#include "stat_detailed.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <utility>

#include "archpmu.h"

#include <fmt/format.h>

namespace archpmu::tool {
namespace {

// Which cores a row is for: every core of a non-hybrid part, or a hybrid part's
// P-cores or E-cores (with its LP E-cores).
enum class Unit : std::uint8_t { any, core, atom };
using U = Unit;

constexpr std::size_t kEntries = 12;
constexpr std::int64_t kInvalid = -1;  // perf: -EINVAL
constexpr std::int64_t kOffcore = -2;  // needs OFFCORE_RSP_x

struct CacheRow {
    unsigned family;
    unsigned model;
    Unit unit;
    std::array<std::int64_t, kEntries> encodings;
};

#include "cache_events_table.inc"

// perf's names, in the order of the table's columns and of builtin-stat.c's
// detailed_attrs (-d), very_detailed_attrs (-dd), very_very_detailed_attrs (-ddd).
constexpr std::array<std::string_view, kEntries> kNames = {
    "L1-dcache-loads",  "L1-dcache-load-misses", "LLC-loads",
    "LLC-load-misses",  "L1-icache-loads",       "L1-icache-load-misses",
    "dTLB-loads",       "dTLB-load-misses",      "iTLB-loads",
    "iTLB-load-misses", "L1-dcache-prefetches",  "L1-dcache-prefetch-misses"};
// How many columns each level adds up to: -d 4, -dd 10, -ddd 12.
constexpr std::array<std::size_t, 4> kLevelEnd = {0, 4, 10, 12};

const CacheRow* find_row(const CpuInfo& cpu)
{
    const unsigned family = cpu.family();
    const unsigned model = cpu.model();
    const Unit want = cpu.core_type == CoreType::core   ? Unit::core
                      : cpu.core_type == CoreType::atom ? Unit::atom
                                                        : Unit::any;
    // A hybrid model whose CPUID does not say hybrid: Alder and Raptor Lake with their
    // E-cores off, which the kernel sets up as their P-cores (later models get no
    // PMU from the kernel then; their P-cores' encodings are the best guess).
    const CacheRow* other = nullptr;
    for (const auto& row : kCacheRows) {
        if (row.family != family || row.model != model)
            continue;
        if (row.unit == want)
            return &row;
        if (row.unit == Unit::any || (want == Unit::any && row.unit == Unit::core))
            other = &row;
    }
    return other;
}

}  // namespace

namespace {

// Detailed event `i` as `name` on `cpus`, or why it is not supported there.
DetailedEvent resolve(std::size_t i, std::string name, const std::vector<CpuInfo>& cpus)
{
    DetailedEvent ev;
    ev.name = std::move(name);
    std::int64_t encoding = 0;
    bool first = true;
    bool unknown = false;
    for (const auto& cpu : cpus) {
        const CacheRow* row = find_row(cpu);
        std::int64_t here = row ? row->encodings[i] : 0;
        here = here == kInvalid ? 0 : here;  // both are perf's <not supported>
        unknown = unknown || cpu.cpuid_01_eax == 0;
        if (first) {
            encoding = here;
            first = false;
        } else if (here != encoding) {
            ev.why = "its encoding differs between the CPUs counted (CPU " +
                     std::to_string(cpu.cpu) +
                     "'s core type); count one core type's CPUs system-wide with -C, or load "
                     "a newer module (ARCHPMU_CAP_CORE_TYPE)";
            return ev;
        }
    }
    if (encoding == kOffcore)
        ev.why =
            "it needs OFFCORE_RSP (OMR on the newest parts), a model-specific MSR "
            "archpmu does not program";
    else if (encoding == 0 && unknown)
        ev.why = "the module does not report the CPU model (CPUID.1:EAX): update it";
    else if (encoding == 0)
        ev.why = "the CPU model has no such event (perf says <not supported> too)";
    if (ev.why.empty()) {
        EventSpec spec;
        spec.name = ev.name;
        spec.config = static_cast<std::uint64_t>(encoding);
        ev.spec = spec;
    }
    return ev;
}

}  // namespace

std::vector<DetailedEvent> detailed_events(unsigned level, const std::vector<CpuInfo>& cpus,
                                           bool by_core_type)
{
    const std::size_t end = kLevelEnd[level < 3 ? level : 3];
    // A hybrid part's core types counted together: an event per core type, as perf's
    // cpu_core/.../ and cpu_atom/.../, where the module can keep one to its type.
    std::vector<CpuInfo> core;
    std::vector<CpuInfo> atom;
    for (const auto& cpu : cpus)
        (cpu.core_type == CoreType::atom ? atom : core).push_back(cpu);
    const bool split = by_core_type && !atom.empty() && !core.empty() &&
                       std::all_of(core.begin(), core.end(),
                                   [](const CpuInfo& c) { return c.core_type == CoreType::core; });
    std::vector<DetailedEvent> out;
    for (std::size_t i = 0; i < end; ++i) {
        const std::string name(kNames[i]);
        if (!split) {
            out.push_back(resolve(i, name, cpus));
            continue;
        }
        for (const auto& [type, of] :
             {std::pair{ARCHPMU_CORE_TYPE_CORE, &core}, std::pair{ARCHPMU_CORE_TYPE_ATOM, &atom}}) {
            auto ev = resolve(i, name, *of);
            ev.flags = ARCHPMU_EVENT_ON_CORE_TYPE(type);
            if (ev.spec)
                ev.spec->flags |= ev.flags;
            out.push_back(std::move(ev));
        }
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
        ++from;
    }
    return out;
}

bool detailed_event_name(std::string_view name)
{
    return std::find(kNames.begin(), kNames.end(), name) != kNames.end();
}

std::string_view cache_table_source()
{
    return kCacheTableSource;
}

}  // namespace archpmu::tool
