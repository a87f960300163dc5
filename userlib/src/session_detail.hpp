// SPDX-License-Identifier: MIT
// Internal: what Session and SamplingSession share about ARCHPMU_IOC_COUNT_OPEN.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "archpmu.h"
#include "archpmu/session.hpp"

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

// The module's capabilities, or 0 when it does not answer ARCHPMU_IOC_INFO.
std::uint64_t capabilities(int device_fd);

}  // namespace archpmu::detail
