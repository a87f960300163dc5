// SPDX-License-Identifier: MIT
// Groups and multiplexing turns (module/mux/plan.c).
#include <catch2/catch.hpp>

#include <map>
#include <vector>

#include "portable_core.hpp"

extern "C" {
#include "../../module/mux/plan.h"
}

namespace {

archpmu_pmu_desc layout(uint32_t gp, uint32_t fixed)
{
    archpmu_cpuid_set c{};
    c.leaf0a = {4u | gp << 8 | 48u << 16 | 8u << 24, 0, 0, fixed | 48u << 5};
    archpmu_pmu_desc d{};
    archpmu_decode_cpuid(&c, &d);
    return d;
}

archpmu_event ev(uint64_t config, uint32_t flags = 0)
{
    return archpmu_event{config, flags, 0};
}

constexpr uint32_t F = ARCHPMU_COUNTER_FIXED;
constexpr uint32_t NONE = ARCHPMU_NO_COUNTER;
constexpr uint32_t G = ARCHPMU_EVENT_GROUP;

struct Plan {
    int err = 0;
    unsigned bad = ~0u;
    u64 pool = 0;
    std::vector<uint32_t> counters;
};

Plan plan(const archpmu_pmu_desc& d, const std::vector<archpmu_event>& evs, uint64_t busy = 0,
          u64 absent = 0)
{
    Plan p;
    p.counters.assign(evs.size(), 0);
    archpmu_mux_scratch scratch{};
    p.err = archpmu_mux_plan(&scratch, &d, evs.data(), static_cast<unsigned>(evs.size()), absent,
                             busy, p.counters.data(), &p.pool, &p.bad);
    return p;
}

// One turn (archpmu_mux_turn) over the whole list.
unsigned next_turn(const archpmu_pmu_desc& d, const std::vector<archpmu_event>& evs, u64 pool,
                   unsigned first, std::vector<uint32_t>& counters, u64 absent = 0)
{
    archpmu_mux_scratch scratch{};
    return archpmu_mux_turn(&scratch, &d, evs.data(), static_cast<unsigned>(evs.size()), absent,
                            pool, first, counters.data());
}

// Nine GP events and the three fixed-counter events: 12 on 4 GP + 3 fixed.
std::vector<archpmu_event> twelve()
{
    std::vector<archpmu_event> evs{ev(0x00c0), ev(0x003c), ev(0x0300)};
    for (uint64_t e = 0; e < 9; ++e)
        evs.push_back(ev(0x00d0 + e));
    return evs;
}

}  // namespace

TEST_CASE("groups: a lead and its GROUP members, and misplaced flags are refused", "[mux]")
{
    const std::vector<archpmu_event> evs{ev(0xc4), ev(0xc5, G), ev(0xc0), ev(0x2e, G), ev(0x3c, G)};
    unsigned bad = ~0u;
    CHECK(archpmu_check_groups(evs.data(), 5, &bad) == 0);
    CHECK(archpmu_group_end(evs.data(), 5, 0) == 2);
    CHECK(archpmu_group_end(evs.data(), 5, 2) == 5);

    const std::vector<archpmu_event> first{ev(0xc4, G)};
    CHECK(archpmu_check_groups(first.data(), 1, &bad) == -EINVAL);
    CHECK(bad == 0);
    const std::vector<archpmu_event> member_pinned{ev(0xc4), ev(0xc5, G | ARCHPMU_EVENT_NO_ROTATE)};
    CHECK(archpmu_check_groups(member_pinned.data(), 2, &bad) == -EINVAL);
    CHECK(bad == 1);

    const std::vector<archpmu_event> stays{ev(0xc4), ev(0xc5, G | ARCHPMU_EVENT_PIN), ev(0xc0)};
    CHECK(archpmu_group_stays(stays.data(), 3, 0));
    CHECK_FALSE(archpmu_group_stays(stays.data(), 3, 2));
}

TEST_CASE("12 events on 4 GP and 3 fixed counters take fair turns", "[mux]")
{
    const auto d = layout(4, 3);
    const auto evs = twelve();
    const Plan p = plan(d, evs);
    REQUIRE(p.err == 0);
    CHECK(p.pool == (0xfULL | 0x7ULL << ARCHPMU_BUSY_FIXED_SHIFT));
    CHECK(p.counters == std::vector<uint32_t>(12, NONE));  // none stays

    // 36 turns: the fixed events are on in every one, each GP event in 4 of 9.
    std::map<unsigned, int> on;
    std::vector<uint32_t> counters(12, NONE);
    unsigned first = 0;
    for (int turn = 0; turn < 36; ++turn) {
        first = next_turn(d, evs, p.pool, first, counters);
        int gp = 0;
        for (unsigned e = 0; e < 12; ++e) {
            if (counters[e] == NONE)
                continue;
            ++on[e];
            gp += (counters[e] & F) ? 0 : 1;
        }
        CHECK(gp == 4);
        CHECK(counters[0] == (F | 0));
        CHECK(counters[1] == (F | 1));
        CHECK(counters[2] == (F | 2));
    }
    for (unsigned e = 3; e < 12; ++e)
        CHECK(on[e] == 16);
}

TEST_CASE("a group is on together or not at all, and one that cannot fit is refused", "[mux]")
{
    const auto d = layout(4, 3);
    // {a,b,c} and {d,e}: 5 GP events on 4 counters, in turns of one group.
    const std::vector<archpmu_event> evs{ev(0xd0), ev(0xd1, G), ev(0xd2, G), ev(0xd3), ev(0xd4, G)};
    const Plan p = plan(d, evs);
    REQUIRE(p.err == 0);
    std::vector<uint32_t> counters(5, NONE);
    unsigned first = 0;
    for (int turn = 0; turn < 4; ++turn) {
        first = next_turn(d, evs, p.pool, first, counters);
        const bool a = counters[0] != NONE;
        CHECK((counters[1] != NONE) == a);
        CHECK((counters[2] != NONE) == a);
        CHECK((counters[3] != NONE) == !a);
        CHECK((counters[4] != NONE) == !a);
    }

    const std::vector<archpmu_event> big{ev(0xd0),    ev(0xd1, G), ev(0xd2, G),
                                         ev(0xd3, G), ev(0xd4, G), ev(0xc4)};
    const Plan refused = plan(d, big);
    CHECK(refused.err == -ENOSPC);
    CHECK(refused.bad <= 4);
}

TEST_CASE("a pinned group stays on its counters, the rest rotate around it", "[mux]")
{
    const auto d = layout(4, 3);
    auto evs = twelve();
    evs[3].flags |= ARCHPMU_EVENT_NO_ROTATE;  // the first GP event never rotates out
    const Plan p = plan(d, evs);
    REQUIRE(p.err == 0);
    CHECK(p.counters[3] == 0);
    CHECK((p.pool & 1) == 0);
    std::vector<uint32_t> counters = p.counters;
    unsigned first = 0;
    for (int turn = 0; turn < 16; ++turn) {
        first = next_turn(d, evs, p.pool, first, counters);
        CHECK(counters[3] == 0);
        int gp = 0;
        for (unsigned e = 0; e < 12; ++e)
            gp += counters[e] != NONE && !(counters[e] & F) ? 1 : 0;
        CHECK(gp == 4);
    }
}

TEST_CASE("multiplexing plans around counters others hold", "[mux]")
{
    const auto d = layout(4, 3);
    // GP 0 and 1 held: the pool is GP 2-3. A group of three GP events cannot
    // fit because of the holders: it rotates but never gets on; pinned, it
    // is refused (EBUSY, not ENOSPC).
    const uint64_t busy = 0x3;
    const std::vector<archpmu_event> evs{ev(0xd0), ev(0xd1), ev(0xd2)};
    const Plan p = plan(d, evs, busy);
    REQUIRE(p.err == 0);
    CHECK((p.pool & 0xf) == 0xc);
    std::vector<archpmu_event> trio{ev(0xd0), ev(0xd1, G), ev(0xd2, G)};
    CHECK(plan(d, trio, busy).err == 0);
    trio[0].flags |= ARCHPMU_EVENT_NO_ROTATE;
    CHECK(plan(d, trio, busy).err == -EBUSY);
}

TEST_CASE("a group crowded out by others' counters holds up nobody's turns", "[mux]")
{
    const auto d = layout(4, 3);
    // GP 0-2 held: {a,b} fits a free PMU but never the one counter left; the
    // three single events take turns on GP 3.
    const uint64_t busy = 0x7;
    const std::vector<archpmu_event> evs{ev(0xd0), ev(0xd1, G), ev(0xd2), ev(0xd3), ev(0xd4)};
    const Plan p = plan(d, evs, busy);
    REQUIRE(p.err == 0);
    CHECK((p.pool & 0xf) == 0x8);
    std::map<unsigned, int> on;
    std::vector<uint32_t> counters(5, NONE);
    unsigned first = 0;
    for (int turn = 0; turn < 9; ++turn) {
        first = next_turn(d, evs, p.pool, first, counters);
        for (unsigned e = 0; e < 5; ++e)
            on[e] += counters[e] != NONE ? 1 : 0;
    }
    CHECK(on[0] == 0);
    CHECK(on[1] == 0);
    CHECK(on[2] == 3);
    CHECK(on[3] == 3);
    CHECK(on[4] == 3);
}

TEST_CASE("an event a core type lacks counts on the other; never placed where absent", "[mux]")
{
    const auto p_core = layout(4, 4);
    const auto e_core = layout(4, 3);        // no fixed counter 3
    const archpmu_event slots = ev(0x0400);  // fixed counter 3's own event
    CHECK_FALSE(archpmu_event_absent(&p_core, &slots));
    CHECK(archpmu_event_absent(&e_core, &slots));
    const archpmu_event cycles = ev(0x003c);
    CHECK_FALSE(archpmu_event_absent(&e_core, &cycles));

    const std::vector<archpmu_event> evs{slots, ev(0xc4), ev(0xc5, G)};
    const Plan p = plan(e_core, evs, 0, 0x1);
    REQUIRE(p.err == 0);
    std::vector<uint32_t> counters(3, NONE);
    for (int turn = 0; turn < 3; ++turn) {
        next_turn(e_core, evs, p.pool, 0, counters, 0x1);
        CHECK(counters[0] == NONE);
        CHECK(counters[1] != NONE);
        CHECK(counters[2] != NONE);
    }
    // Never rotated out where it is absent: refused.
    std::vector<archpmu_event> pinned = evs;
    pinned[0].flags |= ARCHPMU_EVENT_NO_ROTATE;
    const Plan refused = plan(e_core, pinned, 0, 0x1);
    CHECK(refused.err == -ENOENT);
    CHECK(refused.bad == 0);
}

TEST_CASE("a group too big for the CPU is ENOSPC even while others hold counters", "[mux]")
{
    const auto d = layout(4, 3);
    const std::vector<archpmu_event> five{ev(0xd0),    ev(0xd1, G), ev(0xd2, G),
                                          ev(0xd3, G), ev(0xd4, G), ev(0xc4)};
    CHECK(plan(d, five, 0x1).err == -ENOSPC);  // not crowded out: it could never fit
    std::vector<archpmu_event> pinned = five;
    pinned[0].flags |= ARCHPMU_EVENT_NO_ROTATE;
    CHECK(plan(d, pinned, 0x1).err == -ENOSPC);
}

TEST_CASE("a multiplexing session takes PERF_METRICS only with fixed counter 3", "[mux][topdown]")
{
    auto d = layout(4, 4);
    archpmu_desc_set_perf_caps(&d, ARCHPMU_PERF_CAP_PERF_METRICS);
    const std::vector<archpmu_event> evs = {ev(0x01a4), ev(0x8000, G), ev(0x00c4), ev(0x00c5),
                                            ev(0x00c4), ev(0x00c5),    ev(0x00c4)};
    const u64 fixed3 = 1ULL << 35;
    auto p = plan(d, evs);
    REQUIRE(p.err == 0);
    CHECK((p.pool & ARCHPMU_GLOBAL_PERF_METRICS) != 0);
    CHECK((p.pool & fixed3) != 0);
    // Another session holds fixed counter 3: PERF_METRICS alone would be of no use.
    p = plan(d, evs, fixed3);
    REQUIRE(p.err == 0);
    CHECK((p.pool & ARCHPMU_GLOBAL_PERF_METRICS) == 0);
}
