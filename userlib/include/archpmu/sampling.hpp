// SPDX-License-Identifier: MIT
// archpmu: what a session with rings takes and gives (session.hpp has the session).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "archpmu/records.hpp"

namespace archpmu {

// A shared mapping of a file, unmapped on destruction. Move-only.
class Mapping {
public:
    Mapping() noexcept = default;
    // mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, offset); throws
    // archpmu::Error with `what`.
    Mapping(int fd, std::size_t length, std::uint64_t offset, const std::string& what);
    Mapping(Mapping&& other) noexcept;
    Mapping& operator=(Mapping&& other) noexcept;
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    ~Mapping();

    [[nodiscard]] std::uint8_t* data() const noexcept { return addr_; }
    [[nodiscard]] std::size_t size() const noexcept { return length_; }
    // The ring in the mapping: a control page of page_size, then the data pages.
    [[nodiscard]] RingMemory ring(std::size_t page_size) const noexcept;

private:
    void reset() noexcept;
    std::uint8_t* addr_ = nullptr;
    std::size_t length_ = 0;
};

// A session's rings (SessionOptions::sampling): each event with a SampleSpec
// samples into one ring per CPU of the session.
struct SamplingOptions {
    std::uint32_t ring_pages = 0;    // data pages per CPU, a power of 2; 0: the module's 64
    std::uint32_t wakeup_bytes = 0;  // poll() threshold; 0: a quarter of the ring
    bool read_group = false;         // samples carry every event's count (ARCHPMU_SAMPLE_READ)
    // Samples carry their call chain, kernel and user (by frame pointers):
    // ARCHPMU_SAMPLE_CALLCHAIN, perf record -g.
    bool callchain = false;
    // Bytes of user stack each sample copies, with the user registers, for an
    // unwinder to walk code without frame pointers (ARCHPMU_SAMPLE_USER_STACK,
    // perf record --call-graph dwarf): a multiple of 8 up to 32768; 0: none. The
    // call chain is then the kernel's part only.
    std::uint32_t user_stack = 0;
};

// The counters of one CPU's ring (its struct archpmu_ring_page).
struct RingStats {
    std::uint32_t cpu = 0;
    std::uint64_t samples = 0;    // written
    std::uint64_t lost = 0;       // dropped: the ring was full
    std::uint64_t throttled = 0;  // times a counter was throttled
};

// Every session's throttles and dropped samples on one CPU since the module loaded
// (sysfs: cpuN/archpmu/throttled and lost_samples).
struct CpuSamplingTotals {
    std::uint32_t cpu = 0;
    std::uint64_t throttled = 0;
    std::uint64_t lost = 0;
};

// Those of the online CPUs, ascending; none without the module (or one older than
// the files). Needs no privilege. Throws archpmu::Error when a file cannot be read
// for another reason than its absence.
std::vector<CpuSamplingTotals> sampling_totals();

// The id the library gives event i when its SampleSpec names none:
// kSampleIdBase + (i + 1) * kSampleIdStride. The module writes id + CPU number
// into the event's records on that CPU, so the stride keeps them apart.
inline constexpr std::uint64_t kSampleIdBase = 0x4150'4d55'0000'0000ULL;  // "APMU"
inline constexpr std::uint64_t kSampleIdStride = 1ULL << 20;

}  // namespace archpmu
