// SPDX-License-Identifier: MIT
// archpmu: the `archpmu stat` report in perf stat's formats: the human table, perf's
// CSV (-x) and JSON lines (-j), and archpmu's own JSON document (--json).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "stat_report.hpp"

namespace archpmu {

struct StatFormat {
    enum class Style {
        human,       // perf stat's table
        csv,         // -x SEP: perf 6.1's fields, then the counter
        json_lines,  // -j: perf 6.1's JSON object per line, then "counter"
        json,        // --json: the documented document
    };
    Style style = Style::human;
    bool per_cpu = false;   // -A
    std::string separator;  // -x
    std::string target;     // for the human header: "'COMMAND'", "process id 'N'", ...
    bool task = false;      // counting tasks, not CPUs: the header names no CPUs
    // -I: the end of the interval, in ns since the count started; each line starts
    // with it (the document has "interval"). -1: not an interval.
    std::int64_t interval_ns = -1;
    bool interval_header = false;  // -I, human: perf's column header first
    // CPU -> "core" or "atom" on a hybrid part (empty otherwise): each event is then
    // shown per core type, as perf's cpu_core/NAME/ and cpu_atom/NAME/ (not with -A),
    // and --json adds "per_core_type" (null where the type lacks the event).
    std::map<std::uint32_t, std::string> core_types;
    // --topdown: the level of the top-down metrics printed instead of the counts.
    unsigned topdown_level = 0;
};

// What one line counts: one CPU (-A), the CPUs of one core type (a hybrid part:
// perf's cpu_core/NAME/ and cpu_atom/NAME/), or every CPU.
struct StatScope {
    std::vector<std::size_t> cpus;  // indices into StatTotals::cpus
    bool one_cpu = false;
    std::string core_type;  // "core", "atom"; empty: not split by core type
};

// The lines of each event: per CPU with -A; else per core type on a hybrid part
// (P-cores first, as perf), else one.
std::vector<StatScope> stat_scopes(const StatTotals& t, const StatFormat& f);

// perf's block that opens the human table: " Performance counter stats for TARGET:".
std::string stat_human_header(const StatTotals& t, const StatFormat& f);
// perf's footer: the elapsed time (with its spread under -r), and a command's user
// and sys time when it was counted alone, once.
std::string stat_footer(const StatTotals& t);
// perf's interval stamp, "%6lu.%09lu" of seconds.
std::string stat_interval_stamp(std::int64_t ns);

// The report in f.style (the top-down metrics with topdown_level: stat_topdown.hpp).
std::string stat_report(const StatTotals& t, const StatFormat& f);

// Human: a header (not for intervals), a line per event (per CPU with -A) with perf's
// metrics and "(NN.NN%)" of the time on the PMU, and the elapsed time.
std::string stat_human(const StatTotals& t, const StatFormat& f);
// perf 6.1's -x lines: [interval SEP][CPUn SEP]value SEP unit SEP event SEP [noise SEP]
// run-time SEP pct-running SEP metric-value SEP metric-unit, then SEP counter. value is
// "<not counted>" or "<not supported>" as in perf; pct-running is a whole number, as
// perf computes it.
std::string stat_csv(const StatTotals& t, const StatFormat& f);
// perf 6.1's -j lines: {["interval" : S, ]["cpu" : "N", ]"counter-value" : "V", "unit",
// "event", ["variance", ]"event-runtime", "pcnt-running", "metric-value", "metric-unit",
// "counter"}, in that order.
std::string stat_json_lines(const StatTotals& t, const StatFormat& f);
// {["interval": S, ]"elapsed_ns": N, "cpus": [...], "events": [{"name", "config",
// "counter" ("mux" for an event that takes turns), "value", "per_cpu": {"0": N},
// "time_enabled_ns", "time_running_ns", "running_pct"}]}; after -r also "runs",
// "elapsed_stddev_ns" and per event "stddev_pct". On one line for an interval.
std::string stat_json(const StatTotals& t, const StatFormat& f = {});

// "cpu_atom/dTLB-loads/:u" is dTLB-loads of perf's PMU cpu_atom (a hybrid part's core
// type) with the modifiers ":u": {"cpu_atom", "dTLB-loads", ":u"}; "dTLB-loads:u" has no
// PMU: {"", "dTLB-loads", ":u"}. The PMU in any case, as the event parser takes it.
std::tuple<std::string_view, std::string_view, std::string_view> split_event_name(
    std::string_view full);

// Event `name` as perf names it for one core type (`core_type`: "core", "atom"):
// cpu_core/NAME/MODS (cpu_atom/branches/u; cpu/event=.../ becomes cpu_atom/event=.../);
// a name of a PMU already (cpu_core/cycles/), or no core type, as it is.
std::string name_on_core_type(const std::string& name, std::string_view core_type);

}  // namespace archpmu
