// SPDX-License-Identifier: MIT
#include "stat_topdown.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string_view>

#include "archpmu.h"
#include "archpmu/error.hpp"

namespace archpmu {
namespace {

constexpr std::string_view kSlots = "slots";
constexpr std::string_view kRetiring = "topdown-retiring";
constexpr std::string_view kBadSpec = "topdown-bad-spec";
constexpr std::string_view kFeBound = "topdown-fe-bound";
constexpr std::string_view kBeBound = "topdown-be-bound";
constexpr std::array<std::string_view, 5> kEvents = {kSlots, kRetiring, kBadSpec, kFeBound,
                                                     kBeBound};
// With PERF_METRICS: the slots event leading perf's metric events (uapi), fields 0-3,
// and level 2's, fields 4-7.
constexpr std::string_view kMetricGroup =
    "{slots,cpu/event=0x00,umask=0x80/,cpu/event=0x00,umask=0x81/,cpu/event=0x00,umask=0x82/,"
    "cpu/event=0x00,umask=0x83/";
constexpr std::string_view kMetricGroupL2 =
    ",cpu/event=0x00,umask=0x84/,cpu/event=0x00,umask=0x85/,cpu/event=0x00,umask=0x86/,"
    "cpu/event=0x00,umask=0x87/";
constexpr std::uint32_t kMetricCode = ARCHPMU_METRIC_UMASK << 8;
// Family 6 models whose PERF_METRICS has level 1 only (perf: num_topdown_events 4):
// Ice Lake, Tiger Lake, Rocket Lake, Lakefield.
constexpr std::array<unsigned, 8> kLevel1Only = {0x7d, 0x7e, 0x6a, 0x6c, 0x8c, 0x8d, 0xa7, 0x8a};

// perf's metric names (stat-shadow.c) in its order, its header width (METRIC_ONLY_LEN)
// and format; level 1's four, then level 2's eight.
constexpr std::array<std::string_view, 12> kMetricNames = {
    "Retiring",         "Bad Speculation",  "Frontend Bound",    "Backend Bound",
    "Heavy Operations", "Light Operations", "Branch Mispredict", "Machine Clears",
    "Fetch Latency",    "Fetch Bandwidth",  "Memory Bound",      "Core Bound"};
constexpr int kMetricWidth = 20;
// The --json document's keys.
constexpr std::array<std::string_view, 12> kMetricKeys = {
    "retiring",         "bad_speculation",  "frontend_bound",    "backend_bound",
    "heavy_operations", "light_operations", "branch_mispredict", "machine_clears",
    "fetch_latency",    "fetch_bandwidth",  "memory_bound",      "core_bound"};

// How many metrics a level shows.
std::size_t metrics_of(unsigned level)
{
    return level >= 2 ? kMetricNames.size() : 4;
}

std::vector<double> shares(const TopdownL1& l1, unsigned level)
{
    std::vector<double> out = {l1.retiring, l1.bad_speculation, l1.frontend_bound,
                               l1.backend_bound};
    if (level >= 2)
        out.insert(out.end(), {l1.heavy_operations, l1.light_operations, l1.branch_mispredict,
                               l1.machine_clears, l1.fetch_latency, l1.fetch_bandwidth,
                               l1.memory_bound, l1.core_bound});
    return out;
}

// Is metric m of `l1` there: level 2's where the CPUs have it.
bool shown(const std::optional<TopdownL1>& l1, std::size_t m)
{
    return l1 && (m < 4 || l1->level2);
}

bool has(const std::vector<std::string>& events, std::string_view name)
{
    return std::find(events.begin(), events.end(), name) != events.end();
}

// Level 1 is computable from these events of one PMU.
bool enough(const std::vector<std::string>& events)
{
    const bool three = has(events, kRetiring) && has(events, kFeBound) && has(events, kBeBound);
    return three && (has(events, kBadSpec) || has(events, kSlots));
}

// stat_scopes() with perf's PMU name for a label (empty when not split by core type).
std::vector<std::pair<std::string, std::vector<std::size_t>>> scopes(const StatTotals& t,
                                                                     const StatFormat& f)
{
    std::vector<std::pair<std::string, std::vector<std::size_t>>> out;
    for (auto& sc : stat_scopes(t, f))
        out.emplace_back(sc.core_type.empty() ? "" : "cpu_" + sc.core_type, std::move(sc.cpus));
    return out;
}

// Metric m as the table shows it: perf's "%8.1f%%", or why there is none.
std::string percent(const std::optional<TopdownL1>& l1, std::size_t m, double share)
{
    if (!shown(l1, m))
        return "<not supported>";
    return l1->counted ? fmt::format("{:8.1f}%", share * 100.0) : "<not counted>";
}

// The same for -x and -j: no padding, no sign.
std::string bare(const std::optional<TopdownL1>& l1, std::size_t m, double share)
{
    if (!shown(l1, m))
        return "<not supported>";
    return l1->counted ? fmt::format("{:.1f}", share * 100.0) : "<not counted>";
}

std::string human(const StatTotals& t, const StatFormat& f)
{
    fmt::memory_buffer out;
    auto it = std::back_inserter(out);
    const auto split = scopes(t, f);
    const bool labelled = split.size() > 1;
    const bool interval = f.interval_ns >= 0;
    const auto header = [&](std::string_view lead) {
        fmt::format_to(it, "{}{}", lead, labelled ? fmt::format("{:<9}", "") : "");
        for (std::size_t m = 0; m < metrics_of(f.topdown_level); ++m)
            fmt::format_to(it, "{:>{}} ", kMetricNames[m], kMetricWidth);
        fmt::format_to(it, "\n");
    };
    if (!interval) {
        fmt::format_to(it, "{}", stat_human_header(t, f));
        header("");
    } else if (f.interval_header) {
        header("#           time ");
    }
    for (const auto& [label, cpus] : split) {
        if (interval)
            fmt::format_to(it, "{} ", stat_interval_stamp(f.interval_ns));
        if (labelled)
            fmt::format_to(it, "{:<9}", label);
        const auto l1 = topdown_level1(t, cpus);
        const auto values = shares(l1.value_or(TopdownL1{}), f.topdown_level);
        for (std::size_t m = 0; m < values.size(); ++m)
            fmt::format_to(it, "{:>{}} ", percent(l1, m, values[m]), kMetricWidth);
        fmt::format_to(it, "\n");
    }
    if (!interval)
        fmt::format_to(it, "{}", stat_footer(t));
    return fmt::to_string(out);
}

// perf's metric-only -x: the names, then the values, each followed by the separator;
// a hybrid part's lines start with the PMU.
std::string csv(const StatTotals& t, const StatFormat& f)
{
    std::string out;
    const std::string& sep = f.separator;
    const auto split = scopes(t, f);
    const bool interval = f.interval_ns >= 0;
    const std::string stamp = interval ? stat_interval_stamp(f.interval_ns) + sep : std::string();
    if (!interval || f.interval_header) {
        out += interval ? " time" + sep : std::string();  // perf's prefix, then "time"
        out += split.size() > 1 ? "pmu" + sep : std::string();
        for (std::size_t m = 0; m < metrics_of(f.topdown_level); ++m)
            out.append(kMetricNames[m]).append(sep);
        out += "\n";
    }
    for (const auto& [label, cpus] : split) {
        out += stamp;
        if (split.size() > 1)
            out.append(label).append(sep);
        const auto l1 = topdown_level1(t, cpus);
        const auto values = shares(l1.value_or(TopdownL1{}), f.topdown_level);
        for (std::size_t m = 0; m < values.size(); ++m)
            out.append(bare(l1, m, values[m])).append(sep);
        out += "\n";
    }
    return out;
}

// -j: a line per metric (and core type) in the spacing of stat's other -j lines, with
// perf's "metric-value" and "metric-unit" (perf 6.1's metric-only -j repeats one key).
std::string json_lines(const StatTotals& t, const StatFormat& f)
{
    fmt::memory_buffer out;
    auto it = std::back_inserter(out);
    for (const auto& [label, cpus] : scopes(t, f)) {
        const auto l1 = topdown_level1(t, cpus);
        const auto values = shares(l1.value_or(TopdownL1{}), f.topdown_level);
        for (std::size_t m = 0; m < values.size(); ++m) {
            fmt::format_to(it, "{{");
            if (f.interval_ns >= 0)
                fmt::format_to(it, "\"interval\" : {}.{:09}, ", f.interval_ns / 1000000000,
                               f.interval_ns % 1000000000);
            if (!label.empty())
                fmt::format_to(it, R"("pmu" : "{}", )", label);
            fmt::format_to(it, R"("metric-value" : "{}", "metric-unit" : "{}"}})",
                           bare(l1, m, values[m]), kMetricNames[m]);
            fmt::format_to(it, "\n");
        }
    }
    return fmt::to_string(out);
}

}  // namespace

namespace {

// PERF_METRICS with slots: perf's metric events count there (with level 2: its too).
bool metrics_on(const CpuInfo& cpu)
{
    return cpu.perf_metrics() && has(cpu.events(), kSlots);
}

bool level2_on(const CpuInfo& cpu)
{
    const bool level1_only = cpu.family() == 6 && std::find(kLevel1Only.begin(), kLevel1Only.end(),
                                                            cpu.model()) != kLevel1Only.end();
    // A module that does not say the model: level 1, which every PERF_METRICS has.
    return metrics_on(cpu) && cpu.cpuid_01_eax != 0 && !level1_only;
}

}  // namespace

unsigned perf_metrics_fields(const CpuInfo& cpu)
{
    return level2_on(cpu) ? 8 : metrics_on(cpu) ? 4 : 0;
}

unsigned topdown_max_level(const std::vector<CpuInfo>& cpus)
{
    return std::any_of(cpus.begin(), cpus.end(), level2_on) ? 2 : 1;
}

std::vector<EventSpec> topdown_events(const std::vector<CpuInfo>& cpus, unsigned level)
{
    std::vector<std::string> any;
    bool computable = false;
    bool metrics = false;
    bool level2 = false;
    for (const auto& g : group_by_pmu(cpus)) {
        const auto events = g.pmu.events();
        // PERF_METRICS where there is one; the architectural events where not.
        if (metrics_on(g.pmu)) {
            metrics = true;
            level2 = level2 || (level >= 2 && level2_on(g.pmu));
            continue;
        }
        computable = computable || enough(events);
        for (const auto name : kEvents)
            if (has(events, name) && !has(any, name))
                any.emplace_back(name);
    }
    if (!computable && !metrics)
        throw Error(EOPNOTSUPP,
                    "--topdown: no CPU here has what level 1 needs: PERF_METRICS "
                    "(IA32_PERF_CAPABILITIES[15], Ice Lake and later P-cores) with slots, or "
                    "the architectural top-down events (CPUID.0AH:EBX: topdown-retiring, "
                    "-fe-bound and -be-bound, with -bad-spec or slots; E-cores and v6 parts)");
    std::string list;
    if (metrics)
        list = std::string(kMetricGroup) + std::string(level2 ? kMetricGroupL2 : "") + "}";
    for (const auto name : kEvents)  // perf's order, slots first
        if (has(any, name) && !(metrics && name == kSlots))
            list += (list.empty() ? "" : ",") + std::string(name);
    return parse_event_list(list);
}

std::optional<TopdownL1> topdown_level1(const StatTotals& t, const std::vector<std::size_t>& cpus)
{
    // By encoding: the names may carry modifiers (:u without CAP_PERFMON).
    const auto by_code = [&](std::uint64_t code) -> std::optional<std::size_t> {
        for (std::size_t e = 0; e < t.events.size(); ++e)
            if ((t.events[e].config & 0xffff) == code)
                return e;
        return std::nullopt;
    };
    const auto index = [&](std::string_view name) {
        return by_code(parse_event(std::string(name)).config & 0xffff);
    };
    const auto slots = index(kSlots);
    const auto retiring = index(kRetiring);
    const auto bad = index(kBadSpec);
    const auto fe = index(kFeBound);
    const auto be = index(kBeBound);
    // PERF_METRICS' fields 0-3: retiring, bad speculation, frontend, backend; then 4-7:
    // heavy operations, branch mispredicts, fetch latency, memory bound.
    std::array<std::optional<std::size_t>, 4> metric;
    std::array<std::optional<std::size_t>, 4> metric2;
    for (std::uint32_t i = 0; i < metric.size(); ++i) {
        metric[i] = by_code(kMetricCode + (i << 8));
        metric2[i] = by_code(kMetricCode + ((i + 4) << 8));
    }
    bool supported = false;
    bool level2 = true;
    double whole = 0;
    double whole2 = 0;
    std::array<double, 4> sums{};   // retiring, bad speculation, frontend, backend
    std::array<double, 4> sums2{};  // heavy operations, mispredicts, fetch latency, memory
    for (const std::size_t c : cpus) {
        const auto has = [&](const std::optional<std::size_t>& e) {
            return e && !t.absent.at(*e).at(c);
        };
        const auto count = [&](const std::optional<std::size_t>& e) {
            return static_cast<double>(t.per_cpu.at(*e).at(c));
        };
        const auto ran = [&](const std::optional<std::size_t>& e) {
            return t.running_ns.at(*e).at(c) > 0;
        };
        // PERF_METRICS: the four categories' slots, which make up all of them.
        if (std::all_of(metric.begin(), metric.end(), has)) {
            supported = true;
            const bool with2 = std::all_of(metric2.begin(), metric2.end(), has);
            level2 = level2 && with2;
            if (!ran(metric[0]))
                continue;
            double cpu_whole = 0;
            for (std::size_t i = 0; i < metric.size(); ++i) {
                sums[i] += count(metric[i]);
                cpu_whole += count(metric[i]);
            }
            whole += cpu_whole;
            if (with2) {
                for (std::size_t i = 0; i < metric2.size(); ++i)
                    sums2[i] += count(metric2[i]);
                whole2 += cpu_whole;
            }
            continue;
        }
        level2 = false;
        if (!has(retiring) || !has(fe) || !has(be) || (!has(bad) && !has(slots)))
            continue;
        supported = true;
        // Each CPU by its own events; one that missed any of them (crowded out, or
        // its tasks never ran there) adds nothing rather than a wrong share.
        const auto& whole_of = has(bad) ? bad : slots;
        if (!ran(retiring) || !ran(fe) || !ran(be) || !ran(whole_of))
            continue;
        const double three = count(retiring) + count(fe) + count(be);
        const double cpu_whole = has(bad) ? three + count(bad) : std::max(count(slots), three);
        sums[0] += count(retiring);
        sums[1] += cpu_whole - three;
        sums[2] += count(fe);
        sums[3] += count(be);
        whole += cpu_whole;
    }
    if (!supported)
        return std::nullopt;
    TopdownL1 l1;
    if (whole <= 0) {
        l1.counted = false;
        l1.level2 = level2;
        return l1;
    }
    l1.retiring = sums[0] / whole;
    l1.bad_speculation = sums[1] / whole;
    l1.frontend_bound = sums[2] / whole;
    l1.backend_bound = sums[3] / whole;
    l1.level2 = level2;
    if (whole2 > 0) {
        // As perf 6.1's stat-shadow.c: each over all slots, the rest of its category
        // the other half of the pair.
        l1.heavy_operations = sums2[0] / whole2;
        l1.light_operations = l1.retiring - l1.heavy_operations;
        l1.branch_mispredict = sums2[1] / whole2;
        l1.machine_clears = l1.bad_speculation - l1.branch_mispredict;
        l1.fetch_latency = sums2[2] / whole2;
        l1.fetch_bandwidth = l1.frontend_bound - l1.fetch_latency;
        l1.memory_bound = sums2[3] / whole2;
        l1.core_bound = l1.backend_bound - l1.memory_bound;
    }
    return l1;
}

std::string stat_topdown(const StatTotals& t, const StatFormat& f)
{
    switch (f.style) {
        case StatFormat::Style::csv:
            return csv(t, f);
        case StatFormat::Style::json_lines:
            return json_lines(t, f);
        case StatFormat::Style::json: {
            auto doc = nlohmann::ordered_json::parse(stat_json(t, f));
            nlohmann::ordered_json td;
            td["level"] = f.topdown_level;
            for (const auto& [label, cpus] : scopes(t, f)) {
                const auto l1 = topdown_level1(t, cpus);
                // null where the CPUs lack the events, a string where nothing counted.
                nlohmann::ordered_json m = nullptr;
                if (l1 && !l1->counted)
                    m = "<not counted>";
                if (l1 && l1->counted) {
                    m = nlohmann::ordered_json::object();
                    const auto values = shares(*l1, f.topdown_level);
                    for (std::size_t i = 0; i < values.size(); ++i)
                        m[std::string(kMetricKeys[i])] =
                            shown(l1, i) ? nlohmann::ordered_json(values[i] * 100.0) : nullptr;
                }
                td[label.empty() ? "all" : label] = std::move(m);
            }
            doc["topdown"] = std::move(td);
            return doc.dump(f.interval_ns >= 0 ? -1 : 2) + "\n";
        }
        case StatFormat::Style::human:
            break;
    }
    return human(t, f);
}

}  // namespace archpmu
