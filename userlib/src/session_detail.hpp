// SPDX-License-Identifier: MIT
// Internal: what Session and SamplingSession share about ARCHPMU_IOC_COUNT_OPEN.
#pragma once

#include <cstdint>
#include <string>

#include "archpmu.h"
#include "archpmu/session.hpp"

namespace archpmu::detail {

// What a COUNT_OPEN refusal means, for the event and CPU it names.
std::string open_refusal(int err, const archpmu_count_open& cmd, const std::string& event);

// Why a task session was refused (ESRCH, EACCES, EOPNOTSUPP), naming the task.
std::string task_refusal(int err, const archpmu_count_open& cmd, const TaskScope& task);

// The module's capabilities, or 0 when it does not answer ARCHPMU_IOC_INFO.
std::uint64_t capabilities(int device_fd);

}  // namespace archpmu::detail
