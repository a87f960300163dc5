// SPDX-License-Identifier: MIT
#include "archpmu/pmu.hpp"

#include "archpmu.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <system_error>

#include "archpmu/error.hpp"

namespace archpmu {
namespace {

// Name of architectural event n at index n, from the ABI header's table.
constexpr std::array<std::string_view, kArchEventCount> make_event_names()
{
    std::array<std::string_view, kArchEventCount> names{};
#define ARCHPMU_EVENT_NAME_AT(bit, name, event, umask) names.at(bit) = (name);
    ARCHPMU_ARCH_EVENT_TABLE(ARCHPMU_EVENT_NAME_AT)
#undef ARCHPMU_EVENT_NAME_AT
    return names;
}

constexpr std::array<std::string_view, kArchEventCount> kEventNames = make_event_names();

constexpr std::size_t unnamed_events()
{
    std::size_t unnamed = 0;
    for (const auto name : kEventNames)
        unnamed += name.empty() ? 1 : 0;
    return unnamed;
}

static_assert(ARCHPMU_NR_ARCH_EVENTS == kArchEventCount);
static_assert(unnamed_events() == 0, "ARCHPMU_ARCH_EVENT_TABLE leaves an event bit unnamed");

}  // namespace

std::string_view to_string(Backend backend)
{
    switch (backend) {
        case Backend::hw:
            return "hw";
        case Backend::model:
            return "model";
        case Backend::unknown:
            break;
    }
    return "unknown";
}

CoreType core_type_of(std::uint32_t raw)
{
    switch (raw) {
        case ARCHPMU_CORE_TYPE_NONE:
            return CoreType::none;
        case ARCHPMU_CORE_TYPE_ATOM:
            return CoreType::atom;
        case ARCHPMU_CORE_TYPE_CORE:
            return CoreType::core;
        default:
            return CoreType::unknown;
    }
}

std::optional<CoreType> event_core_type(std::uint32_t event_flags)
{
    const std::uint32_t raw =
        (event_flags & ARCHPMU_EVENT_CORE_TYPE) >> ARCHPMU_EVENT_CORE_TYPE_SHIFT;
    return raw ? std::optional<CoreType>(core_type_of(raw)) : std::nullopt;
}

std::string_view to_string(CoreType type)
{
    switch (type) {
        case CoreType::core:
            return "core";
        case CoreType::atom:
            return "atom";
        case CoreType::none:
            return "none";
        case CoreType::unknown:
            break;
    }
    return "unknown";
}

std::string_view to_string(Privilege privilege)
{
    switch (privilege) {
        case Privilege::none:
            return "off";
        case Privilege::own_user:
            return "own-user";
        case Privilege::all:
            break;
    }
    return "all";
}

std::string_view arch_event_name(unsigned bit)
{
    return bit < kEventNames.size() ? kEventNames[bit] : std::string_view{};
}

std::uint32_t arch_event_code(unsigned bit)
{
    switch (bit) {
#define ARCHPMU_CODE_CASE(id, name, event, umask) \
    case id:                                      \
        return (event) | (umask) << 8;
        ARCHPMU_ARCH_EVENT_TABLE(ARCHPMU_CODE_CASE)
#undef ARCHPMU_CODE_CASE
        default:
            return 0;
    }
}

bool is_arch_event_encoding(std::uint64_t config)
{
    for (unsigned bit = 0; bit < kArchEventCount; ++bit)
        if ((config & 0xffff) == arch_event_code(bit))
            return true;
    return false;
}

bool CpuInfo::anythread_deprecated() const
{
    return (pmu_flags & ARCHPMU_PMU_ANYTHREAD_DEPRECATED) != 0;
}

bool CpuInfo::full_width_write() const
{
    return (pmu_flags & ARCHPMU_PMU_FULL_WIDTH_WRITE) != 0;
}

unsigned CpuInfo::family() const
{
    const unsigned family = (cpuid_01_eax >> 8) & 0xf;
    return family == 0xf ? family + ((cpuid_01_eax >> 20) & 0xff) : family;
}

unsigned CpuInfo::model() const
{
    const unsigned model = (cpuid_01_eax >> 4) & 0xf;
    return family() == 0x6 || family() >= 0xf ? model | ((cpuid_01_eax >> 16) & 0xf) << 4 : model;
}

bool CpuInfo::perf_metrics() const
{
    return (pmu_flags & ARCHPMU_PMU_PERF_METRICS) != 0;
}

bool CpuInfo::hybrid() const
{
    return (pmu_flags & ARCHPMU_PMU_HYBRID) != 0;
}

bool CpuInfo::tsx_force_abort() const
{
    return (pmu_flags & ARCHPMU_PMU_TSX_FORCE_ABORT) != 0;
}

std::vector<unsigned> CpuInfo::fixed_counters() const
{
    std::vector<unsigned> out;
    for (unsigned j = 0; j < 64; ++j)
        if (fixed_mask & (1ULL << j))
            out.push_back(j);
    return out;
}

std::vector<std::string> CpuInfo::events() const
{
    std::vector<std::string> out;
    for (unsigned n = 0; n < kArchEventCount; ++n)
        if (events_mask & (1ULL << n))
            out.emplace_back(arch_event_name(n));
    return out;
}

bool CpuInfo::same_pmu(const CpuInfo& o) const
{
    return version == o.version && pmu_flags == o.pmu_flags && core_type == o.core_type &&
           native_model_id == o.native_model_id && gp_width == o.gp_width &&
           fixed_width == o.fixed_width && events_len == o.events_len && gp_mask == o.gp_mask &&
           fixed_mask == o.fixed_mask && events_mask == o.events_mask &&
           perf_capabilities == o.perf_capabilities;
}

std::vector<PmuGroup> group_by_pmu(const std::vector<CpuInfo>& cpus)
{
    std::vector<PmuGroup> groups;
    for (const auto& c : cpus) {
        bool placed = false;
        for (auto& g : groups) {
            if (g.pmu.same_pmu(c)) {
                g.cpus.push_back(c.cpu);
                placed = true;
                break;
            }
        }
        if (!placed)
            groups.push_back(PmuGroup{c, {c.cpu}});
    }
    return groups;
}

std::string format_cpu_list(const std::vector<std::uint32_t>& cpus)
{
    std::string out;
    for (std::size_t i = 0; i < cpus.size();) {
        std::size_t j = i;
        while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1)
            ++j;
        if (!out.empty())
            out += ',';
        out += std::to_string(cpus[i]);
        if (j > i)
            out += '-' + std::to_string(cpus[j]);
        i = j + 1;
    }
    return out;
}

std::vector<std::uint32_t> parse_cpu_list(std::string_view text)
{
    const auto fail = [&](const std::string& why) {
        throw Error(EINVAL, "bad CPU list '" + std::string(text) + "': " + why + "; give CPUs 0-" +
                                std::to_string(kMaxCpuNumber) + " as N or N-M, comma-separated");
    };
    if (text.empty())
        fail("it is empty");
    // One CPU number of an item; digits only.
    const auto number = [&](std::string_view item, std::string_view digits) {
        if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos)
            fail("'" + std::string(item) + "' is not a CPU number or range");
        std::uint64_t value = 0;
        const auto result = std::from_chars(digits.data(), digits.data() + digits.size(), value);
        if (result.ec != std::errc{} || value > kMaxCpuNumber)
            fail("CPU " + std::string(digits) + " is out of range");
        return static_cast<std::uint32_t>(value);
    };
    std::vector<std::uint32_t> cpus;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        std::size_t end = text.find(',', pos);
        if (end == std::string_view::npos)
            end = text.size();
        const std::string_view item = text.substr(pos, end - pos);
        if (item.empty())
            fail("an empty item");
        const std::size_t dash = item.find('-');
        const std::uint32_t first = number(item, item.substr(0, dash));
        const std::uint32_t last =
            dash == std::string_view::npos ? first : number(item, item.substr(dash + 1));
        if (last < first)
            fail("range " + std::string(item) + " runs backwards");
        for (std::uint32_t c = first; c <= last; ++c)
            cpus.push_back(c);
        pos = end + 1;
    }
    std::sort(cpus.begin(), cpus.end());
    const auto twice = std::adjacent_find(cpus.begin(), cpus.end());
    if (twice != cpus.end())
        fail("CPU " + std::to_string(*twice) + " is listed twice");
    return cpus;
}

}  // namespace archpmu
