// SPDX-License-Identifier: MIT
// archpmu: perf records as the sampling rings carry them, read from a ring and
// merged across rings in time order. Pure code: no kernel needed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <queue>
#include <vector>

namespace archpmu {

// One record copied out of a ring: perf's header fields and the whole record
// (header included), as it goes into a perf.data file.
struct Record {
    std::uint32_t type = 0;  // PERF_RECORD_* (ARCHPMU_RECORD_*)
    std::uint16_t misc = 0;
    std::vector<std::uint8_t> bytes;

    [[nodiscard]] std::size_t size() const noexcept { return bytes.size(); }
};

// Every record of the archpmu rings and of the side-band rings ends with this
// trailer (sample_id_all with sample_type IDENTIFIER | TID | TIME | ID | CPU).
struct SampleId {
    std::uint32_t pid = 0;
    std::uint32_t tid = 0;
    std::uint64_t time = 0;
    std::uint64_t id = 0;
    std::uint32_t cpu = 0;
};
inline constexpr std::size_t kSampleIdSize = 40;

// A sample record (sample_type IDENTIFIER | IP | TID | TIME | ID | CPU | PERIOD,
// then READ with read_format GROUP | ID, then CALLCHAIN).
struct GroupValue {
    std::uint64_t value = 0;
    std::uint64_t id = 0;
};
struct Sample {
    std::uint64_t ip = 0;
    std::uint32_t pid = 0;
    std::uint32_t tid = 0;
    std::uint64_t time = 0;  // CLOCK_MONOTONIC ns
    std::uint64_t id = 0;
    std::uint32_t cpu = 0;
    std::uint64_t period = 0;
    bool kernel = false;             // misc: the interrupted mode was the kernel's
    std::vector<GroupValue> values;  // with READ: every event's count
    // With CALLCHAIN (SamplingOptions::callchain): perf's chain, PERF_CONTEXT_KERNEL
    // and the kernel's frames, then PERF_CONTEXT_USER and the user's.
    std::vector<std::uint64_t> callchain;
    // With REGS_USER and STACK_USER (SamplingOptions::user_stack): the user
    // registers of ARCHPMU_SAMPLE_REGS_USER_MASK in bit order (none without a user
    // context), and the bytes of user stack from the stack pointer up that could
    // be read.
    std::vector<std::uint64_t> user_regs;
    std::vector<std::uint8_t> user_stack;
};

// What a session's samples carry beyond the fixed fields.
struct SampleFormat {
    bool read_group = false;  // READ
    bool callchain = false;   // CALLCHAIN
    bool user_stack = false;  // REGS_USER and STACK_USER
};

// The sample in a PERF_RECORD_SAMPLE record, or nullopt when the record is not
// a sample or is too short for its fields. With read_group the record must carry
// the READ part; a call chain is read when the record goes on after it.
std::optional<Sample> parse_sample(const Record& record, bool read_group);
// The same for samples of the given format (Session::sample_format()).
std::optional<Sample> parse_sample(const Record& record, const SampleFormat& format);

// The sample_id trailer of a non-sample record, or nullopt when it is too short.
std::optional<SampleId> parse_sample_id(const Record& record);

// The time a record sorts by: a sample's time field, else its trailer's; 0 when
// it has neither.
std::uint64_t record_time(const Record& record);

// A perf-protocol ring: the control page (data_head at byte 1024, data_tail at
// 1032, as struct perf_event_mmap_page and struct archpmu_ring_page have them)
// and data_size bytes of data (a power of 2).
struct RingMemory {
    void* control = nullptr;
    const std::uint8_t* data = nullptr;
    std::uint64_t data_size = 0;
};

// Reads every record between data_tail and data_head (acquire), each copied
// out (in two pieces when it wraps around the end of the data), then stores
// data_tail (release). Returns the records read. A record whose size is
// smaller than its header or runs past data_head ends the read: the rest of the
// ring is skipped (data_tail = data_head), and *corrupt (when given) is set.
std::size_t read_ring(const RingMemory& ring, const std::function<void(Record&&)>& sink,
                      bool* corrupt = nullptr);

// Merges time-ordered sequences (one per ring) into one, in time order
// (record_time); ties go to the lower ring index, and a ring's own order is kept.
class TimeMerge {
public:
    explicit TimeMerge(std::vector<std::vector<Record>> rings);

    // The next record, or false when all are out.
    bool next(Record& out);
    [[nodiscard]] bool empty() const noexcept { return heap_.empty(); }

private:
    struct Head {
        std::uint64_t time;
        std::size_t ring;
        std::size_t pos;
    };
    struct Later {
        bool operator()(const Head& a, const Head& b) const
        {
            return a.time != b.time ? a.time > b.time : a.ring > b.ring;
        }
    };
    std::vector<std::vector<Record>> rings_;
    std::priority_queue<Head, std::vector<Head>, Later> heap_;
};

// Every record of rings, merged in time order.
std::vector<Record> merge_by_time(std::vector<std::vector<Record>> rings);

}  // namespace archpmu
