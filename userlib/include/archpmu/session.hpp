// SPDX-License-Identifier: MIT
// archpmu: a session: events counted (and sampled) on a set of CPUs or tasks.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "archpmu/device.hpp"
#include "archpmu/events.hpp"
#include "archpmu/records.hpp"
#include "archpmu/sampling.hpp"
#include "archpmu/unique_fd.hpp"

namespace archpmu {

struct CountValue {
    std::uint32_t cpu = 0;
    std::uint32_t event = 0;    // index into the session's events
    std::uint32_t counter = 0;  // GP i, ARCHPMU_COUNTER_FIXED | j, or ARCHPMU_NO_COUNTER
    bool offline = false;       // the CPU is offline: its last count
    std::uint64_t value = 0;    // 64-bit, never wraps
    std::uint64_t time_enabled_ns = 0;
    std::uint64_t time_running_ns = 0;
    // A task session's tasks created children faster than the module could
    // follow: some are not counted (ARCHPMU_VALUE_INCOMPLETE).
    bool incomplete = false;
    // The event takes turns on the CPU's counters (ARCHPMU_VALUE_MULTIPLEXED).
    bool multiplexed = false;
    // Others hold every counter it could use on the CPU: it does not count there
    // until they let go of them (ARCHPMU_VALUE_CROWDED_OUT).
    bool crowded_out = false;
    // The CPU's core type lacks the event (hybrid), or the event is for another core
    // type (cpu_core/.../): it never counts there (ARCHPMU_VALUE_ABSENT).
    bool absent = false;

    // perf's scaling: what the event would have counted had it been on the PMU
    // all the time it was enabled (multiplexing); 0 if it never was.
    [[nodiscard]] std::uint64_t scaled() const;
};

struct Snapshot {
    std::uint64_t timestamp_ns = 0;  // CLOCK_MONOTONIC
    std::vector<CountValue> values;  // CPU-major: every event of the first CPU, then the next
};

// Whom a task session counts: it counts only while they run, on whichever
// CPU (ARCHPMU_COUNT_OPEN_TASK). The module asks CAP_PERFMON, and ptrace read
// access to another user's tasks.
struct TaskScope {
    enum class Kind {
        thread,   // the thread pid (0: the calling thread)
        process,  // every thread of pid's process (0: the caller's)
    };
    Kind kind = Kind::process;
    pid_t pid = 0;
    bool inherit = true;  // also the threads and children they create (perf's inherit)
    // start() only arms the session: it starts at the first exec of one of its tasks
    // (perf's enable_on_exec), so a PendingCommand is counted from its exec on.
    bool enable_on_exec = false;
};

// What a session counts on and how (one struct, so that a call names what it sets).
struct SessionOptions {
    std::vector<std::uint32_t> cpus;  // the CPUs counted; empty: every online CPU
    // Instead of CPUs: these tasks, on whichever CPU they run (cpus stays empty).
    std::optional<TaskScope> task;
    // Start counting with the open (one round of cross-calls fewer where the
    // module has ARCHPMU_CAP_OPEN_START), not at start().
    bool start_now = false;
    // Where the events (or groups, EventSpec::flags) do not all fit a CPU's
    // counters at once, they take turns and time_running says how long each
    // counted (ARCHPMU_COUNT_OPEN_MULTIPLEX, where the module has it).
    bool multiplex = false;
    // Set: the events with a SampleSpec sample into a ring per CPU (needs
    // ARCHPMU_CAP_SAMPLE); the session's records come from drain(). With task,
    // only the tasks' samples, on whichever CPU they ran (ARCHPMU_CAP_TASK_SAMPLE).
    // Not with multiplex (the module does not sample that yet).
    std::optional<SamplingOptions> sampling;
    std::string device = kDefaultDevicePath;  // last: a braced list sets cpus first
};

// One event over the session's CPUs: perf's aggregate count. The value and the
// times are sums over the CPUs; scaled() scales the sum as perf stat does.
struct Result {
    std::string name;  // EventSpec::name
    std::uint64_t value = 0;
    std::uint64_t time_enabled_ns = 0;
    std::uint64_t time_running_ns = 0;
    bool multiplexed = false;         // it took turns on some CPU
    bool crowded_out = false;         // others held every counter it could use on some CPU
    bool absent = false;              // no CPU of the session has it (hybrid): never counted
    bool incomplete = false;          // a task session missed some children
    std::vector<CountValue> per_cpu;  // the rows summed, in CPU order

    // value * enabled / running, as perf scales a multiplexed event; 0 if it never counted.
    [[nodiscard]] std::uint64_t scaled() const;
};

// Every event's Result, in the session's order, and a lookup by name.
struct Results {
    std::uint64_t timestamp_ns = 0;  // CLOCK_MONOTONIC of the read
    std::vector<Result> events;

    // The scaled count of the event named `name`: EventSpec::name, as the list
    // wrote it ("cycles:u"; a group's modifier is added to its members' names).
    // Throws archpmu::Error naming it: ENOENT when the session has no such event,
    // EINVAL when it has two (use events[i]).
    [[nodiscard]] std::uint64_t get(std::string_view name) const;
    [[nodiscard]] const Result& at(std::string_view name) const;
};

// Sums a snapshot of `events` per event (Snapshot::values is CPU-major).
Results summarize(const std::vector<EventSpec>& events, const Snapshot& snapshot);
// The same into `into`, reusing its storage: once sized, it allocates nothing.
void summarize(const std::vector<EventSpec>& events, const Snapshot& snapshot, Results& into);

// Counters programmed on a set of CPUs, or following tasks (SessionOptions::task),
// counting and, with rings, sampling. The session owns its file: a session file
// descriptor of its own where the module has ARCHPMU_CAP_SESSION_FD, else an open
// file of the device. Destroying it releases the counters and puts back what the
// PMU held; moving it hands them on. Move-only; every method throws archpmu::Error.
class Session {
public:
    explicit Session(std::vector<EventSpec> events, const SessionOptions& options = {});
    // An event list in perf's syntax: "instructions,{cycles,branches}:u".
    explicit Session(std::string_view events, const SessionOptions& options = {});

    void start();
    void stop();
    void reset();
    // Every CPU's count of every event (CPU-major), with the module's flags.
    [[nodiscard]] Snapshot read() const;
    // The same into `into`, reusing its storage: once sized, a read allocates nothing.
    void read(Snapshot& into) const;
    // The same summed per event.
    [[nodiscard]] Results results() const { return summarize(events_, read()); }
    // Each event summed over the CPUs, into `into` without per_cpu rows: where the
    // module sums (ARCHPMU_CAP_READ_SUM), one row per event crosses from the kernel
    // however many CPUs the session has. Once sized, it allocates nothing.
    void read_totals(Results& into) const;

    [[nodiscard]] const std::vector<EventSpec>& events() const noexcept { return events_; }
    // The counter each event got on the session's first CPU (ARCHPMU_NO_COUNTER: off the
    // PMU there, multiplexed or absent).
    [[nodiscard]] const std::vector<std::uint32_t>& counters() const noexcept { return counters_; }
    [[nodiscard]] std::uint32_t cpu_count() const noexcept { return cpu_count_; }

    // With rings only (SessionOptions::sampling) from here on: without them,
    // wait(), the drains and cpu_ids() throw (EINVAL).
    // The session's file, for poll(): readable once a ring holds wakeup_bytes.
    [[nodiscard]] int fd() const noexcept { return fd_.get(); }
    // poll() for up to timeout_ms (-1: forever); true when readable. EINTR: false.
    [[nodiscard]] bool wait(int timeout_ms) const;
    // Every record available in every ring, ring by ring (ring i is cpus()[i]);
    // returns how many.
    std::size_t drain(const std::function<void(std::size_t ring, Record&&)>& sink);
    // Every record available, merged from all rings in time order.
    std::vector<Record> drain_merged();
    // Every ring's records in place, ring by ring, nothing copied (read_ring_span):
    // what perf.data takes as it is. Returns how many records.
    std::size_t drain_spans(const std::function<void(std::size_t ring, const RingSpan&)>& sink);
    // The id of each event, in events() order; its records on CPU n carry id + n.
    [[nodiscard]] const std::vector<std::uint64_t>& ids() const noexcept { return ids_; }
    // The id in the records of event i on every CPU of the session, in cpus() order.
    [[nodiscard]] std::vector<std::uint64_t> cpu_ids(std::size_t event) const;
    // The CPUs of the rings, ascending: ring i belongs to cpus()[i].
    [[nodiscard]] const std::vector<std::uint32_t>& cpus() const noexcept { return cpus_; }
    // What its samples carry (SessionOptions::sampling), for parse_sample().
    [[nodiscard]] const SamplingOptions& sampling() const noexcept { return sampling_; }
    [[nodiscard]] bool read_group() const noexcept { return sampling_.read_group; }
    [[nodiscard]] bool callchain() const noexcept { return sampling_.callchain; }
    [[nodiscard]] SampleFormat sample_format() const noexcept
    {
        return SampleFormat{sampling_.read_group, sampling_.callchain, sampling_.user_stack != 0};
    }
    [[nodiscard]] std::vector<RingStats> ring_stats() const;
    // How many times a ring held a malformed record (the rest of it was skipped).
    [[nodiscard]] std::size_t corrupt_rings() const noexcept { return corrupt_; }

private:
    void open(const SessionOptions& options);
    void map_rings(std::uint32_t pages);
    void need_rings(const char* what) const;
    void control(unsigned long request, const char* what);

    std::vector<EventSpec> events_;
    std::vector<std::uint32_t> counters_;
    std::uint32_t cpu_count_ = 0;
    bool read_sum_ = false;  // the module sums a read (ARCHPMU_CAP_READ_SUM)
    std::vector<std::uint64_t> ids_;
    std::vector<std::uint32_t> cpus_;
    SamplingOptions sampling_;
    std::size_t page_size_ = 0;
    std::size_t corrupt_ = 0;
    UniqueFd fd_;                 // the session's file, or the device's that holds the session
    std::vector<Mapping> rings_;  // unmapped before fd_ closes
};

}  // namespace archpmu
