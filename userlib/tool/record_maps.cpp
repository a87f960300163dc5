// SPDX-License-Identifier: MIT
#include "record_maps.hpp"

#include <linux/perf_event.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
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

std::string comm_of(std::uint32_t pid, std::uint32_t tid)
{
    std::string comm =
        slurp("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm");
    if (!comm.empty() && comm.back() == '\n')
        comm.pop_back();
    return comm;
}

}  // namespace

// An exec shows as new mappings of a process told before: its threads' new
// names go before them, marked as perf marks an exec's COMM.
void MapsFollower::renamed(std::uint32_t pid, std::vector<Record>& out)
{
    for (auto it = threads_.lower_bound({pid, 0}); it != threads_.end() && it->first.first == pid;
         ++it) {
        const std::string comm = comm_of(pid, it->first.second);
        if (comm.empty() || comm == it->second)
            continue;
        it->second = comm;
        Record r = make_comm_record(pid, it->first.second, comm, round_floor_, id_);
        r.misc = PERF_RECORD_MISC_COMM_EXEC;
        std::memcpy(r.bytes.data() + 4, &r.misc, sizeof(r.misc));
        out.push_back(std::move(r));
    }
}

std::vector<Record> MapsFollower::before(const RingSpan& span)
{
    // The threads and processes the samples name.
    std::set<std::pair<std::uint32_t, std::uint32_t>> named;
    span.for_each([&](const RecordRef& r) {
        if (r.type() != PERF_RECORD_SAMPLE || r.size() < sample_offset::time + 8)
            return;
        newest_ = std::max(newest_, record_time(r));
        if (r.u32(sample_offset::pid) != 0)
            named.emplace(r.u32(sample_offset::pid), r.u32(sample_offset::tid));
    });
    std::vector<Record> out;
    std::set<std::uint32_t> processes;
    for (const auto& key : named) {
        const auto [pid, tid] = key;
        processes.insert(pid);
        if (threads_.count(key))
            continue;
        const std::string comm = comm_of(pid, tid);
        if (comm.empty())
            continue;  // gone: tried again at its next sample
        threads_.emplace(key, comm);
        out.push_back(make_comm_record(pid, tid, comm, round_floor_, id_));
    }
    for (const std::uint32_t pid : processes) {
        if (!read_this_round_.insert(pid).second)
            continue;
        auto& told = maps_[pid];
        const bool known = !told.empty();
        const std::string text = slurp("/proc/" + std::to_string(pid) + "/maps");
        std::vector<Record> mmaps;
        for (const auto& m : data_maps_ ? parse_file_maps(text) : parse_exec_maps(text))
            if (told.emplace(m.start, m.path).second)
                mmaps.push_back(make_mmap2_record(pid, pid, m, round_floor_, id_));
        if (known && !mmaps.empty())
            renamed(pid, out);
        std::move(mmaps.begin(), mmaps.end(), std::back_inserter(out));
    }
    return out;
}

void MapsFollower::end_round()
{
    round_floor_ = newest_;
    read_this_round_.clear();
}

}  // namespace archpmu::tool
