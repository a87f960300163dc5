// SPDX-License-Identifier: MIT
// A multiplexing session takes up counters that others let go after it opened
// (mux/grow.c): its turns use them, a crowded-out group comes on, a counter another
// agent counts with is left alone, and every register is put back as found.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "archpmu.h"
#include "archpmu/device.hpp"
#include "archpmu/events.hpp"
#include "archpmu/session.hpp"
#include "harness.hpp"

using namespace archpmu::itest;
using archpmu::Session;

namespace {

constexpr const char* kModel =
    "backend=model model_version=4 model_gp=4 model_fixed=3 model_rate_percent=0 ";
constexpr uint32_t kEvtsel0 = 0x186;
constexpr uint32_t kPmc0 = 0xc1;
constexpr uint64_t kEn = 1ULL << 22;
constexpr uint32_t kGlobalInuse = 0x392;

std::vector<archpmu::EventSpec> events(const std::string& list)
{
    return archpmu::parse_event_list(list);
}

// The counters the session's events are on now on CPU 0 (ARCHPMU_NO_COUNTER: off the
// PMU).
std::vector<uint32_t> counters_of(const Session& s)
{
    std::vector<uint32_t> out;
    for (const auto& v : s.read().values)
        if (v.cpu == 0)
            out.push_back(v.counter);
    return out;
}

// Waits until every event of `s` is on a counter of its own on CPU 0 (the turns took
// up what was freed), for at most `limit`.
bool all_on(const Session& s, std::chrono::milliseconds limit)
{
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
        const auto c = counters_of(s);
        const std::set<uint32_t> distinct(c.begin(), c.end());
        if (!distinct.count(ARCHPMU_NO_COUNTER) && distinct.size() == c.size())
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
}

// The counts summed over the CPUs.
std::vector<uint64_t> values(const Session& s)
{
    std::vector<uint64_t> out;
    for (const auto& r : s.results().events)
        out.push_back(r.value);
    return out;
}

}  // namespace

TEST_CASE(
    "a multiplexing session takes up the counters another session lets go, and puts "
    "them back as found",
    "[multiplex][grow]")
{
    LoadedModule module(std::string(kModel) + "mux_interval_ms=2");
    const archpmu::Device dev;
    // perf's leftovers in GP 2 (EN clear): taken, and put back as they were.
    model_write_msr(dev, 0, kEvtsel0 + 2, 0x1300c4);
    model_write_msr(dev, 0, kPmc0 + 2, 12345);
    const auto before = pmu_msr_snapshot(dev, 0);
    {
        std::optional<Session> other;
        other.emplace(events("branches,branch-misses,cache-references"), on_cpus({0}));
        Session s(events("r01c2,r02c2,r03c2,r04c2"), on_cpus({0}, Mux::on, StartAt::open));
        // On GP 3 in turns.
        for (const auto c : counters_of(s))
            CHECK((c == 3 || c == ARCHPMU_NO_COUNTER));
        other.reset();
        REQUIRE(all_on(s, std::chrono::milliseconds(2000)));
        // Each on the PMU all the time now: it counts exactly what happens.
        const auto from = values(s);
        inject_together(0, {{0x01c2, 10}, {0x02c2, 20}, {0x03c2, 30}, {0x04c2, 40}});
        const auto to = values(s);
        for (std::size_t e = 0; e < 4; ++e) {
            INFO("event " << e);
            CHECK(to[e] - from[e] == 10 * (e + 1));
        }
        // It took turns before: still scaled, as perf's would be.
        for (const auto& v : s.read().values)
            CHECK(v.multiplexed);
    }
    CHECK(pmu_msr_snapshot(dev, 0) == before);
}

TEST_CASE("a crowded-out group comes on when the counters it needs are let go", "[multiplex][grow]")
{
    LoadedModule module(std::string(kModel) + "mux_interval_ms=2");
    const archpmu::Device dev;
    const auto before = pmu_msr_snapshot(dev, 0);
    {
        std::optional<Session> other;
        other.emplace(events("r00c4,r00c5,r002e,r412e"), on_cpus({0}));
        Session s(events("{r01c2@gp,r02c2@gp},instructions"), on_cpus({0}, Mux::on, StartAt::open));
        auto first = s.read().values;
        CHECK(first[0].crowded_out);
        CHECK(first[0].counter == ARCHPMU_NO_COUNTER);
        other.reset();
        REQUIRE(all_on(s, std::chrono::milliseconds(2000)));
        const auto from = values(s);
        inject_together(0, {{0x01c2, 7}, {0x02c2, 9}});
        const auto to = values(s);
        CHECK(to[0] - from[0] == 7);
        CHECK(to[1] - from[1] == 9);
        const auto now = s.read().values;
        CHECK_FALSE(now[0].crowded_out);
        // Off the PMU for part of the time: scaled, not shown as counted all along.
        CHECK(now[0].multiplexed);
        CHECK(now[0].time_running_ns < now[0].time_enabled_ns);
        // The fixed counter's event was on all along.
        CHECK_FALSE(now[2].multiplexed);
    }
    CHECK(pmu_msr_snapshot(dev, 0) == before);
}

TEST_CASE("a multiplexing session leaves alone a freed counter another agent counts with",
          "[multiplex][grow]")
{
    // Turns a second apart: the agent programs GP 1 before the next turn looks.
    LoadedModule module(std::string(kModel) + "mux_interval_ms=1000");
    const archpmu::Device dev;
    auto expected = pmu_msr_snapshot(dev, 0);
    expected[kEvtsel0 + 1] = kEn | 0x3000c4;
    {
        std::optional<Session> other;
        other.emplace(events("branches,branch-misses,cache-references"), on_cpus({0}));
        Session s(events("r01c2,r02c2,r03c2"), on_cpus({0}, Mux::on, StartAt::open));
        other.reset();
        model_write_msr(dev, 0, kEvtsel0 + 1, kEn | 0x3000c4);
        REQUIRE(all_on(s, std::chrono::milliseconds(3500)));
        for (const auto c : counters_of(s))
            CHECK(c != 1);
        CHECK(model_read_msr(dev, 0, kEvtsel0 + 1) == (kEn | 0x3000c4));
    }
    // What was found, the agent's GP 1 included, is what is left.
    const auto after = pmu_msr_snapshot(dev, 0);
    for (const auto& [msr, value] : expected) {
        INFO("MSR " << std::hex << msr);
        // IA32_PERF_GLOBAL_INUSE mirrors the others: GP 1's agent is in use.
        if (msr != kGlobalInuse)
            CHECK(after.at(msr) == value);
    }
}

TEST_CASE("a multiplexing task session takes up the counters a CPU session lets go",
          "[multiplex][grow][task]")
{
    LoadedModule module(std::string(kModel) + "mux_interval_ms=2");
    const archpmu::Device dev;
    const auto before = pmu_msr_snapshot(dev, 0);
    pin_to(0);
    {
        archpmu::TaskScope self;
        self.kind = archpmu::TaskScope::Kind::thread;
        self.inherit = false;
        std::optional<Session> other;
        other.emplace(events("branches,branch-misses,cache-references"), on_cpus({0}));
        Session s(events("r01c2,r02c2,r03c2,r04c2"), on_task(self, Mux::on, StartAt::open));
        other.reset();
        // Its turns run while the thread runs there: it does, polling.
        REQUIRE(all_on(s, std::chrono::milliseconds(2000)));
        const auto from = values(s);
        inject_here(0x01c2, 11);
        inject_here(0x04c2, 44);
        const auto to = values(s);
        CHECK(to[0] - from[0] == 11);
        CHECK(to[3] - from[3] == 44);
    }
    unpin();
    CHECK(pmu_msr_snapshot(dev, 0) == before);
}

TEST_CASE("a crowded-out group takes no freed counter that does not bring it on",
          "[multiplex][grow]")
{
    LoadedModule module(std::string(kModel) + "mux_interval_ms=2");
    // A group of four GP events, crowded out while GP 3 is another session's.
    std::optional<Session> gp3;
    gp3.emplace(events("r00c4@gp3"), on_cpus({0}));
    Session s(events("{r01c2@gp,r02c2@gp,r03c2@gp,r04c2@gp}"),
              on_cpus({0}, Mux::on, StartAt::open));
    CHECK(s.read().values[0].crowded_out);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    // GP 0-2 stay free: they would not bring the group on.
    {
        Session third(events("r00c5,r002e,r412e"), on_cpus({0}));
        CHECK(s.read().values[0].crowded_out);
    }
    gp3.reset();
    REQUIRE(all_on(s, std::chrono::milliseconds(2000)));
    const auto from = values(s);
    inject_together(0, {{0x01c2, 1}, {0x04c2, 4}});
    const auto to = values(s);
    CHECK(to[0] - from[0] == 1);
    CHECK(to[3] - from[3] == 4);
}

TEST_CASE("a crowded-out top-down group takes PERF_METRICS only with fixed counter 3",
          "[multiplex][grow][metrics]")
{
    LoadedModule module("model_rate_percent=0 model_perf_caps=0x8000 mux_interval_ms=2 " +
                        dump_params("GenuineIntel00706E5_IceLakeY.txt"));
    const archpmu::Device dev;
    constexpr uint32_t kGlobalCtrl = 0x38f;
    constexpr uint64_t kMetricsBit = 1ULL << 48;
    const auto before = pmu_msr_snapshot(dev, 0);
    {
        // Slots alone holds fixed counter 3, not PERF_METRICS.
        std::optional<Session> slots;
        slots.emplace(events("slots"), on_cpus({0}));
        Session s(events("{slots,cpu/event=0x00,umask=0x80/,cpu/event=0x00,umask=0x81/}"),
                  on_cpus({0}, Mux::on, StartAt::open));
        CHECK(s.read().values[1].crowded_out);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        // No turn enabled PERF_METRICS without its slots.
        CHECK((model_read_msr(dev, 0, kGlobalCtrl) & kMetricsBit) == 0);
        slots.reset();
        REQUIRE(all_on(s, std::chrono::milliseconds(2000)));
        const auto from = values(s);
        inject_together(0,
                        {{0x01a4, 255}, {0x02c2, 128}, {0x0073, 25}, {0x019c, 51}, {0x02a4, 51}});
        const auto to = values(s);
        CHECK(to[0] - from[0] == 255);
        CHECK(to[1] - from[1] == 128);
        CHECK(to[2] - from[2] == 25);
    }
    CHECK(pmu_msr_snapshot(dev, 0) == before);
}

TEST_CASE("a multiplexing session grows onto GP 8 and up only while perf holds no legacy counter",
          "[multiplex][grow][sharing][v6]")
{
    // An Arrow Lake P-core (CPU 0): GP 0-9. perf holding any of GP 0-7 rewrites
    // GLOBAL_CTRL with its own bits, stopping GP 8 and 9 (own/perf_share.c).
    LoadedModule module("model_rate_percent=0 mux_interval_ms=2 " +
                        dump_params("GenuineIntel00C0662_ArrowLake_07.txt"));
    const archpmu::Device dev;
    const auto before = pmu_msr_snapshot(dev, 0);
    std::optional<Session> high;
    high.emplace(events("branches@gp8,branches@gp9"), on_cpus({0}));
    REQUIRE(load_hog(3) == 0);
    // Nine events on GP 0-2 and 4-7 take turns.
    std::optional<Session> s;
    s.emplace(events("branches,branches,branches,branches,branches,branches,branches,branches,"
                     "branches"),
              on_cpus({0}, Mux::on, StartAt::open));
    high.reset();
    // GP 8 and 9 are free now, but perf still holds GP 3: turn after turn, no event
    // goes on them, nor on GP 3.
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
    std::set<uint32_t> seen;
    while (std::chrono::steady_clock::now() < end) {
        for (const auto c : counters_of(*s))
            seen.insert(c);
        std::this_thread::sleep_for(std::chrono::milliseconds(3));
    }
    for (const uint32_t c : {3U, 8U, 9U}) {
        INFO("GP " << c);
        CHECK(seen.count(c) == 0);
    }
    // perf gone, the session grows: nine events on ten counters, one of them GP 8 or 9.
    CHECK(unload_hog() == 0);
    REQUIRE(all_on(*s, std::chrono::milliseconds(3500)));
    seen.clear();
    for (const auto c : counters_of(*s))
        seen.insert(c);
    CHECK(seen.count(8) + seen.count(9) >= 1);
    s.reset();
    CHECK(pmu_msr_snapshot(dev, 0) == before);
}
