// SPDX-License-Identifier: MIT
// archpmu: the side-band records perf report needs to name what samples hit
// (COMM, MMAP2, FORK, EXIT), from perf's own dummy software event on each CPU,
// and synthesised from /proc for what already runs.
#pragma once

#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "archpmu/records.hpp"
#include "archpmu/sampling.hpp"
#include "archpmu/unique_fd.hpp"

namespace archpmu {

// The online CPUs (/sys/devices/system/cpu/online), ascending.
std::vector<std::uint32_t> online_cpus();

// The dummy event's attribute: PERF_COUNT_SW_DUMMY with comm, mmap, mmap2, task,
// sample_id_all, sample_type IDENTIFIER | TID | TIME | ID | CPU, CLOCK_MONOTONIC.
perf_event_attr sideband_attr();

// A thread whose side-band records a Sideband takes, with the threads and children
// it creates from now on (perf's inherit); from its first exec with enable_on_exec.
struct SidebandTarget {
    pid_t tid = 0;
    bool enable_on_exec = false;
};

// A dummy event on each CPU, with a perf ring per CPU: of every task, or of the
// targets (one event per target and CPU, each CPU's writing into one ring, as perf
// record shares them). Move-only; throws archpmu::Error (with perf_event_open's
// errno) when an event cannot be opened. Every task needs CAP_PERFMON (or
// kernel.perf_event_paranoid <= 0); one's own threads, paranoid <= 2.
class Sideband {
public:
    // data_maps: the mappings of files that are not code too (perf's mmap_data), which
    // a DWARF unwinder reads unwind tables from (--call-graph dwarf).
    explicit Sideband(std::vector<std::uint32_t> cpus, std::uint32_t ring_pages = 64,
                      const std::vector<SidebandTarget>& targets = {}, bool data_maps = false);

    // The kernel's id of each CPU's event (PERF_EVENT_IOC_ID), in cpus order.
    [[nodiscard]] const std::vector<std::uint64_t>& ids() const noexcept { return ids_; }
    [[nodiscard]] const std::vector<std::uint32_t>& cpus() const noexcept { return cpus_; }
    // What the events were opened with, for the perf.data header.
    [[nodiscard]] const perf_event_attr& attr() const noexcept { return attr_; }
    // The files of the events that own the rings, for poll().
    [[nodiscard]] std::vector<int> fds() const;
    // Every record available in every ring; returns how many.
    std::size_t drain(const std::function<void(Record&&)>& sink);
    // The same in place, ring by ring (read_ring_span).
    std::size_t drain_spans(const std::function<void(const RingSpan&)>& sink);

private:
    std::vector<std::uint32_t> cpus_;
    perf_event_attr attr_{};
    std::vector<std::uint64_t> ids_;
    std::size_t page_size_ = 0;
    std::vector<UniqueFd> fds_;
    std::vector<int> owners_;     // of fds_, those whose events own a CPU's ring
    std::vector<Mapping> rings_;  // unmapped before the files close
};

// Records built as the kernel would have written them; each ends with the
// sample_id trailer (pid, tid, time, id, cpu 0, identifier id).
Record make_comm_record(std::uint32_t pid, std::uint32_t tid, const std::string& comm,
                        std::uint64_t time, std::uint64_t id);
struct MapEntry {
    std::uint64_t start = 0;
    std::uint64_t end = 0;
    std::uint64_t pgoff = 0;
    std::uint32_t maj = 0;
    std::uint32_t min = 0;
    std::uint64_t ino = 0;
    std::uint32_t prot = 0;   // PROT_*
    std::uint32_t flags = 0;  // MAP_PRIVATE or MAP_SHARED
    std::string path;
};
Record make_mmap2_record(std::uint32_t pid, std::uint32_t tid, const MapEntry& map,
                         std::uint64_t time, std::uint64_t id);
// The kernel text as perf synthesises it: an MMAP of pid -1 named
// "[kernel.kallsyms]_text" from `text` (the address of _text) to the top.
Record make_kernel_mmap_record(std::uint64_t text, std::uint64_t time, std::uint64_t id);
// The samples a ring of CPU `cpu` dropped, as perf record (6.0 on) writes each event's
// PERF_FORMAT_LOST count at the end: perf report's "Total Lost Samples". Time 0, as
// perf's, so that perf delivers it unordered.
Record make_lost_samples_record(std::uint64_t lost, std::uint32_t cpu, std::uint64_t id);

// The executable mappings of one /proc/PID/maps text.
std::vector<MapEntry> parse_exec_maps(const std::string& maps_text);
// Those and the mappings of files that are not code (what data_maps records).
std::vector<MapEntry> parse_file_maps(const std::string& maps_text);

// COMM records of every thread and MMAP2 records of every process's executable
// mappings, from /proc, and the kernel's MMAP from /proc/kallsyms. Processes that
// vanish meanwhile are skipped; a line for *warnings when the kernel text could
// not be found (kptr_restrict).
std::vector<Record> synthesize_system(std::uint64_t time, std::uint64_t id,
                                      std::vector<std::string>* warnings = nullptr,
                                      bool data_maps = false);
// The same for the processes `pids` only (and the kernel's MMAP).
std::vector<Record> synthesize_processes(const std::vector<pid_t>& pids, std::uint64_t time,
                                         std::uint64_t id,
                                         std::vector<std::string>* warnings = nullptr,
                                         bool data_maps = false);

}  // namespace archpmu
