// SPDX-License-Identifier: MIT
// The events as ARCHPMU_IOC_COUNT_OPEN takes them: perf's cache events encoded for
// the CPUs, with the GP counters perf's event tables allow each model-specific event on.
#include <sys/ioctl.h>

#include <cerrno>
#include <optional>
#include <set>
#include <utility>

#include "archpmu/cache_events.hpp"
#include "archpmu/counter_constraints.hpp"
#include "archpmu/error.hpp"
#include "archpmu/pmu.hpp"
#include "ioctl_cmd.hpp"
#include "session_detail.hpp"

namespace archpmu::detail {
namespace {

// The (signature, core type) of each kind of CPU among `cpus` (empty: every CPU).
std::set<std::pair<std::uint32_t, CoreType>> cpu_kinds(int fd, std::vector<std::uint32_t> cpus)
{
    if (cpus.empty()) {
        auto info = zeroed_cmd<archpmu_info>();
        if (::ioctl(fd, ARCHPMU_IOC_INFO, &info) != 0)
            return {};
        for (std::uint32_t cpu = 0; cpu < info.nr_cpu_ids; ++cpu)
            cpus.push_back(cpu);
    }
    std::set<std::pair<std::uint32_t, CoreType>> kinds;
    for (const auto cpu : cpus) {
        try {
            const CpuInfo c = cpu_info(fd, cpu);
            if (c.version)
                kinds.emplace(c.cpuid_01_eax, c.core_type);
        } catch (const Error&) {
            // offline or absent: COUNT_OPEN says so
        }
    }
    return kinds;
}

// The GP counters an event may use on every kind of CPU it counts on (where they
// have none in common, on either): 0 when none restricts it.
std::uint32_t gp_mask(const std::set<std::pair<std::uint32_t, CoreType>>& kinds,
                      const archpmu_event& ev)
{
    const std::uint32_t code = ev.config & 0xffff;
    const auto only = event_core_type(ev.flags);
    std::uint32_t common = ~0U;
    std::uint32_t either = 0;
    for (const auto& [signature, type] : kinds) {
        if (only && type != *only)
            continue;
        const std::uint32_t m = gp_counter_constraint(signature, type, code);
        common &= m ? m : ~0U;
        either |= m ? m : ~0U;
    }
    const std::uint32_t mask = common ? common : either;
    return mask == ~0U ? 0 : mask & 0xffff;
}

// Cache event `spec` encoded for the kinds of CPU it counts on (its core type's, when
// it names one), or a refusal that says why not.
EventSpec encode_cache_event(const std::set<std::pair<std::uint32_t, CoreType>>& kinds,
                             const EventSpec& spec)
{
    const auto only = event_core_type(spec.flags);
    std::vector<CpuInfo> cpus;
    for (const auto& [signature, type] : kinds) {
        if (only && type != *only)
            continue;
        CpuInfo c;
        c.cpuid_01_eax = signature;
        c.core_type = type;
        cpus.push_back(c);
    }
    if (cpus.empty() && only)
        throw Error(ENOENT, "event '" + spec.name + "' counts on cpu_" +
                                std::string(to_string(*only)) +
                                " CPUs only, and the session has none ('archpmu info' shows each "
                                "CPU's core type)");
    const auto encoding = cache_event_encoding(spec.cache_event, cpus);
    if (encoding.config)
        return encoding.encoded(spec);
    throw encoding.refusal("'" + spec.name + "'");
}

}  // namespace

std::vector<archpmu_event> module_events(int device_fd, std::uint64_t caps,
                                         const std::vector<EventSpec>& events,
                                         const std::vector<std::uint32_t>& cpus)
{
    std::vector<archpmu_event> evs(events.size());
    bool model_specific = false;
    std::size_t lead = 0;
    std::optional<std::set<std::pair<std::uint32_t, CoreType>>> kinds;
    for (std::size_t i = 0; i < events.size(); ++i) {
        evs[i].config = events[i].config;
        evs[i].flags = events[i].flags;
        evs[i].counter = events[i].counter;
        if (!events[i].cache_event.empty()) {
            if (!kinds)
                kinds = cpu_kinds(device_fd, cpus);
            const EventSpec encoded = encode_cache_event(*kinds, events[i]);
            evs[i].config = encoded.config;
            evs[i].flags = encoded.flags;
        }
        model_specific = model_specific || !is_arch_event_encoding(evs[i].config);
        if ((evs[i].flags & ARCHPMU_EVENT_CORE_TYPE) && !(caps & ARCHPMU_CAP_CORE_TYPE))
            throw Error(EOPNOTSUPP, "'" + events[i].name +
                                        "': an event for one core type needs a newer "
                                        "archpmu module (ARCHPMU_CAP_CORE_TYPE)");
        // As the module checks it, with the names it cannot give.
        if (i && (evs[i].flags & ARCHPMU_EVENT_GROUP) &&
            event_core_type(evs[i].flags) != event_core_type(evs[lead].flags))
            throw Error(EINVAL, "'" + events[i].name +
                                    "': a group's events are all for its "
                                    "leader's core type ('" +
                                    events[lead].name + "')");
        if (!(evs[i].flags & ARCHPMU_EVENT_GROUP))
            lead = i;
    }
    if (!(caps & ARCHPMU_CAP_COUNTER_MASK) || !model_specific)
        return evs;
    if (!kinds)
        kinds = cpu_kinds(device_fd, cpus);
    for (auto& e : evs)
        if (!(e.flags & ARCHPMU_EVENT_GP_MASK))
            e.flags |= ARCHPMU_EVENT_GP_COUNTERS(gp_mask(*kinds, e));
    return evs;
}

}  // namespace archpmu::detail
