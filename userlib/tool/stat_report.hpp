// SPDX-License-Identifier: MIT
// archpmu: the counts `archpmu stat` reports: totals, scaling, the mean of runs
// (stat_format.hpp prints them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "archpmu/events.hpp"
#include "archpmu/session.hpp"

namespace archpmu {

// One count per event, summed over CPUs and per CPU, over an interval.
struct StatTotals {
    std::vector<EventSpec> events;
    std::vector<std::uint32_t> counters;  // per event, on the first CPU
    std::vector<bool> multiplexed;        // per event: it takes turns (on any CPU)
    // Per event, the CPUs where others held every counter it could use.
    std::vector<std::vector<std::uint32_t>> crowded_out;
    // [e][c]: the core type of cpus[c] lacks event e (perf's <not supported>).
    std::vector<std::vector<bool>> absent;
    std::vector<std::uint32_t> cpus;  // ascending
    std::uint64_t elapsed_ns = 0;
    // per_cpu[e][c]: event e on cpus[c], scaled as perf scales when the event
    // was multiplexed (CountValue::scaled())
    std::vector<std::vector<std::uint64_t>> per_cpu;
    // The time each count was enabled and on the PMU, [e][c] as per_cpu.
    std::vector<std::vector<std::uint64_t>> enabled_ns;
    std::vector<std::vector<std::uint64_t>> running_ns;
    std::vector<bool> offline;  // per CPU: offline at the end (its last count)
    // -r: the means of `runs` runs, and per event (then for the elapsed time) the
    // standard deviation of that mean in percent of it, perf's "( +- N% )".
    unsigned runs = 1;
    std::vector<double> noise_pct;
    double elapsed_noise_ns = 0;
    // -r: each run's count, [e][c][run] (c as in cpus), for the spread of a line
    // that shows some of the CPUs (a core type's).
    std::vector<std::vector<std::vector<double>>> run_counts;
    // The command's own CPU time (its rusage, children included), which perf
    // prints under the elapsed time when it counted the command alone, once
    // (no -a, -C, -p, -t or -r).
    struct CpuTimes {
        std::uint64_t user_ns = 0;
        std::uint64_t sys_ns = 0;
    };
    std::optional<CpuTimes> command_times;

    [[nodiscard]] std::uint64_t total(std::size_t event) const;
    // perf's "(NN.NN%)": the time on the PMU in percent of the time enabled, over
    // all CPUs (cpu: one of them); 100 when never enabled.
    [[nodiscard]] double running_pct(std::size_t event) const;
    [[nodiscard]] double running_pct(std::size_t event, std::size_t cpu) const;
    // The spread, as noise_pct, of the event's count on these CPUs (indices into
    // cpus), as perf has it for each core type's event; noise_pct's without run_counts.
    [[nodiscard]] double noise_pct_over(std::size_t event,
                                        const std::vector<std::size_t>& cpus) const;
};

// The mean of runs of one command (the same events; the CPUs of any run), with each
// count's spread.
StatTotals stat_mean(const std::vector<StatTotals>& runs);

// The counts between two snapshots of one session (from == nullptr: since zero);
// an event that took turns (CountValue::multiplexed) is scaled, as perf scales.
StatTotals stat_totals(const Session& session, const Snapshot* from, const Snapshot& to,
                       std::uint64_t elapsed_ns);
// The same for the session's events and their counters on its first CPU.
StatTotals stat_totals_of(const std::vector<EventSpec>& events,
                          const std::vector<std::uint32_t>& counters, const Snapshot* from,
                          const Snapshot& to, std::uint64_t elapsed_ns);

// 1234567 -> "1,234,567"
std::string thousands(std::uint64_t v);

}  // namespace archpmu
