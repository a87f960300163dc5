// SPDX-License-Identifier: MIT
// archpmu: a writer of perf.data files (tools/perf/Documentation/
// perf.data-file-format.txt) that `perf report` and `perf script` read.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "archpmu/events.hpp"
#include "archpmu/records.hpp"
#include "archpmu/sampling.hpp"
#include "archpmu/unique_fd.hpp"

namespace archpmu {

// perf's feature bits (tools/perf/util/header.h) the writer sets.
enum PerfFeature : unsigned {
    kFeatBuildId = 2,
    kFeatHostname = 3,
    kFeatOsRelease = 4,
    kFeatVersion = 5,
    kFeatArch = 6,
    kFeatNrCpus = 7,
    kFeatCpuDesc = 8,
    kFeatCpuId = 9,
    kFeatCmdline = 11,
    kFeatEventDesc = 12,
    kFeatSampleTime = 21,
    kFeatClockId = 23,
    kFeatClockData = 29,
};

inline constexpr std::uint64_t kPerfFileHeaderSize = 104;  // struct perf_file_header

// One event of the file: its attribute, its name (as perf report shows it)
// and the ids its records carry.
struct PerfEventDesc {
    perf_event_attr attr{};
    std::string name;
    std::vector<std::uint64_t> ids;
};

// What the feature sections say about the machine and the recording.
struct PerfDataInfo {
    std::string hostname;    // uname -n
    std::string os_release;  // uname -r
    std::string arch;        // uname -m
    std::string version = "archpmu";
    std::string cpu_desc;  // /proc/cpuinfo model name; empty: no section
    std::string cpu_id;    // vendor,family,model,stepping; empty: no section
    std::uint32_t nr_cpus_available = 0;
    std::uint32_t nr_cpus_online = 0;
    std::vector<std::string> cmdline;
    // CLOCK_MONOTONIC and the wall clock read at the same time (HEADER_CLOCK_DATA).
    std::uint64_t wall_clock_ns = 0;
    std::uint64_t monotonic_ns = 0;
};

// This machine's PerfDataInfo, with the command line given.
PerfDataInfo host_perf_data_info(std::vector<std::string> cmdline);

// The attribute perf would have for a sampled archpmu event: PERF_TYPE_HARDWARE
// for the generic events perf has names for, else PERF_TYPE_RAW with the
// PERFEVTSEL image; sample_type IDENTIFIER | IP | TID | TIME | ID | CPU | PERIOD
// (| READ with read_format GROUP | ID) (| CALLCHAIN), sample_id_all, CLOCK_MONOTONIC.
perf_event_attr perf_attr_for(const EventSpec& event, bool read_group, bool callchain = false);
// The same for samples with what `sampling` asks (user_stack: REGS_USER and
// STACK_USER, with exclude_callchain_user, as perf record --call-graph dwarf).
perf_event_attr perf_attr_for(const EventSpec& event, const SamplingOptions& sampling);

// Writes a perf.data file: the header and attributes first, the records as
// they come, and at finish() the feature sections and the final header, with
// the build ids of the kernel and of every file its MMAP and MMAP2 records
// map (perf record --buildid-all's HEADER_BUILD_ID: perf report matches the
// files by them), read from the files then. A
// writer that never finishes (its process killed) leaves a file perf reads up
// to its last checkpoint(), without features; before any, perf refuses it.
// Move-only; every method throws archpmu::Error.
class PerfDataWriter {
public:
    PerfDataWriter(const std::string& path, std::vector<PerfEventDesc> events, PerfDataInfo info);
    // Into a file already open for writing (empty); name is what messages call it.
    PerfDataWriter(UniqueFd fd, std::string name, std::vector<PerfEventDesc> events,
                   PerfDataInfo info);
    PerfDataWriter(PerfDataWriter&&) noexcept = default;
    PerfDataWriter& operator=(PerfDataWriter&&) noexcept = default;
    ~PerfDataWriter() = default;

    // One record, copied verbatim (its size must be a multiple of 8).
    void write(const Record& record);
    void write(const std::vector<Record>& records);
    // A ring's records as they lie in it (read_ring_span), with no copy between.
    void write(const RingSpan& span);
    // Writes what it holds, and a header that covers it: a file perf reads
    // should the writer never finish. Two system calls.
    void checkpoint();
    // Writes the features and the header; the writer takes no more records.
    void finish();

    [[nodiscard]] std::uint64_t data_bytes() const noexcept { return data_size_; }
    [[nodiscard]] std::uint64_t samples() const noexcept { return samples_; }
    [[nodiscard]] std::uint64_t file_bytes() const noexcept { return offset_; }

private:
    void put(const void* data, std::size_t size);
    void flush();
    void write_all(const std::uint8_t* data, std::size_t size);
    void count_sample(std::uint64_t time) noexcept;
    void pwrite_all(const void* data, std::size_t size, std::uint64_t offset);
    void write_header(const std::uint64_t (&features)[4]);
    void note_mapping(std::uint32_t type, std::uint16_t misc, const std::uint8_t* bytes,
                      std::size_t size);

    std::string path_;
    std::vector<PerfEventDesc> events_;
    PerfDataInfo info_;
    UniqueFd fd_;
    std::vector<std::uint8_t> buf_;
    std::uint64_t offset_ = 0;  // of the end of what put() took
    std::uint64_t attrs_offset_ = 0;
    std::uint64_t data_offset_ = 0;
    std::uint64_t data_size_ = 0;
    std::uint64_t samples_ = 0;
    std::uint64_t first_time_ = ~0ULL;
    std::uint64_t last_time_ = 0;
    bool finished_ = false;
    std::set<std::string> mapped_files_;  // by the MMAP and MMAP2 records, for their build ids
    bool kernel_mapped_ = false;
};

}  // namespace archpmu
