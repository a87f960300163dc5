// SPDX-License-Identifier: MIT
// archpmu: event specifications, parsed from perf's syntax.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace archpmu {

// How an event samples in a session with rings (SessionOptions::sampling):
// every `period` events, or `freq_hz` times a second (the module re-estimates
// the period). Both 0: the event only counts (its value is in the samples of the
// others with read_group).
struct SampleSpec {
    std::uint64_t period = 0;
    std::uint64_t freq_hz = 0;
    std::optional<std::uint64_t> id;  // in every record of the event; default: assigned
};

// One event to count: an IA32_PERFEVTSELx image and how to place it.
struct EventSpec {
    std::string name;           // as the user wrote it
    std::uint64_t config = 0;   // event | umask << 8 | USR, OS, edge, INV, CMASK, AnyThread
    std::uint32_t flags = 0;    // ARCHPMU_EVENT_* (GP only, pinned, raw, group, no rotate,
                                // core type)
    std::uint32_t counter = 0;  // with ARCHPMU_EVENT_PIN: GP i, or ARCHPMU_COUNTER_FIXED | j
    SampleSpec sample;          // used by a session with rings only
    // perf's generic cache event ("L1-dcache-loads", cache_events.hpp), encoded when the
    // session opens for the CPUs it counts on: config holds only the modifiers' bits
    // until then. Empty for any other event.
    std::string cache_event;

    [[nodiscard]] std::uint32_t event_select() const { return config & 0xff; }
    [[nodiscard]] std::uint32_t umask() const { return (config >> 8) & 0xff; }
};

// Parse one event:
//   names:   cycles (cpu-cycles), instructions, ref-cycles, bus-cycles, cache-references,
//            cache-misses, branches (branch-instructions), branch-misses, slots
//            (topdown-slots), topdown-be-bound, topdown-bad-spec, topdown-fe-bound,
//            topdown-retiring, lbr-inserts; Intel names such as INST_RETIRED.ANY,
//            CPU_CLK_UNHALTED.THREAD, CPU_CLK_UNHALTED.REF_TSC, LONGEST_LAT_CACHE.MISS,
//            BR_INST_RETIRED.ALL_BRANCHES, BR_MISP_RETIRED.ALL_BRANCHES, TOPDOWN.SLOTS
//   raw:     r<hex> (the PERFEVTSEL image: r00c0 is C0H/00H) and
//            cpu/event=0xc0,umask=0x00,cmask=1,inv,edge,any/ (each term at most once)
//   cache:   perf's generic cache events, L1-dcache-loads, L1-dcache-load-misses,
//            LLC-loads, LLC-load-misses, L1-icache-loads, L1-icache-load-misses,
//            dTLB-loads, dTLB-load-misses, iTLB-loads, iTLB-load-misses,
//            L1-dcache-prefetches, L1-dcache-prefetch-misses (any case): encoded for
//            the session's CPUs when it opens (EventSpec::cache_event)
//   hybrid:  cpu_core/TERMS/ or cpu_core/NAME/ (cpu_atom alike, perf's PMUs of a hybrid
//            part): the event counts on that core type only and is absent on the other
//            (ARCHPMU_EVENT_CORE_TYPE; a module with ARCHPMU_CAP_CORE_TYPE)
//   then:    modifiers :u (user only), :k (kernel only), :D (pinned: never
//            multiplexed out, perf's D), and a counter choice
//            @gp (GP counters only), @gp3 (GP counter 3), @fixed0 (fixed counter 0)
//            (each at most once; a modifier letter at most once)
// Throws archpmu::Error (EINVAL) whose message names, and with a caret on its
// following lines shows, the offending part.
EventSpec parse_event(std::string_view text);

// A comma-separated list; commas inside cpu/.../ do not split. No empty events.
// perf's groups: {a,b} puts a and b on the PMU together or not at all
// (ARCHPMU_EVENT_GROUP on b); {a,b}:u applies u (or k) to the members that
// give neither and D to the group.
std::vector<EventSpec> parse_event_list(std::string_view text);

// As perf under perf_event_paranoid 2, for a caller who may count only its own
// tasks' user mode (Privilege::own_user): the events that name no mode count
// user mode only. Names stay as written, so results are asked for by them.
std::vector<EventSpec> user_mode_only(std::vector<EventSpec> events);

// "gp3", "fixed0", "metrics2" (PERF_METRICS' field 2: a top-down metric event), or "-"
// for ARCHPMU_NO_COUNTER (multiplexed off the PMU, or absent on the CPU).
std::string counter_name(std::uint32_t counter);

}  // namespace archpmu
