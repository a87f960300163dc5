// SPDX-License-Identifier: MIT
// Top-down metric events on the model's PERF_METRICS (an Ice Lake impersonation with
// IA32_PERF_CAPABILITIES[15]): exact counts per category, the reset at each read,
// multiplexing, the refusals, and the registers put back as found.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "archpmu.h"
#include "archpmu/device.hpp"
#include "archpmu/error.hpp"
#include "archpmu/events.hpp"
#include "archpmu/session.hpp"
#include "harness.hpp"

using namespace archpmu::itest;
using archpmu::Session;

namespace {

constexpr uint32_t kFixedCtr3 = 0x30c;
constexpr uint32_t kPerfMetrics = 0x329;
// Slots leading perf's level-1 metric events.
constexpr const char* kGroup =
    "{slots,cpu/event=0x00,umask=0x80/,cpu/event=0x00,umask=0x81/,cpu/event=0x00,umask=0x82/,"
    "cpu/event=0x00,umask=0x83/}";

std::string icelake(bool perf_metrics = true, const char* rate = "0")
{
    return std::string("model_rate_percent=") + rate +
           (perf_metrics ? " model_perf_caps=0x8000 " : " ") +
           dump_params("GenuineIntel00706E5_IceLakeY.txt");
}

// slots, then retiring, bad speculation, frontend and backend bound, in one cross-call.
void run_slots(const std::vector<uint64_t>& n)
{
    REQUIRE_NOTHROW(inject_together(
        0, {{0x01a4, n[0]}, {0x02c2, n[1]}, {0x0073, n[2]}, {0x019c, n[3]}, {0x02a4, n[4]}}));
}

std::vector<uint64_t> values(const Session& s)
{
    std::vector<uint64_t> out;
    for (const auto& v : s.read().values)
        out.push_back(v.value);
    return out;
}

}  // namespace

TEST_CASE(
    "top-down metric events count each category's slots exactly, reset at each read, "
    "and PERF_METRICS is put back as found",
    "[topdown][metrics]")
{
    LoadedModule module(icelake());
    archpmu::Device dev;
    REQUIRE((dev.info().capabilities & ARCHPMU_CAP_PERF_METRICS) != 0);
    // What perf leaves behind: slots and metrics it saved for a task, not reset.
    model_write_msr(dev, 0, kFixedCtr3, 5000);
    model_write_msr(dev, 0, kPerfMetrics, 0x40403f40);
    const auto before = pmu_msr_snapshot(dev, 0);
    REQUIRE(model_read_msr(dev, 0, kPerfMetrics) == 0x40403f40);
    {
        Session s(archpmu::parse_event_list(kGroup), on_cpus({0}));
        const auto counters = s.counters();
        REQUIRE(counters.size() == 5);
        CHECK(counters[0] == (ARCHPMU_COUNTER_FIXED | 3));
        for (uint32_t i = 0; i < 4; ++i)
            CHECK(counters[i + 1] == (ARCHPMU_COUNTER_METRICS | i));
        // Programmed from zero, both.
        CHECK(model_read_msr(dev, 0, kPerfMetrics) == 0);
        s.start();
        CHECK((model_read_msr(dev, 0, 0x38f) & (1ULL << 48)) != 0);
        // 255 slots: PERF_METRICS holds 128, 25, 51 and 51 of 0xFF exactly.
        run_slots({255, 128, 25, 51, 51});
        CHECK(values(s) == std::vector<uint64_t>{255, 128, 25, 51, 51});
        // The read reset both, so the next counts are measured from there.
        CHECK(model_read_msr(dev, 0, kPerfMetrics) == 0);
        CHECK(model_read_msr(dev, 0, kFixedCtr3) == 0);
        run_slots({255, 51, 51, 51, 102});
        CHECK(values(s) == std::vector<uint64_t>{510, 179, 76, 102, 153});
        s.stop();
        run_slots({255, 255, 0, 0, 0});
        CHECK(values(s) == std::vector<uint64_t>{510, 179, 76, 102, 153});
    }
    CHECK(pmu_msr_snapshot(dev, 0) == before);
    CHECK(model_read_msr(dev, 0, kPerfMetrics) == 0x40403f40);
    CHECK(model_read_msr(dev, 0, kFixedCtr3) == 5000);
}

TEST_CASE(
    "top-down metric events are refused outside a slots group, and where there is no "
    "PERF_METRICS",
    "[topdown][metrics]")
{
    SECTION("with PERF_METRICS")
    {
        LoadedModule module(icelake());
        CHECK(open_errno("cpu/event=0x00,umask=0x80/", on_cpus({0})) == EINVAL);
        CHECK(open_errno("{instructions,cpu/event=0x00,umask=0x80/}", on_cpus({0})) == EINVAL);
        CHECK(open_errno("{slots:u,cpu/event=0x00,umask=0x80/}", on_cpus({0})) == EINVAL);
        auto r = run_tool("stat -e cpu/event=0x00,umask=0x80/ -C 0 --duration 0.1");
        CHECK(r.status == 1);
        CHECK_THAT(r.out, Catch::Contains("in a group led by slots"));
        // Two sessions cannot share PERF_METRICS (nor fixed counter 3).
        Session s(archpmu::parse_event_list(kGroup), on_cpus({0}));
        CHECK(open_errno(kGroup, on_cpus({0})) == EBUSY);
        CHECK(open_errno(kGroup, on_cpus({1})) == 0);
    }
    SECTION("without")
    {
        LoadedModule module(icelake(false));
        CHECK(open_errno(kGroup, on_cpus({0})) == ENOENT);
        const auto r = run_tool(std::string("stat -e '") + kGroup + "' -C 0 --duration 0.1");
        CHECK(r.status == 1);
        CHECK_THAT(r.out, Catch::Contains("needs PERF_METRICS"));
        // Multiplexing does not change it: no CPU of the session has them.
        CHECK(open_errno(kGroup, on_cpus({0}, Mux::on)) == ENOENT);
    }
}

TEST_CASE("top-down metric groups take turns on fixed counter 3 and stay consistent",
          "[topdown][metrics]")
{
    // Time-driven counting: retiring is half the slots, bad speculation a twelfth.
    LoadedModule module(icelake(true, "100"));
    // Two groups on fixed counter 3's own encoding: only one fits at a time.
    const std::string group =
        "{cpu/event=0x00,umask=0x04/,cpu/event=0x00,umask=0x80/,"
        "cpu/event=0x00,umask=0x81/}";
    Session s(archpmu::parse_event_list(group + "," + group), on_cpus({0}, Mux::on));
    s.start();
    spin_for(std::chrono::milliseconds(300));
    s.stop();
    const auto snap = s.read();
    std::map<uint32_t, archpmu::CountValue> v;
    for (const auto& x : snap.values)
        v[x.event] = x;
    for (uint32_t lead : {0u, 3u}) {
        INFO("group at " << lead);
        REQUIRE(v[lead].value > 0);
        CHECK(v[lead].multiplexed);
        CHECK(v[lead].time_running_ns < v[lead].time_enabled_ns);
        CHECK(static_cast<double>(v[lead + 1].time_running_ns) ==
              Approx(static_cast<double>(v[lead].time_running_ns)).epsilon(0.01));
        const double slots = static_cast<double>(v[lead].value);
        CHECK(static_cast<double>(v[lead + 1].value) / slots == Approx(0.5).epsilon(0.02));
        CHECK(static_cast<double>(v[lead + 2].value) / slots == Approx(1.0 / 12).epsilon(0.1));
    }
}
