// SPDX-License-Identifier: MIT
// archpmu selftest's judgements of counts, apart from the sessions that make
// them, so that the unit tests hold them to the numbers seen in the field.
#pragma once

#include <cstdint>

namespace archpmu::tool {

struct RingCounts {
    std::uint64_t user = 0;    // C0H/00H with USR only
    std::uint64_t kernel = 0;  // C0H/00H with OS only
};

// USR and OS split by ring when a user loop counts mostly user and reads of
// /dev/zero mostly kernel, and the loop's user:kernel ratio is at least ten
// times the reads'. The kernel's own share of a CPU (interrupts, softirqs,
// other processes in CPU scope) is in both and cancels out: on a busy host
// it alone can be a fifth of a user loop's instructions.
bool usr_os_separates(RingCounts loop, RingCounts reads);

}  // namespace archpmu::tool
