// SPDX-License-Identifier: MIT
#include "list.hpp"

#include <fnmatch.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "archpmu.h"
#include "archpmu/cache_events.hpp"
#include "archpmu/counter_constraints.hpp"
#include "archpmu/device.hpp"
#include "archpmu/error.hpp"
#include "archpmu/events.hpp"
#include "archpmu/pfm_events.hpp"
#include "archpmu/pmu.hpp"
#include "stat_topdown.hpp"

namespace archpmu::tool {
namespace {

// perf list's PATTERN: a glob, else a substring, in any case (a substring is the glob
// *PATTERN* with no escapes).
bool matches(const std::string& name, const std::string& pattern)
{
    if (pattern.empty())
        return true;
    if (pattern.find_first_of("*?[") != std::string::npos)
        return ::fnmatch(pattern.c_str(), name.c_str(), FNM_CASEFOLD) == 0;
    const std::string substring = "*" + pattern + "*";
    return ::fnmatch(substring.c_str(), name.c_str(), FNM_CASEFOLD | FNM_NOESCAPE) == 0;
}

// The counters archpmu places architectural event `bit` on, by its name as stat takes
// it, for one PMU (as the module's allocator does: the fixed counter of its encoding
// among the four it places events on by themselves, on v2 and later; the GP counters
// the module drives (Info::max_gp_counters), not GP 3 under TSX_FORCE_ABORT, unless the
// encoding is a fixed counter's own, event 00H, as perf's ref-cycles); and those the PMU
// has beyond what the module drives. The four auto-placed fixed counters are
// module/pmu/arch_pmu.h's, not in the ABI.
struct ArchCounters {
    std::vector<std::uint32_t> fixed;
    std::vector<std::uint32_t> gp;
    std::vector<std::uint32_t> gp_not_driven;
};

ArchCounters arch_counters(const CpuInfo& pmu, unsigned bit, std::uint32_t max_gp)
{
    constexpr std::uint32_t kFixedCodes[] = {
#define ARCHPMU_FIXED_CODE(j, event, umask) (event) | (umask) << 8,
        ARCHPMU_FIXED_EVENT_TABLE(ARCHPMU_FIXED_CODE)
#undef ARCHPMU_FIXED_CODE
    };
    constexpr std::uint32_t kAutoPlacedFixed = 4;
    ArchCounters c;
    const auto code =
        static_cast<std::uint32_t>(parse_event(std::string(arch_event_name(bit))).config & 0xffff);
    const bool fixed_only = (code & 0xff) == 0;
    for (std::uint32_t j = 0; j < kAutoPlacedFixed; ++j)
        if (kFixedCodes[j] == code && pmu.version >= 2 && (pmu.fixed_mask & (1ULL << j)))
            c.fixed.push_back(j);
    for (std::uint32_t n = 0; n < 64 && !fixed_only; ++n) {
        if (!(pmu.gp_mask & (1ULL << n)))
            continue;
        // GP 8 and up have addresses only on v6 (IA32_PMC_GPn_CTR at 1900H + 4n).
        if (n >= max_gp || (n >= 8 && pmu.version < 6))
            c.gp_not_driven.push_back(n);
        else if (!(n == 3 && pmu.tsx_force_abort()))
            c.gp.push_back(n);
    }
    return c;
}

std::string counters_text(const ArchCounters& c)
{
    std::string text;
    for (const auto j : c.fixed)
        text += (text.empty() ? "fixed" : ", fixed") + std::to_string(j);
    if (!c.gp.empty())
        text += (text.empty() ? "gp" : ", gp") + format_cpu_list(c.gp);
    if (text.empty())
        text = "no counter";
    if (!c.gp_not_driven.empty())
        text += " (gp" + format_cpu_list(c.gp_not_driven) + " not driven)";
    return text;
}

// Which CPUs (and, on a hybrid part, which core types) have architectural event `bit`,
// and its counters on each PMU that has it.
struct Availability {
    std::vector<std::uint32_t> cpus;
    std::vector<std::string> core_types;  // hybrid only: the types that have it
    std::vector<std::string> lacking;     // hybrid only: the types that do not
    // Per PMU that has it: its core type on a hybrid part (else empty), its counters.
    std::vector<std::pair<std::string, ArchCounters>> counters;
};

Availability availability(const std::vector<CpuInfo>& cpus, unsigned bit, std::uint32_t max_gp)
{
    Availability a;
    const std::string name(arch_event_name(bit));
    for (const auto& g : group_by_pmu(cpus)) {
        const auto events = g.pmu.events();
        const bool has = std::find(events.begin(), events.end(), name) != events.end();
        if (has) {
            a.cpus.insert(a.cpus.end(), g.cpus.begin(), g.cpus.end());
            a.counters.emplace_back(g.pmu.hybrid() ? std::string(to_string(g.pmu.core_type)) : "",
                                    arch_counters(g.pmu, bit, max_gp));
        }
        if (!g.pmu.hybrid())
            continue;
        auto& into = has ? a.core_types : a.lacking;
        const std::string type(to_string(g.pmu.core_type));
        if (std::find(into.begin(), into.end(), type) == into.end())
            into.push_back(type);
    }
    std::sort(a.cpus.begin(), a.cpus.end());
    return a;
}

std::string describe(const Availability& a, std::size_t ncpus)
{
    if (a.cpus.empty())
        return "on no CPU";
    std::string text =
        a.cpus.size() == ncpus ? "on every CPU" : "on CPUs " + format_cpu_list(a.cpus);
    if (!a.lacking.empty()) {
        std::string types;
        for (const auto& t : a.core_types)
            types += (types.empty() ? "" : ", ") + t;
        text += " (" + types + ")";
    }
    return text;
}

bool is_top_down(unsigned bit)
{
    return bit >= ARCHPMU_EVENT_TOPDOWN_SLOTS && bit <= ARCHPMU_EVENT_TOPDOWN_RETIRING;
}

// The GP counters perf's tables allow `config` on, per core type of the CPUs
// (one entry without a hybrid part); empty when nothing restricts it.
std::vector<std::pair<std::string, std::vector<std::uint32_t>>> gp_constraint(
    const std::vector<CpuInfo>& cpus, std::uint64_t config)
{
    std::vector<std::pair<std::string, std::vector<std::uint32_t>>> out;
    std::vector<std::pair<std::uint32_t, CoreType>> seen;
    for (const auto& c : cpus) {
        const std::pair<std::uint32_t, CoreType> kind{c.cpuid_01_eax, c.core_type};
        if (std::find(seen.begin(), seen.end(), kind) != seen.end())
            continue;
        seen.push_back(kind);
        const std::uint32_t mask =
            gp_counter_constraint(kind.first, kind.second, static_cast<std::uint32_t>(config));
        std::vector<std::uint32_t> gp;
        for (std::uint32_t n = 0; n < 16; ++n)
            if (mask & (1U << n))
                gp.push_back(n);
        if (!gp.empty())
            out.emplace_back(c.hybrid() ? std::string(to_string(c.core_type)) : "", gp);
    }
    return out;
}

// JSON: null when any GP counter will do, else {core type, or "all": [counters]}.
nlohmann::ordered_json constraint_json(
    const std::vector<std::pair<std::string, std::vector<std::uint32_t>>>& c)
{
    if (c.empty())
        return nullptr;
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (const auto& [type, gp] : c)
        j[type.empty() ? "all" : type] = gp;
    return j;
}

std::string constraint_text(
    const std::vector<std::pair<std::string, std::vector<std::uint32_t>>>& c)
{
    std::string text;
    for (const auto& [type, gp] : c)
        text += (text.empty() ? "  only gp" : ", gp") + format_cpu_list(gp) +
                (type.empty() ? "" : " on " + type);
    return text;
}

// PERF_METRICS' metric events by perf's names (uapi: event 00H, umask 80H + i).
constexpr std::array<std::string_view, ARCHPMU_NR_METRICS> kMetricEvents = {
    "topdown-retiring",  "topdown-bad-spec",      "topdown-fe-bound",  "topdown-be-bound",
    "topdown-heavy-ops", "topdown-br-mispredict", "topdown-fetch-lat", "topdown-mem-bound"};

// The CPUs that count metric event i.
std::vector<std::uint32_t> metric_cpus(const std::vector<CpuInfo>& cpus, unsigned i)
{
    std::vector<std::uint32_t> out;
    for (const auto& c : cpus)
        if (perf_metrics_fields(c) > i)
            out.push_back(c.cpu);
    return out;
}

std::string metric_config(unsigned i)
{
    return fmt::format("cpu/event=0x00,umask={:#x}/", ARCHPMU_METRIC_UMASK + i);
}

// `cpus` by core type ("" for a part that is not hybrid), P-cores first, as perf's
// cpu_core/ before cpu_atom/.
std::vector<std::pair<std::string, std::vector<CpuInfo>>> by_core_type(
    const std::vector<CpuInfo>& cpus)
{
    std::vector<std::pair<std::string, std::vector<CpuInfo>>> out;
    for (const CoreType type :
         {CoreType::core, CoreType::atom, CoreType::unknown, CoreType::none}) {
        std::vector<CpuInfo> of;
        for (const auto& c : cpus)
            if ((c.hybrid() ? c.core_type : CoreType::none) == type)
                of.push_back(c);
        if (!of.empty())
            out.emplace_back(type == CoreType::none ? std::string() : std::string(to_string(type)),
                             std::move(of));
    }
    return out;
}

}  // namespace

int run_list(const std::string& device, bool json, const std::string& pattern)
{
    // Without the module the names are still listed, without availability.
    std::optional<Info> info;
    std::vector<CpuInfo> cpus;
    try {
        const Device dev(device);
        info = dev.info();
        cpus = dev.all_cpu_info();
    } catch (const Error& e) {
        std::cerr << "archpmu list: " << e.what() << "; availability not shown\n";
    }
    const bool model = info && info->backend == Backend::model;
    const auto types = by_core_type(cpus);
    const std::string pmu = pfm_pmu_name();
    std::vector<PfmEvent> specific;
    for (auto& e : pfm_events())
        if (matches(e.name, pattern))
            specific.push_back(std::move(e));

    if (json) {
        nlohmann::ordered_json doc;
        doc["backend"] = info ? nlohmann::ordered_json(std::string(to_string(info->backend)))
                              : nlohmann::ordered_json(nullptr);
        doc["pmu"] = pmu.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(pmu);
        doc["architectural"] = nlohmann::ordered_json::array();
        for (unsigned bit = 0; bit < kArchEventCount; ++bit) {
            const std::string name(arch_event_name(bit));
            if (!matches(name, pattern))
                continue;
            nlohmann::ordered_json j;
            j["name"] = name;
            j["config"] = fmt::format("{:#x}", arch_event_code(bit));
            j["top_down"] = is_top_down(bit);
            if (info) {
                const auto a = availability(cpus, bit, info->max_gp_counters);
                j["cpus"] = a.cpus;
                j["core_types"] = a.core_types;
                // {core type, or "all": {fixed, gp, gp_not_driven}} per PMU that has it.
                j["counters"] = nlohmann::ordered_json::object();
                for (const auto& [type, c] : a.counters)
                    j["counters"][type.empty() ? "all" : type] = {
                        {"fixed", c.fixed}, {"gp", c.gp}, {"gp_not_driven", c.gp_not_driven}};
            }
            doc["architectural"].push_back(std::move(j));
        }
        // Where a CPU has PERF_METRICS (a module that drives it).
        doc["metrics"] = nlohmann::ordered_json::array();
        for (unsigned i = 0;
             info && (info->capabilities & ARCHPMU_CAP_PERF_METRICS) && i < kMetricEvents.size();
             ++i) {
            const auto where = metric_cpus(cpus, i);
            if (where.empty() || !matches(std::string(kMetricEvents[i]), pattern))
                continue;
            doc["metrics"].push_back({{"name", kMetricEvents[i]},
                                      {"event", metric_config(i)},
                                      {"level", i < 4 ? 1 : 2},
                                      {"cpus", where}});
        }
        // perf's cache events: {core type, or "all": config or null, why} per core type.
        doc["cache"] = nlohmann::ordered_json::array();
        for (const auto name : cache_event_names()) {
            if (!matches(std::string(name), pattern))
                continue;
            nlohmann::ordered_json j;
            j["name"] = name;
            j["encodings"] = nlohmann::ordered_json::object();
            for (const auto& [type, of] : types) {
                const auto enc = cache_event_encoding(name, of);
                j["encodings"][type.empty() ? "all" : type] = {
                    {"config", enc.config
                                   ? nlohmann::ordered_json(fmt::format("{:#x}", *enc.config))
                                   : nlohmann::ordered_json(nullptr)},
                    {"why", enc.why}};
            }
            doc["cache"].push_back(std::move(j));
        }
        doc["model_specific"] = nlohmann::ordered_json::array();
        for (const auto& e : specific)
            doc["model_specific"].push_back(
                {{"name", e.name},
                 {"config", fmt::format("{:#x}", e.config)},
                 {"description", e.description},
                 {"counts", !model || is_arch_event_encoding(e.config)},
                 {"gp_counters", constraint_json(gp_constraint(cpus, e.config))}});
        std::cout << doc.dump(2) << '\n';
        return 0;
    }

    std::cout << "Architectural events (CPUID leaf 0AH)"
              << (info ? std::string(", backend ") + std::string(to_string(info->backend)) : "")
              << ":\n";
    for (unsigned bit = 0; bit < kArchEventCount; ++bit) {
        const std::string name(arch_event_name(bit));
        if (!matches(name, pattern))
            continue;
        const std::uint32_t code = arch_event_code(bit);
        std::string where;
        if (info) {
            const auto a = availability(cpus, bit, info->max_gp_counters);
            where = describe(a, cpus.size());
            std::string counters;
            for (const auto& [type, c] : a.counters)
                counters += (counters.empty() ? "" : "; ") + counters_text(c) +
                            (type.empty() ? "" : " on " + type);
            if (!counters.empty())
                where += ": " + counters;
        }
        std::cout << fmt::format("  {:<20} {:02X}H/{:02X}H  {:<8}  {}\n", name, code & 0xff,
                                 code >> 8, is_top_down(bit) ? "top-down" : "", where);
    }
    bool metrics_header = false;
    for (unsigned i = 0;
         info && (info->capabilities & ARCHPMU_CAP_PERF_METRICS) && i < kMetricEvents.size(); ++i) {
        const auto where = metric_cpus(cpus, i);
        if (where.empty() || !matches(std::string(kMetricEvents[i]), pattern))
            continue;
        if (!metrics_header)
            std::cout << "\nTop-down metric events (PERF_METRICS) by perf's names, given as "
                         "their encoding in a group led by slots, {slots,cpu/event=0x00,"
                         "umask=0x80/,...} (topdown-retiring by name is the architectural "
                         "C2H/02H):\n";
        metrics_header = true;
        std::cout << fmt::format("  {:<24} {:<28} level {}  CPUs {}\n", kMetricEvents[i],
                                 metric_config(i), i < 4 ? 1 : 2, format_cpu_list(where));
    }
    bool cache_header = false;
    for (const auto name : cache_event_names()) {
        if (!matches(std::string(name), pattern))
            continue;
        if (!cache_header)
            std::cout << "\nperf's cache events, encoded per CPU model as " +
                             std::string(cache_event_table_source()) + " encodes them:\n";
        cache_header = true;
        std::string where;
        for (const auto& [type, of] : types) {
            const auto enc = cache_event_encoding(name, of);
            where += (where.empty() ? "" : "; ") + (type.empty() ? "" : type + " ") +
                     (enc.config ? fmt::format("{:#x}", *enc.config) : "not supported");
        }
        std::cout << (where.empty() ? fmt::format("  {}\n", name)
                                    : fmt::format("  {:<26} {}\n", name, where));
    }
    if (pmu.empty()) {
        std::cout
            << "\nNo model-specific events: libpfm4 knows no Intel core PMU on this machine.\n";
        return 0;
    }
    std::cout << "\nModel-specific events of " << pmu << " (libpfm4)"
              << (model ? "; the model backend counts only those that encode an architectural "
                          "event, the others count nothing"
                        : "")
              << ":\n";
    for (const auto& e : specific) {
        std::cout << fmt::format("  {:<48} {:#010x}{}{}\n", e.name, e.config,
                                 constraint_text(gp_constraint(cpus, e.config)),
                                 model && !is_arch_event_encoding(e.config) ? "  (counts nothing "
                                                                              "on the model)"
                                                                            : "");
        if (!e.description.empty())
            std::cout << "      " << e.description << '\n';
    }
    return 0;
}

}  // namespace archpmu::tool
