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
// then READ with read_format GROUP | ID, then CALLCHAIN). Where its fixed
// fields lie, header included:
namespace sample_offset {
inline constexpr std::size_t ip = 16;
inline constexpr std::size_t pid = 24;
inline constexpr std::size_t tid = 28;
inline constexpr std::size_t time = 32;
inline constexpr std::size_t id = 40;
inline constexpr std::size_t cpu = 48;
inline constexpr std::size_t period = 56;
inline constexpr std::size_t end = 64;  // READ or CALLCHAIN from here
}  // namespace sample_offset
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

// A record where it lies in a ring. Records and their 8-byte fields are 8-byte
// aligned in a ring whose size is a multiple of 8, so no field is split by the
// wrap around the end of the data.
class RecordRef {
public:
    RecordRef(const RingMemory& ring, std::uint64_t pos) noexcept;

    [[nodiscard]] std::uint32_t type() const noexcept { return type_; }
    [[nodiscard]] std::uint16_t misc() const noexcept { return misc_; }
    [[nodiscard]] std::uint16_t size() const noexcept { return size_; }
    // The 8 or 4 bytes at `offset` of the record (offset + 8 <= size(), offset % 8
    // == 0; for u32, offset % 4 == 0); 0 past the record's end.
    [[nodiscard]] std::uint64_t u64(std::size_t offset) const noexcept;
    [[nodiscard]] std::uint32_t u32(std::size_t offset) const noexcept;
    // The whole record (size() bytes), header included, into out.
    void copy(std::uint8_t* out) const noexcept;
    // The record copied out.
    [[nodiscard]] Record record() const;

private:
    const RingMemory* ring_;
    std::uint64_t pos_;
    std::uint32_t type_ = 0;
    std::uint16_t misc_ = 0;
    std::uint16_t size_ = 0;
};

// The sample's time (sample_type IDENTIFIER | IP | TID | TIME ...) or the
// trailer's, as record_time() reads it from a copy.
std::uint64_t record_time(const RecordRef& record) noexcept;

// The whole records a ring holds unread, in place: their bytes in at most two
// pieces (the second from the start of the data when they wrap around its end),
// to be written out as they are (perf record's way), and each record for a look.
class RingSpan {
public:
    RingSpan(const RingMemory& ring, std::uint64_t begin, std::uint64_t end,
             std::size_t records) noexcept
        : ring_(&ring), begin_(begin), end_(end), records_(records)
    {
    }

    struct Piece {
        const std::uint8_t* data;
        std::size_t size;
    };
    [[nodiscard]] Piece first() const noexcept;
    [[nodiscard]] Piece second() const noexcept;  // size 0: no wrap
    [[nodiscard]] std::size_t bytes() const noexcept
    {
        return static_cast<std::size_t>(end_ - begin_);
    }
    [[nodiscard]] std::size_t records() const noexcept { return records_; }

    // fn(const RecordRef&) for each record, in ring order.
    template <typename Fn>
    void for_each(Fn&& fn) const
    {
        for (std::uint64_t pos = begin_; pos < end_;) {
            const RecordRef r(*ring_, pos);
            fn(r);
            pos += r.size();
        }
    }

private:
    const RingMemory* ring_;
    std::uint64_t begin_;
    std::uint64_t end_;
    std::size_t records_;
};

// Hands the whole records between data_tail and data_head (acquire) to sink in
// place, once, then stores data_tail (release): nothing is copied, so sink must be
// done with the bytes when it returns. A record whose size is smaller than its
// header or runs past data_head ends the span, and a data_head more than the
// ring's size ahead gives none: the rest of the ring is skipped, and *corrupt
// (when given) is set. Returns the records handed over (sink is not called for
// none).
std::size_t read_ring_span(const RingMemory& ring, const std::function<void(const RingSpan&)>& sink,
                           bool* corrupt = nullptr);

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
