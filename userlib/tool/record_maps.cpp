// SPDX-License-Identifier: MIT
#include "record_maps.hpp"

#include <linux/perf_event.h>

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
    // The first sample time of each (pid, tid) new to the recording, or whose
    // process may have mapped more since.
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> first;
    span.for_each([&](const RecordRef& r) {
        // sample_type IDENTIFIER | IP | TID | TIME: pid and tid at 24, time at 32.
        if (r.type() != PERF_RECORD_SAMPLE || r.size() < 40 || r.u32(24) == 0)
            return;
        const auto key = std::make_pair(r.u32(24), r.u32(28));
        const std::uint64_t time = record_time(r);
        auto it = first.find(key);
        if (it == first.end() || time < it->second)
            first[key] = time;
    });
    std::vector<Record> out;
    std::map<std::uint32_t, std::uint64_t> process_first;
    for (const auto& [key, time] : first) {
        const auto [pid, tid] = key;
        const std::uint64_t at = time ? time - 1 : 0;
        auto p = process_first.find(pid);
        if (p == process_first.end() || at < p->second)
            process_first[pid] = at;
        if (threads_.count(key))
            continue;
        std::string comm =
            slurp("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm");
        if (!comm.empty() && comm.back() == '\n')
            comm.pop_back();
        if (comm.empty())
            continue;  // gone: tried again at its next sample
        threads_.insert(key);
        out.push_back(make_comm_record(pid, tid, comm, at, id_));
    }
    for (const auto& [pid, at] : process_first) {
        auto& told = maps_[pid];
        const std::string text = slurp("/proc/" + std::to_string(pid) + "/maps");
        for (const auto& m : data_maps_ ? parse_file_maps(text) : parse_exec_maps(text))
            if (told.emplace(m.start, m.path).second)
                out.push_back(make_mmap2_record(pid, pid, m, at, id_));
    }
    return out;
}

}  // namespace archpmu::tool
