// SPDX-License-Identifier: MIT
// `archpmu stat --topdown`: level 1 from the architectural top-down events, in perf's
// metric-only layout.
#include <catch2/catch.hpp>

#include <cerrno>
#include <nlohmann/json.hpp>

#include "archpmu.h"
#include "archpmu/error.hpp"
#include "stat_format.hpp"
#include "stat_topdown.hpp"

using Catch::Matchers::Contains;

namespace {

constexpr std::uint64_t kLevel1 = 0xf80;  // slots and the four categories: bits 7-11

// slots, retiring, bad-spec, fe-bound, be-bound on CPUs 0 and 1, each CPU's counts per
// event; `lacks[e][c]`: CPU c's core type lacks event e.
archpmu::StatTotals totals(const std::vector<std::vector<std::uint64_t>>& per_cpu,
                           const std::vector<std::vector<bool>>& lacks)
{
    archpmu::StatTotals t;
    t.events = archpmu::parse_event_list(
        "slots,topdown-retiring,topdown-bad-spec,topdown-fe-bound,topdown-be-bound");
    t.counters = {ARCHPMU_COUNTER_FIXED | 3, 0, 1, 2, 3};
    t.cpus = {0, 1};
    t.elapsed_ns = 1000000000;
    t.per_cpu = per_cpu;
    t.absent = lacks;
    t.offline = {false, false};
    t.multiplexed = std::vector<bool>(5, false);
    t.crowded_out.resize(5);
    t.enabled_ns = t.running_ns = std::vector<std::vector<std::uint64_t>>(5, {1, 1});
    return t;
}

const std::vector<std::vector<bool>> kNoneLacking(5, {false, false});

archpmu::CpuInfo cpu(std::uint32_t n, std::uint64_t events_mask,
                     archpmu::CoreType type = archpmu::CoreType::none)
{
    archpmu::CpuInfo c;
    c.cpu = n;
    c.version = 5;
    c.events_len = 13;
    c.events_mask = events_mask;
    c.core_type = type;
    return c;
}

}  // namespace

TEST_CASE("top-down level 1: the categories over their sum, as perf", "[stat][topdown]")
{
    // retiring 40, bad speculation 10, frontend 30, backend 20 (of 100), over two CPUs.
    auto t = totals({{0, 0}, {30, 10}, {5, 5}, {10, 20}, {15, 5}}, kNoneLacking);
    const auto l1 = archpmu::topdown_level1(t, {0, 1});
    REQUIRE(l1);
    CHECK(l1->retiring == Approx(0.4));
    CHECK(l1->bad_speculation == Approx(0.1));
    CHECK(l1->frontend_bound == Approx(0.3));
    CHECK(l1->backend_bound == Approx(0.2));

    archpmu::StatFormat f;
    f.target = "'./prog'";
    f.task = true;
    f.topdown_level = 1;
    // perf 6.1's metric-only table: names and values right-aligned in 20 columns.
    CHECK(archpmu::stat_report(t, f) ==
          "\n Performance counter stats for './prog':\n\n"
          "            Retiring      Bad Speculation       Frontend Bound        Backend Bound \n"
          "               40.0%                10.0%                30.0%                20.0% \n"
          "\n         1.000000000 seconds time elapsed\n\n");
    // The footer is stat's: a command's user and sys time, or -r's spread.
    t.command_times = archpmu::StatTotals::CpuTimes{500000000, 0};
    CHECK_THAT(archpmu::stat_report(t, f),
               Catch::EndsWith("seconds time elapsed\n\n         0.500000000 seconds user\n"
                               "         0.000000000 seconds sys\n\n\n"));
    t.command_times.reset();
    f.style = archpmu::StatFormat::Style::csv;
    f.separator = ",";
    CHECK(archpmu::stat_report(t, f) ==
          "Retiring,Bad Speculation,Frontend Bound,Backend Bound,\n40.0,10.0,30.0,20.0,\n");
    f.style = archpmu::StatFormat::Style::json;
    const auto doc = nlohmann::json::parse(archpmu::stat_report(t, f));
    CHECK(doc["topdown"]["level"] == 1);
    CHECK(doc["topdown"]["all"]["frontend_bound"].get<double>() == Approx(30.0));
    CHECK(doc["events"].size() == 5);
}

TEST_CASE("without bad speculation, slots are the whole and bad speculation the rest",
          "[stat][topdown]")
{
    // Arrow Lake's P-core: slots 200, retiring 100, fe 40, be 40, no bad-spec event.
    std::vector<std::vector<bool>> lacks = kNoneLacking;
    lacks[2] = {true, true};
    const auto t = totals({{150, 50}, {80, 20}, {0, 0}, {30, 10}, {20, 20}}, lacks);
    const auto l1 = archpmu::topdown_level1(t, {0, 1});
    REQUIRE(l1);
    CHECK(l1->retiring == Approx(0.5));
    CHECK(l1->bad_speculation == Approx(0.1));
    CHECK(l1->frontend_bound == Approx(0.2));
    CHECK(l1->backend_bound == Approx(0.2));
    // Nothing counted: perf's <not counted>, not 0%.
    const auto idle = totals({{0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}}, lacks);
    REQUIRE(archpmu::topdown_level1(idle, {0, 1}));
    CHECK_FALSE(archpmu::topdown_level1(idle, {0, 1})->counted);
    archpmu::StatFormat f;
    f.topdown_level = 1;
    f.style = archpmu::StatFormat::Style::csv;
    f.separator = ";";
    CHECK_THAT(archpmu::stat_report(idle, f), Contains("\n<not counted>;<not counted>;"));
    // Without slots either, there is no level 1.
    lacks[0] = {true, true};
    CHECK_FALSE(
        archpmu::topdown_level1(totals({{0, 0}, {1, 1}, {0, 0}, {1, 1}, {1, 1}}, lacks), {0, 1}));
}

TEST_CASE("top-down takes each CPU by its own events, and only CPUs where all of them ran",
          "[stat][topdown]")
{
    // Without CAP_PERFMON the events are :u: found by their encoding.
    auto t = totals({{0, 0}, {30, 10}, {5, 5}, {10, 20}, {15, 5}}, kNoneLacking);
    t.events = archpmu::parse_event_list(
        "slots:u,topdown-retiring:u,topdown-bad-spec:u,"
        "topdown-fe-bound:u,topdown-be-bound:u");
    REQUIRE(archpmu::topdown_level1(t, {0, 1}));
    CHECK(archpmu::topdown_level1(t, {0, 1})->retiring == Approx(0.4));

    // CPU 0 lacks bad-spec (whole: its slots), CPU 1 has it: one scope, each CPU its own way.
    std::vector<std::vector<bool>> lacks = kNoneLacking;
    lacks[2] = {true, false};
    const auto mixed = totals({{100, 0}, {50, 30}, {0, 10}, {20, 30}, {20, 30}}, lacks);
    const auto l1 = archpmu::topdown_level1(mixed, {0, 1});
    REQUIRE(l1);
    CHECK(l1->retiring == Approx(80.0 / 200));
    CHECK(l1->bad_speculation == Approx((10.0 + 10) / 200));  // CPU 0's rest, CPU 1's own
    CHECK(l1->frontend_bound == Approx(50.0 / 200));

    // slots below the categories' sum: the sum is the whole, no negative share.
    lacks[2] = {true, true};
    const auto low = totals({{10, 10}, {10, 10}, {0, 0}, {5, 5}, {5, 5}}, lacks);
    CHECK(archpmu::topdown_level1(low, {0, 1})->bad_speculation == Approx(0));

    // A category that never got a counter on CPU 1 (slots did): CPU 1 adds nothing,
    // rather than 100% bad speculation.
    auto crowded = totals({{100, 100}, {50, 0}, {0, 0}, {25, 0}, {25, 0}}, lacks);
    crowded.running_ns[1][1] = crowded.running_ns[3][1] = crowded.running_ns[4][1] = 0;
    const auto c1 = archpmu::topdown_level1(crowded, {0, 1});
    REQUIRE(c1);
    CHECK(c1->retiring == Approx(0.5));
    CHECK(c1->bad_speculation == Approx(0));
}

TEST_CASE("a hybrid part's top-down is per core type, each from its own events", "[stat][topdown]")
{
    // CPU 0 a P-core with slots and no bad-spec, CPU 1 an E-core the other way round.
    std::vector<std::vector<bool>> lacks = kNoneLacking;
    lacks[0] = {false, true};
    lacks[2] = {true, false};
    const auto t = totals({{100, 0}, {25, 60}, {0, 20}, {25, 10}, {25, 10}}, lacks);
    archpmu::StatFormat f;
    f.topdown_level = 1;
    f.core_types = {{0, "core"}, {1, "atom"}};
    const std::string out = archpmu::stat_report(t, f);
    CHECK_THAT(out, Contains("cpu_core                25.0%                25.0%                "
                             "25.0%                25.0% \n"));
    CHECK_THAT(out, Contains("cpu_atom                60.0%                20.0%                "
                             "10.0%                10.0% \n"));
    f.style = archpmu::StatFormat::Style::json_lines;
    const std::string lines = archpmu::stat_report(t, f);
    CHECK_THAT(lines, Contains(R"({"pmu" : "cpu_atom", "metric-value" : "60.0", )"
                               R"("metric-unit" : "Retiring"})"));
}

TEST_CASE("stat --topdown opens the top-down events some CPU has, or says why it cannot",
          "[stat][topdown]")
{
    // Arrow Lake: the P-core lacks bad-spec (bit 9), the E-core slots (bit 7).
    const auto evs = archpmu::topdown_events(
        {cpu(0, 0x1dff, archpmu::CoreType::core), cpu(1, 0x1f7f, archpmu::CoreType::atom)});
    REQUIRE(evs.size() == 5);
    CHECK(evs[0].name == "slots");
    CHECK(evs[4].name == "topdown-be-bound");
    CHECK(archpmu::topdown_events({cpu(0, 0xf7f)}).size() == 4);  // every category, no slots
    // Skylake has none of them; Ice Lake has slots alone, and PERF_METRICS.
    for (const std::uint64_t mask : {0x7fULL, 0xffULL, kLevel1 & ~0x800ULL}) {
        CAPTURE(mask);
        try {
            (void)archpmu::topdown_events({cpu(0, mask)});
            FAIL("accepted");
        } catch (const archpmu::Error& e) {
            CHECK(e.code().value() == EOPNOTSUPP);
            CHECK_THAT(e.what(), Contains("PERF_METRICS"));
        }
    }
}

TEST_CASE("top-down from PERF_METRICS: perf's group, level 2 where the model has it",
          "[stat][topdown]")
{
    auto with_metrics = [](std::uint32_t eax) {
        auto c = cpu(0, 0xff);  // Ice Lake and Sapphire Rapids: events 0-7, slots among them
        c.pmu_flags = ARCHPMU_PMU_PERF_METRICS;
        c.cpuid_01_eax = eax;
        return c;
    };
    const auto icelake = with_metrics(0x000706e5);
    const auto sapphire = with_metrics(0x000806f8);
    CHECK(archpmu::topdown_max_level({icelake}) == 1);
    CHECK(archpmu::topdown_max_level({sapphire}) == 2);
    CHECK(archpmu::topdown_max_level({cpu(0, 0x1dff)}) == 1);
    CHECK(archpmu::topdown_max_level({with_metrics(0)}) == 1);           // the model is not told
    CHECK(archpmu::topdown_max_level({with_metrics(0x000806a1)}) == 1);  // Lakefield
    auto evs = archpmu::topdown_events({icelake}, 2);
    REQUIRE(evs.size() == 5);  // slots and level 1's four metric events, one group
    CHECK(evs[0].name == "slots");
    CHECK(evs[1].config == 0x8000);
    CHECK(evs[4].config == 0x8300);
    for (std::size_t i = 1; i < evs.size(); ++i)
        CHECK((evs[i].flags & ARCHPMU_EVENT_GROUP) != 0);
    evs = archpmu::topdown_events({sapphire}, 2);
    REQUIRE(evs.size() == 9);
    CHECK(evs[8].config == 0x8700);
    CHECK(archpmu::topdown_events({sapphire}, 1).size() == 5);
    // Without slots no metric event can count: refused, as on Skylake.
    auto no_slots = icelake;
    no_slots.events_mask = 0x7f;
    CHECK_THROWS(archpmu::topdown_events({no_slots}));
}

TEST_CASE("top-down level 2: each metric over all slots, the pairs derived as perf 6.1",
          "[stat][topdown]")
{
    archpmu::StatTotals t;
    t.events = archpmu::parse_event_list(
        "{slots,cpu/event=0x00,umask=0x80/,cpu/event=0x00,umask=0x81/,"
        "cpu/event=0x00,umask=0x82/,cpu/event=0x00,umask=0x83/,cpu/event=0x00,umask=0x84/,"
        "cpu/event=0x00,umask=0x85/,cpu/event=0x00,umask=0x86/,cpu/event=0x00,umask=0x87/}");
    const std::size_t n = t.events.size();
    t.counters.assign(n, 0);
    t.cpus = {0};
    t.elapsed_ns = 1;
    // 200 slots: retiring 100 (heavy 40), bad speculation 20 (mispredicts 15), frontend
    // 40 (latency 30), backend 40 (memory 10).
    t.per_cpu = {{200}, {100}, {20}, {40}, {40}, {40}, {15}, {30}, {10}};
    t.absent.assign(n, {false});
    t.offline = {false};
    t.multiplexed.assign(n, false);
    t.crowded_out.resize(n);
    t.enabled_ns = t.running_ns = std::vector<std::vector<std::uint64_t>>(n, {1});
    const auto l = archpmu::topdown_level1(t, {0});
    REQUIRE(l);
    CHECK(l->level2);
    CHECK(l->retiring == Approx(0.5));
    CHECK(l->heavy_operations == Approx(0.2));
    CHECK(l->light_operations == Approx(0.3));
    CHECK(l->branch_mispredict == Approx(0.075));
    CHECK(l->machine_clears == Approx(0.025));
    CHECK(l->fetch_latency == Approx(0.15));
    CHECK(l->fetch_bandwidth == Approx(0.05));
    CHECK(l->memory_bound == Approx(0.05));
    CHECK(l->core_bound == Approx(0.15));
    archpmu::StatFormat f;
    f.topdown_level = 2;
    f.style = archpmu::StatFormat::Style::csv;
    f.separator = ";";
    CHECK(archpmu::stat_report(t, f) ==
          "Retiring;Bad Speculation;Frontend Bound;Backend Bound;Heavy Operations;"
          "Light Operations;Branch Mispredict;Machine Clears;Fetch Latency;Fetch Bandwidth;"
          "Memory Bound;Core Bound;\n50.0;10.0;20.0;20.0;20.0;30.0;7.5;2.5;15.0;5.0;5.0;15.0;\n");
    // Level 1 events only (an Ice Lake): level 2's columns are not supported.
    t.absent.assign(n, {false});
    for (std::size_t e = 5; e < n; ++e)
        t.absent[e] = {true};
    const auto l1 = archpmu::topdown_level1(t, {0});
    REQUIRE(l1);
    CHECK_FALSE(l1->level2);
    CHECK_THAT(archpmu::stat_report(t, f), Contains("20.0;<not supported>;<not supported>;"));
}
