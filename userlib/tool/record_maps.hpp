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
    // the threads and processes its samples name that were not told yet (a
    // process's maps are read once a round). They are timed at the end of the
    // previous round, before every sample of this round in every ring, so perf
    // applies them to each of them. A process that exited before its first
    // round is read is not symbolised. A process that execs is named again.
    std::vector<Record> before(const RingSpan& span);
    // The round's rings are all written: the next round's records go after its samples.
    void end_round();

private:
    void renamed(std::uint32_t pid, std::vector<Record>& out);

    std::uint64_t id_;
    bool data_maps_;
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::string> threads_;  // (pid, tid): comm
    std::map<std::uint32_t, std::set<std::pair<std::uint64_t, std::string>>> maps_;
    std::set<std::uint32_t> read_this_round_;  // processes whose maps were read
    std::uint64_t round_floor_ = 0;            // the newest sample time of earlier rounds
    std::uint64_t newest_ = 0;                 // ... and of this one
};

}  // namespace archpmu::tool
