// SPDX-License-Identifier: MIT
// archpmu: a counting session on a set of CPUs.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "archpmu/device.hpp"
#include "archpmu/events.hpp"
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
    // Others held every counter it could use on the CPU: it never counts there
    // (ARCHPMU_VALUE_CROWDED_OUT).
    bool crowded_out = false;
    // The CPU's core type lacks the event (hybrid): it never counts there
    // (ARCHPMU_VALUE_ABSENT).
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

// Counters programmed on a set of CPUs, or following tasks (TaskScope). The session owns its file:
// a session file descriptor of its own where the module has ARCHPMU_CAP_SESSION_FD, else an open
// file of the device. Destroying (or moving from) it releases the counters and puts back what the
// PMU held. Move-only; every method throws archpmu::Error.
class Session {
public:
    // Whether the counters start with the open (one round of cross-calls fewer
    // where the module has ARCHPMU_CAP_OPEN_START) or at start().
    enum class Start { later, now };

    // cpus empty: every online CPU.
    Session(const std::string& device_path, std::vector<EventSpec> events,
            const std::vector<std::uint32_t>& cpus = {});
    // multiplex: where the events (or groups, EventSpec::flags) do not all fit
    // a CPU's counters at once, they take turns and time_running says how long
    // each counted (ARCHPMU_COUNT_OPEN_MULTIPLEX, where the module has it).
    Session(const std::string& device_path, std::vector<EventSpec> events,
            const std::vector<std::uint32_t>& cpus, Start start, bool multiplex = false);

    // A task session: on every online CPU, counting only while the tasks run.
    static Session for_task(const std::string& device_path, std::vector<EventSpec> events,
                            const TaskScope& task, Start start = Start::later,
                            bool multiplex = false);

    void start();
    void stop();
    void reset();
    [[nodiscard]] Snapshot read() const;

    [[nodiscard]] const std::vector<EventSpec>& events() const noexcept { return events_; }
    // The counter each event got on the session's first CPU.
    [[nodiscard]] const std::vector<std::uint32_t>& counters() const noexcept { return counters_; }
    [[nodiscard]] std::uint32_t cpu_count() const noexcept { return cpu_count_; }

private:
    explicit Session(std::vector<EventSpec> events) : events_(std::move(events)) {}
    void open(const std::string& device_path, const std::vector<std::uint32_t>& cpus, Start start,
              const TaskScope* task, bool multiplex);
    void control(unsigned long request, const char* what);

    std::vector<EventSpec> events_;
    std::vector<std::uint32_t> counters_;
    std::uint32_t cpu_count_ = 0;
    UniqueFd fd_;  // the session's file, or the device's that holds the session
};

}  // namespace archpmu
