// SPDX-License-Identifier: MIT
#include "record_maps.hpp"

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

std::vector<Record> MapsFollower::before(const std::vector<Record>& round)
{
    // The first sample time of each (pid, tid) new to the recording, or whose
    // process may have mapped more since.
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> first;
    for (const auto& r : round) {
        const auto s = parse_sample(r, SampleFormat{});  // the fixed fields only
        if (!s || s->pid == 0)
            continue;
        const auto key = std::make_pair(s->pid, s->tid);
        auto it = first.find(key);
        if (it == first.end() || s->time < it->second)
            first[key] = s->time;
    }
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
