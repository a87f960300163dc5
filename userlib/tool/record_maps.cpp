// SPDX-License-Identifier: MIT
#include "record_maps.hpp"

#include <linux/perf_event.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "archpmu/sideband.hpp"

namespace archpmu::tool {
namespace {

std::string slurp(const std::string& path)
{
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

std::vector<Record> MapsFollower::before(const RingSpan& span)
{
    // The threads and processes the samples name.
    std::set<std::pair<std::uint32_t, std::uint32_t>> named;
    span.for_each([&](const RecordRef& r) {
        // sample_type IDENTIFIER | IP | TID | TIME: pid and tid at 24, time at 32.
        if (r.type() != PERF_RECORD_SAMPLE || r.size() < 40)
            return;
        newest_ = std::max(newest_, record_time(r));
        if (r.u32(24) != 0)
            named.emplace(r.u32(24), r.u32(28));
    });
    std::vector<Record> out;
    std::set<std::uint32_t> processes;
    for (const auto& key : named) {
        const auto [pid, tid] = key;
        processes.insert(pid);
        if (threads_.count(key))
            continue;
        std::string comm =
            slurp("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm");
        if (!comm.empty() && comm.back() == '\n')
            comm.pop_back();
        if (comm.empty())
            continue;  // gone: tried again at its next sample
        threads_.insert(key);
        out.push_back(make_comm_record(pid, tid, comm, round_floor_, id_));
    }
    for (const std::uint32_t pid : processes) {
        if (!read_this_round_.insert(pid).second)
            continue;
        auto& told = maps_[pid];
        const std::string text = slurp("/proc/" + std::to_string(pid) + "/maps");
        for (const auto& m : data_maps_ ? parse_file_maps(text) : parse_exec_maps(text))
            if (told.emplace(m.start, m.path).second)
                out.push_back(make_mmap2_record(pid, pid, m, round_floor_, id_));
    }
    return out;
}

void MapsFollower::end_round()
{
    round_floor_ = newest_;
    read_this_round_.clear();
}

}  // namespace archpmu::tool
