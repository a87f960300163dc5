// SPDX-License-Identifier: MIT
// Event validation and counter allocation (module/own/alloc.c).
#include <catch2/catch.hpp>

#include <vector>

#include "portable_core.hpp"

extern "C" {
#include "../../module/own/alloc.h"
}

namespace {

archpmu_pmu_desc layout(uint32_t version, uint32_t gp, uint32_t fixed, uint32_t ecx = 0,
                        uint32_t ebx = 0, bool anythread_deprecated = false)
{
    archpmu_cpuid_set c{};
    c.leaf0a = {version | gp << 8 | 48u << 16 | 8u << 24, ebx, ecx,
                fixed | 48u << 5 | (anythread_deprecated ? 1u << 15 : 0)};
    archpmu_pmu_desc d{};
    archpmu_decode_cpuid(&c, &d);
    return d;
}

archpmu_event ev(uint64_t config, uint32_t flags = 0, uint32_t counter = 0)
{
    return archpmu_event{config, flags, counter};
}

struct Result {
    int err;
    unsigned bad;
    std::vector<uint32_t> counters;
};

Result allocate(const archpmu_pmu_desc& d, std::vector<archpmu_event> evs, uint64_t busy = 0)
{
    std::vector<uint32_t> counters(evs.size());
    unsigned bad = ~0u;
    const int err = archpmu_allocate(&d, evs.data(), static_cast<unsigned>(evs.size()), 0, busy,
                                     counters.data(), &bad);
    return {err, bad, counters};
}

constexpr uint32_t F = ARCHPMU_COUNTER_FIXED;

}  // namespace

TEST_CASE("fixed-counter events go to their fixed counter first", "[alloc]")
{
    const auto d = layout(4, 4, 4);
    const auto r = allocate(d, {ev(0x00c4), ev(0x00c0), ev(0x003c), ev(0x0300), ev(0x01a4)});
    REQUIRE(r.err == 0);
    CHECK(r.counters == std::vector<uint32_t>{0, F | 0, F | 1, F | 2, F | 3});
}

TEST_CASE("filters, GP-only and missing fixed counters send events to GP counters", "[alloc]")
{
    const auto d = layout(4, 4, 3);
    const auto r = allocate(
        d, {ev(0x00c0 | 2ULL << 24), ev(0x003c, ARCHPMU_EVENT_GP_ONLY), ev(0x01a4), ev(0x00c0)});
    REQUIRE(r.err == 0);
    CHECK(r.counters == std::vector<uint32_t>{0, 1, 2, F | 0});
}

TEST_CASE("pinned counters are honoured or refused", "[alloc]")
{
    const auto d = layout(4, 4, 3);
    auto r = allocate(d, {ev(0x00c4), ev(0x00c0, ARCHPMU_EVENT_PIN, 0)});
    REQUIRE(r.err == 0);
    CHECK(r.counters == std::vector<uint32_t>{1, 0});  // the pin is placed first

    CHECK(allocate(d, {ev(0x00c0, ARCHPMU_EVENT_PIN, 4)}).err == -ECHRNG);
    CHECK(allocate(d, {ev(0x003c, ARCHPMU_EVENT_PIN, F | 0)}).err == -ECHRNG);
    CHECK(allocate(d, {ev(0x00c0, ARCHPMU_EVENT_PIN, F | 3)}).err == -ECHRNG);
    CHECK(allocate(d, {ev(0x0300, ARCHPMU_EVENT_PIN, 1)}).err == -ECHRNG);
    CHECK(allocate(d, {ev(0x00c0 | 1ULL << 18, ARCHPMU_EVENT_PIN, F | 0)}).err == -EMEDIUMTYPE);
    // A counter pinned twice in one request is a bad request, not a busy counter.
    r = allocate(d,
                 {ev(0x00c4), ev(0x00c5, ARCHPMU_EVENT_PIN, 2), ev(0x00c0, ARCHPMU_EVENT_PIN, 2)});
    CHECK(r.err == -EINVAL);
    CHECK(r.bad == 2);
    r = allocate(d, {ev(0x00c4, ARCHPMU_EVENT_PIN, 2)}, 1ULL << 2);
    CHECK(r.err == -EBUSY);
}

TEST_CASE("pinned indexes past the counters are ECHRNG, never a wrapped shift", "[alloc]")
{
    const auto d = layout(4, 8, 3);
    // BIT_ULL(64) wraps to bit 0 on x86: GP 64 must not alias GP 0.
    for (uint32_t idx : {8U, 31U, 32U, 63U, 64U, 65U, 128U, 255U}) {
        CAPTURE(idx);
        CHECK(allocate(d, {ev(0x00c4, ARCHPMU_EVENT_PIN, idx)}).err == -ECHRNG);
    }
    for (uint32_t idx : {7U, 15U, 16U, 32U, 64U, 255U}) {
        CAPTURE(idx);
        CHECK(allocate(d, {ev(0x00c0, ARCHPMU_EVENT_PIN, F | idx)}).err == -ECHRNG);
    }
    CHECK(archpmu_counter_bit(64) == 0);
    CHECK(archpmu_counter_bit(F | 64) == 0);
}

TEST_CASE("the candidate counters of an event", "[alloc]")
{
    const auto d = layout(4, 4, 3);
    const archpmu_event branches = ev(0x00c4);
    const archpmu_event instructions = ev(0x00c0);
    const archpmu_event pinned = ev(0x00c4, ARCHPMU_EVENT_PIN, 2);
    const archpmu_event gp_only = ev(0x00c0, ARCHPMU_EVENT_GP_ONLY);
    const archpmu_event tsc = ev(0x0300);
    CHECK(archpmu_candidate_counters(&d, &branches) == 0xf);
    CHECK(archpmu_candidate_counters(&d, &instructions) == (0xfULL | 1ULL << 32));
    CHECK(archpmu_candidate_counters(&d, &pinned) == 0x4);
    CHECK(archpmu_candidate_counters(&d, &gp_only) == 0xf);
    CHECK(archpmu_candidate_counters(&d, &tsc) == 1ULL << 34);
}

TEST_CASE("GP counter 3 of a TSX_FORCE_ABORT part is never allocated", "[alloc]")
{
    auto d = layout(4, 4, 3);
    d.flags |= ARCHPMU_PMU_TSX_FORCE_ABORT;
    const archpmu_event branches = ev(0x00c4);
    CHECK(archpmu_candidate_counters(&d, &branches) == 0x7);
    const auto r = allocate(d, {ev(0x00c4), ev(0x00c5), ev(0x412e)});
    REQUIRE(r.err == 0);
    CHECK(r.counters == std::vector<uint32_t>{0, 1, 2});
    CHECK(allocate(d, {ev(0x00c4), ev(0x00c5), ev(0x412e), ev(0x4f2e)}).err == -ENOSPC);
    CHECK(allocate(d, {ev(0x00c4, ARCHPMU_EVENT_PIN, 3)}).err == -ECHRNG);
}

TEST_CASE("GP counter constraints: honoured, the most constrained placed first", "[alloc]")
{
    const auto d = layout(4, 4, 3);
    const uint32_t pmc0 = ARCHPMU_EVENT_GP_COUNTERS(0x1);
    const uint32_t pmc2_3 = ARCHPMU_EVENT_GP_COUNTERS(0xc);
    // Greedy in order would give branches PMC0 and leave the PMC0-only event nothing.
    auto r = allocate(d, {ev(0x00c4), ev(0x02cd, pmc0), ev(0x01a3, pmc2_3)});
    REQUIRE(r.err == 0);
    CHECK(r.counters == std::vector<uint32_t>{1, 0, 2});
    // Two events that both need PMC0: the second does not fit.
    r = allocate(d, {ev(0x02cd, pmc0), ev(0x04a4, pmc0)});
    CHECK(r.err == -ENOSPC);
    CHECK(r.bad == 1);
    // Held by another: EBUSY only when the held counter is one the event may use.
    CHECK(allocate(d, {ev(0x02cd, pmc0)}, 0x1).err == -EBUSY);
    CHECK(allocate(d, {ev(0x01a3, pmc2_3)}, 0x3).counters == std::vector<uint32_t>{2});
    // Pinned outside the mask, or a mask with none of the CPU's counters: ECHRNG.
    CHECK(allocate(d, {ev(0x02cd, pmc0 | ARCHPMU_EVENT_PIN, 1)}).err == -ECHRNG);
    CHECK(allocate(d, {ev(0x02cd, pmc0 | ARCHPMU_EVENT_PIN, 0)}).counters ==
          std::vector<uint32_t>{0});
    CHECK(allocate(d, {ev(0x02cd, ARCHPMU_EVENT_GP_COUNTERS(0x30))}).err == -ECHRNG);
    // Without a mask, a PMU with no GP counter at all is ENOSPC, as before masks.
    CHECK(allocate(layout(4, 0, 3), {ev(0x00c4)}).err == -ENOSPC);
    // The mask constrains GP counters only: instructions still takes fixed counter 0.
    CHECK(allocate(d, {ev(0x00c0, pmc0)}).counters == std::vector<uint32_t>{F | 0});
    const auto constrained = ev(0x01a3, pmc2_3);
    CHECK(archpmu_candidate_counters(&d, &constrained) == 0xc);
}

TEST_CASE("too many events: ENOSPC, or EBUSY when others hold counters", "[alloc]")
{
    const auto d = layout(4, 2, 3);
    auto r = allocate(d, {ev(0x00c4), ev(0x00c5), ev(0x412e)});
    CHECK(r.err == -ENOSPC);
    CHECK(r.bad == 2);
    r = allocate(d, {ev(0x00c4), ev(0x00c5)}, 0x1);
    CHECK(r.err == -EBUSY);
    r = allocate(d, {ev(0x00c4)}, 0x1);
    REQUIRE(r.err == 0);
    CHECK(r.counters[0] == 1);
    // A busy fixed counter pushes its event to a GP counter...
    r = allocate(d, {ev(0x00c0)}, 1ULL << 32);
    REQUIRE(r.err == 0);
    CHECK(r.counters[0] == 0);
    // ...but a fixed-only event has nowhere else to go.
    CHECK(allocate(d, {ev(0x0300)}, 1ULL << 34).err == -EBUSY);
}

TEST_CASE("a non-contiguous v5 fixed bitmap is respected", "[alloc]")
{
    const auto d = layout(5, 4, 0, 0x5);  // fixed counters 0 and 2
    const auto r = allocate(d, {ev(0x00c0), ev(0x003c), ev(0x0300)});
    REQUIRE(r.err == 0);
    CHECK(r.counters == std::vector<uint32_t>{F | 0, 0, F | 2});
    CHECK(allocate(d, {ev(0x0200)}).err == -ENOENT);  // fixed counter 1's own event
}

TEST_CASE("v1 has no fixed counters", "[alloc]")
{
    const auto d = layout(1, 2, 3);
    const auto r = allocate(d, {ev(0x00c0), ev(0x003c)});
    REQUIRE(r.err == 0);
    CHECK(r.counters == std::vector<uint32_t>{0, 1});
    CHECK(allocate(d, {ev(0x0300)}).err == -ENOENT);
}

TEST_CASE("event checks: reserved bits, INV, AnyThread, availability", "[alloc]")
{
    const auto v3 = layout(3, 4, 3, 0, 0x10);  // LLC misses (bit 4) unavailable
    const auto check = [](const archpmu_pmu_desc& d, archpmu_event e) {
        return archpmu_check_event(&d, &e);
    };
    CHECK(check(v3, ev(0x00c0 | 3ULL << 16)) == 0);
    CHECK(check(v3, ev(0x00c0 | ARCHPMU_EVTSEL_EN)) == -EINVAL);
    CHECK(check(v3, ev(0x00c0 | ARCHPMU_EVTSEL_INT)) == -EINVAL);
    CHECK(check(v3, ev(0x00c0 | ARCHPMU_EVTSEL_PC)) == -EINVAL);
    CHECK(check(v3, ev(0x00c0 | 1ULL << 32)) == -EINVAL);
    CHECK(check(v3, ev(0x00c0, 0x80)) == -EINVAL);
    CHECK(check(v3, ev(0x00c0 | ARCHPMU_EVTSEL_INV)) == -EDOM);
    CHECK(check(v3, ev(0x00c0 | ARCHPMU_EVTSEL_INV | 1ULL << 24)) == 0);
    CHECK(check(v3, ev(0x00c0 | ARCHPMU_EVTSEL_ANY)) == 0);
    CHECK(check(layout(2, 2, 3), ev(0x00c0 | ARCHPMU_EVTSEL_ANY)) == -EOPNOTSUPP);
    CHECK(check(layout(5, 4, 3, 0, 0, true), ev(0x00c0 | ARCHPMU_EVTSEL_ANY)) == -EOPNOTSUPP);
    CHECK(check(v3, ev(0x412e)) == -ENOENT);
    CHECK(check(v3, ev(0x412e, ARCHPMU_EVENT_RAW)) == 0);
    CHECK(check(v3, ev(0x00d1)) == 0);  // not architectural: accepted as is
    CHECK(check(layout(0, 0, 0), ev(0x00c0)) == -ENODEV);
}

namespace {

// Ice Lake: v5, 4 GP, fixed counters 0-3, PERF_METRICS (or not).
archpmu_pmu_desc metrics_layout(bool perf_metrics = true)
{
    auto d = layout(5, 4, 4, 0xf);
    archpmu_desc_set_perf_caps(&d, perf_metrics ? ARCHPMU_PERF_CAP_PERF_METRICS : 0);
    return d;
}

constexpr uint32_t M = ARCHPMU_COUNTER_METRICS;
constexpr uint32_t G = ARCHPMU_EVENT_GROUP;

}  // namespace

TEST_CASE("top-down metric events ride on their slots event's fixed counter 3", "[alloc][topdown]")
{
    const auto d = metrics_layout();
    auto r = allocate(d, {ev(0x00c4), ev(0x01a4), ev(0x8000, G), ev(0x8300, G), ev(0x8100, G)});
    REQUIRE(r.err == 0);
    CHECK(r.counters == std::vector<uint32_t>{0, F | 3, M | 0, M | 3, M | 1});
    // Where fixed counter 3 is held, the slots go to a GP counter and the metrics
    // have nothing to ride on: refused as busy.
    r = allocate(d, {ev(0x01a4), ev(0x8000, G)}, 1ull << 35);
    CHECK(r.err == -EBUSY);
    CHECK(r.bad == 1);
    // PERF_METRICS held by another session.
    CHECK(allocate(d, {ev(0x01a4), ev(0x8000, G)}, ARCHPMU_GLOBAL_PERF_METRICS).err == -EBUSY);
    // A CPU without PERF_METRICS lacks them (a hybrid part's E-cores).
    const auto none = metrics_layout(false);
    const archpmu_event retiring = ev(0x8000, G);
    CHECK(archpmu_check_event(&none, &retiring) == -ENOENT);
    CHECK(archpmu_event_absent(&none, &retiring));
    CHECK(archpmu_check_event(&d, &retiring) == 0);
    CHECK_FALSE(archpmu_event_absent(&d, &retiring));
    CHECK(archpmu_candidate_counters(&d, &retiring) == (ARCHPMU_GLOBAL_PERF_METRICS | 1ull << 35));
    CHECK(archpmu_candidate_counters(&none, &retiring) == 0);
}

TEST_CASE("top-down metric events must be in a group led by slots, and never sample",
          "[alloc][topdown]")
{
    const auto check = [](std::vector<archpmu_event> evs, bool sampling = false) {
        unsigned bad = ~0u;
        const int err =
            archpmu_check_metrics(evs.data(), static_cast<unsigned>(evs.size()), sampling, &bad);
        return std::pair{err, bad};
    };
    CHECK(check({ev(0x01a4), ev(0x8000, G), ev(0x8700, G)}).first == 0);
    CHECK(check({ev(0x0400), ev(0x8000, G)}).first == 0);  // fixed counter 3's own encoding
    CHECK(check({ev(0x01a4 | ARCHPMU_EVTSEL_USR), ev(0x8000 | ARCHPMU_EVTSEL_USR, G)}).first == 0);
    // Alone, led by another event, or a leader itself.
    CHECK(check({ev(0x8000)}) == std::pair{-EINVAL, 0u});
    CHECK(check({ev(0x00c0), ev(0x8000, G)}) == std::pair{-EINVAL, 1u});
    CHECK(check({ev(0x01a4), ev(0x8000)}) == std::pair{-EINVAL, 1u});
    // Another ring than the slots', filters, a pin or a GP-only slots event.
    CHECK(check({ev(0x01a4), ev(0x8000 | ARCHPMU_EVTSEL_USR, G)}).first == -EINVAL);
    CHECK(check({ev(0x01a4), ev(0x8000 | 1ull << 24, G)}).first == -EINVAL);
    CHECK(check({ev(0x01a4), ev(0x8000, G | ARCHPMU_EVENT_PIN)}).first == -EINVAL);
    CHECK(check({ev(0x01a4, ARCHPMU_EVENT_GP_ONLY), ev(0x8000, G)}).first == -EINVAL);
    CHECK(check({ev(0x01a4 | 1ull << 24), ev(0x8000, G)}).first == -EINVAL);
    CHECK(check({ev(0x01a4), ev(0x8000, G)}, true) == std::pair{-EOPNOTSUPP, 1u});
    // Events that are not metrics are not its concern.
    CHECK(check({ev(0x00c0), ev(0x8800)}).first == 0);
}

TEST_CASE("an event for another core type is absent and takes no counter", "[alloc][core-type]")
{
    auto d = layout(5, 2, 3);
    d.core_type = ARCHPMU_CORE_TYPE_ATOM;
    const uint32_t on_core = ARCHPMU_EVENT_ON_CORE_TYPE(ARCHPMU_CORE_TYPE_CORE);
    const uint32_t on_atom = ARCHPMU_EVENT_ON_CORE_TYPE(ARCHPMU_CORE_TYPE_ATOM);
    const std::vector<archpmu_event> evs = {ev(0x08d1, on_core), ev(0x01d1, on_atom),
                                            ev(0x08d1, on_core), ev(0x00c4)};
    CHECK(archpmu_event_elsewhere(&d, &evs[0]));
    CHECK_FALSE(archpmu_event_elsewhere(&d, &evs[1]));
    CHECK_FALSE(archpmu_event_elsewhere(&d, &evs[3]));
    // Absent even where a CPU's missing events are refused (no placer).
    u64 absent = 0;
    unsigned bad = ~0u;
    REQUIRE(archpmu_check_events(&d, evs.data(), 4, false, &absent, &bad) == 0);
    CHECK(absent == 0b0101);
    // Two GP counters hold the two events of this type; the others get none.
    std::vector<uint32_t> counters(4);
    REQUIRE(archpmu_allocate(&d, evs.data(), 4, absent, 0, counters.data(), &bad) == 0);
    CHECK(counters == std::vector<uint32_t>{ARCHPMU_NO_COUNTER, 0, ARCHPMU_NO_COUNTER, 1});
    // Without the absent mask they would not fit.
    CHECK(archpmu_allocate(&d, evs.data(), 4, 0, 0, counters.data(), &bad) == -ENOSPC);
    // A non-hybrid CPU (core type 0) has neither type.
    d.core_type = 0;
    CHECK(archpmu_event_elsewhere(&d, &evs[1]));
}

TEST_CASE("a group's events share its leader's core type", "[alloc][core-type]")
{
    const uint32_t on_core = ARCHPMU_EVENT_ON_CORE_TYPE(ARCHPMU_CORE_TYPE_CORE);
    unsigned bad = ~0u;
    std::vector<archpmu_event> evs = {ev(0x00c0, on_core),
                                      ev(0x003c, on_core | ARCHPMU_EVENT_GROUP), ev(0x00c4)};
    CHECK(archpmu_check_core_types(evs.data(), 3, &bad) == 0);
    CHECK(bad == ~0u);
    evs[1].flags = ARCHPMU_EVENT_GROUP;  // a member of no type in a cpu_core group
    CHECK(archpmu_check_core_types(evs.data(), 3, &bad) == -EINVAL);
    CHECK(bad == 1);
    // Bits the ABI does not define stay refused.
    auto d = layout(5, 4, 3);
    CHECK(archpmu_check_event(&d, &evs[0]) == 0);
    const auto other = ev(0x00c0, 0x20);
    CHECK(archpmu_check_event(&d, &other) == -EINVAL);
}
