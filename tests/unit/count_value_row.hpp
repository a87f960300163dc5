// SPDX-License-Identifier: MIT
// One row of a session's read, for the tests that sum or serve them.
#pragma once

#include <cstdint>

#include "archpmu/session.hpp"

namespace archpmu::unit {

inline archpmu::CountValue row(std::uint32_t cpu, std::uint32_t event, std::uint64_t value,
                               std::uint64_t enabled, std::uint64_t running)
{
    archpmu::CountValue v;
    v.cpu = cpu;
    v.event = event;
    v.value = value;
    v.time_enabled_ns = enabled;
    v.time_running_ns = running;
    return v;
}

}  // namespace archpmu::unit
