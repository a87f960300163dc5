// SPDX-License-Identifier: MIT
// archpmu: a sampling session, its per-CPU rings and their records.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "archpmu/events.hpp"
#include "archpmu/records.hpp"
#include "archpmu/session.hpp"
#include "archpmu/unique_fd.hpp"

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

// How an event samples: every `period` events, or `freq_hz` times a second (the
// module re-estimates the period). Both 0: the event only counts (its value is in
// the samples of the others with read_group).
struct SampleSpec {
    std::uint64_t period = 0;
    std::uint64_t freq_hz = 0;
    std::optional<std::uint64_t> id;  // in every record of the event; default: assigned
};

struct SampledEvent {
    EventSpec event;
    SampleSpec sample;
};

struct SamplingOptions {
    std::vector<std::uint32_t> cpus;  // empty: every online CPU
    std::uint32_t ring_pages = 0;     // data pages per CPU, a power of 2; 0: the module's 64
    std::uint32_t wakeup_bytes = 0;   // poll() threshold; 0: a quarter of the ring
    bool read_group = false;          // samples carry every event's count (ARCHPMU_SAMPLE_READ)
};

// The counters of one CPU's ring (its struct archpmu_ring_page).
struct RingStats {
    std::uint32_t cpu = 0;
    std::uint64_t samples = 0;    // written
    std::uint64_t lost = 0;       // dropped: the ring was full
    std::uint64_t throttled = 0;  // times a counter was throttled
};

// The id the library gives event i when its SampleSpec names none:
// kSampleIdBase + (i + 1) * kSampleIdStride. The module writes id + CPU number
// into the event's records on that CPU, so the stride keeps them apart.
inline constexpr std::uint64_t kSampleIdBase = 0x4150'4d55'0000'0000ULL;  // "APMU"
inline constexpr std::uint64_t kSampleIdStride = 1ULL << 20;

// Events sampling on a set of CPUs into one ring per CPU. Needs a module with
// ARCHPMU_CAP_SAMPLE and ARCHPMU_CAP_SESSION_FD. Move-only; every method throws
// archpmu::Error.
class SamplingSession {
public:
    SamplingSession(const std::string& device_path, std::vector<SampledEvent> events,
                    const SamplingOptions& options = {});

    void start();
    void stop();
    void reset();
    [[nodiscard]] Snapshot read() const;

    // The session's file, for poll(): readable once a ring holds wakeup_bytes.
    [[nodiscard]] int fd() const noexcept { return fd_.get(); }
    // poll() for up to timeout_ms (-1: forever); true when readable. EINTR: false.
    [[nodiscard]] bool wait(int timeout_ms) const;

    // Every record available in every ring, ring by ring (ring i is cpus()[i]);
    // returns how many.
    std::size_t drain(const std::function<void(std::size_t ring, Record&&)>& sink);
    // Every record available, merged from all rings in time order.
    std::vector<Record> drain_merged();

    [[nodiscard]] const std::vector<SampledEvent>& events() const noexcept { return events_; }
    // The id of each event, in events() order; its records on CPU n carry id + n.
    [[nodiscard]] const std::vector<std::uint64_t>& ids() const noexcept { return ids_; }
    // The id in the records of event i on every CPU of the session, in cpus() order.
    [[nodiscard]] std::vector<std::uint64_t> cpu_ids(std::size_t event) const;
    // The session's CPUs, ascending: ring i belongs to cpus()[i].
    [[nodiscard]] const std::vector<std::uint32_t>& cpus() const noexcept { return cpus_; }
    [[nodiscard]] bool read_group() const noexcept { return read_group_; }
    [[nodiscard]] std::vector<RingStats> ring_stats() const;
    // How many times a ring held a malformed record (the rest of it was skipped).
    [[nodiscard]] std::size_t corrupt_rings() const noexcept { return corrupt_; }

private:
    void control(unsigned long request, const char* what);

    std::vector<SampledEvent> events_;
    std::vector<std::uint64_t> ids_;
    std::vector<std::uint32_t> cpus_;
    bool read_group_ = false;
    std::size_t page_size_ = 0;
    std::size_t corrupt_ = 0;
    UniqueFd fd_;
    std::vector<Mapping> rings_;  // unmapped before fd_ closes
};

}  // namespace archpmu
