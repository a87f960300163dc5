// SPDX-License-Identifier: MIT
// archpmu record without side-band events (kernel.perf_event_paranoid 3, Debian's
// default, lets no user open them): the recorded processes' COMM and executable
// mappings, read from /proc as their samples arrive.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "archpmu/records.hpp"

namespace archpmu::tool {

class MapsFollower {
public:
    // Records are attributed to `id` (an event whose sample_id trailer is the same).
    // data_maps: the mappings of files that are not code too (--call-graph dwarf).
    explicit MapsFollower(std::uint64_t id, bool data_maps = false) : id_(id), data_maps_(data_maps)
    {
    }

    // For a ring's records about to be written: the COMM and MMAP2 records of
    // the threads and processes its samples name that were not told yet, each
    // timed just before the first sample that needs it (so perf applies it to
    // every sample of the span). A process that exited before its first span
    // is read is not symbolised.
    std::vector<Record> before(const RingSpan& span);

private:
    std::uint64_t id_;
    bool data_maps_;
    std::set<std::pair<std::uint32_t, std::uint32_t>> threads_;  // (pid, tid) told
    std::map<std::uint32_t, std::set<std::pair<std::uint64_t, std::string>>> maps_;
};

}  // namespace archpmu::tool
