// SPDX-License-Identifier: MIT
// Internal: a session's ARCHPMU_IOC_COUNT_OPEN, its events and its refusals.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "archpmu.h"
#include "archpmu/session.hpp"

// Not exported from libarchpmu.so: the library's insides.
#pragma GCC visibility push(hidden)
namespace archpmu::detail {

// What a COUNT_OPEN refusal means, for the event and CPU it names (`ev`: that
// event as the module got it, or null).
std::string open_refusal(int err, const archpmu_count_open& cmd, const std::string& event,
                         const archpmu_event* ev = nullptr);

// The events as COUNT_OPEN takes them. Where the module takes counter
// constraints (ARCHPMU_CAP_COUNTER_MASK), each model-specific event carries the
// GP counters perf's event tables allow it on the session's CPUs (empty: every
// CPU), unless its flags give them already (archpmu/counter_constraints.hpp).
std::vector<archpmu_event> module_events(int device_fd, std::uint64_t caps,
                                         const std::vector<EventSpec>& events,
                                         const std::vector<std::uint32_t>& cpus);

// Why a task session was refused (ESRCH, EACCES, EOPNOTSUPP), naming the task.
std::string task_refusal(int err, const archpmu_count_open& cmd, const TaskScope& task);

// The refusals only sampling has: ERANGE, and EINVAL with no event named.
std::string sampling_refusal(int err, const archpmu_count_open& cmd, const std::string& event);

// perf's scaling: value * enabled / running (multiplexing); 0 if never running.
inline std::uint64_t scale(std::uint64_t value, std::uint64_t enabled, std::uint64_t running)
{
    if (running == 0)
        return 0;
    if (running >= enabled)
        return value;
    const long double estimate = static_cast<long double>(value) * enabled / running;
    constexpr auto most = static_cast<long double>(UINT64_MAX);
    return estimate >= most ? UINT64_MAX : static_cast<std::uint64_t>(estimate);
}

// The module's capabilities, or 0 when it does not answer ARCHPMU_IOC_INFO.
std::uint64_t capabilities(int device_fd);

}  // namespace archpmu::detail
#pragma GCC visibility pop
