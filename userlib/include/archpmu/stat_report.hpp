// SPDX-License-Identifier: MIT
// archpmu: the `archpmu stat` report: human (like perf stat), CSV and JSON.
#pragma once

#include <cstdint>
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

    [[nodiscard]] std::uint64_t total(std::size_t event) const;
    // perf's "(NN.NN%)": the time on the PMU in percent of the time enabled, over
    // all CPUs (cpu: one of them); 100 when never enabled.
    [[nodiscard]] double running_pct(std::size_t event) const;
    [[nodiscard]] double running_pct(std::size_t event, std::size_t cpu) const;
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

struct StatFormat {
    bool per_cpu = false;    // -A
    std::string separator;   // -x: CSV when not empty
    std::string target;      // for the human header: "'COMMAND'", "process id 'N'", ...
    bool task = false;       // counting tasks, not CPUs: the header names no CPUs
    double interval_s = -1;  // -I: the interval's end time, prefixed to each line
};

std::string stat_human(const StatTotals& t, const StatFormat& f);
std::string stat_csv(const StatTotals& t, const StatFormat& f);
// {"elapsed_ns": N, "cpus": [...], "events": [{"name", "config", "counter" ("mux" for an
// event that takes turns), "value",
// "per_cpu": {"0": N}, "time_enabled_ns", "time_running_ns", "running_pct"}]}; on one line with
// indent < 0. After -r also "runs", "elapsed_stddev_ns" and per event "stddev_pct".
std::string stat_json(const StatTotals& t, int indent = 2);

// 1234567 -> "1,234,567"
std::string thousands(std::uint64_t v);

}  // namespace archpmu
