// SPDX-License-Identifier: MIT
// archpmu::Counter, the library's front for counting one's own code, and the
// per-event results every session gives.
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

#include "archpmu.h"
#include "archpmu/counter.hpp"
#include "archpmu/device.hpp"
#include "archpmu/error.hpp"
#include "archpmu/events.hpp"
#include "archpmu/session.hpp"
#include "harness.hpp"

using namespace archpmu::itest;

namespace {

// Exact counts: injections only, the model's own counting off.
constexpr const char* kExact = "backend=model model_rate_percent=0";
constexpr uint32_t kBranches = 0x00c4;

// Injects `count` branches in a thread of this process, on `cpu`.
void inject_in_other_thread(unsigned cpu, uint64_t count)
{
    std::thread t([&] {
        pin_to(cpu);
        inject_here(kBranches, count);
    });
    t.join();
}

}  // namespace

TEST_CASE("a Counter counts the calling thread's code, summed over the CPUs it ran on",
          "[counter-front][task]")
{
    LoadedModule module(kExact);
    pin_to(0);
    archpmu::Counter c{"branches,instructions"};
    inject_here(kBranches, 1000);  // before start(): not counted
    c.start();
    inject_here(kBranches, 300);
    inject_in_other_thread(0, 500);  // another thread: not counted
    pin_to(1);
    inject_here(kBranches, 20);
    c.stop();
    inject_here(kBranches, 7);  // after stop(): not counted
    unpin();

    const archpmu::Results r = c.result();
    CHECK(r.get("branches") == 320);
    const archpmu::Result& b = r.at("branches");
    CHECK(b.value == 320);
    CHECK(b.time_running_ns > 0);
    CHECK_FALSE(b.multiplexed);
    uint64_t on0 = 0, on1 = 0;
    for (const auto& v : b.per_cpu)
        (v.cpu == 0 ? on0 : v.cpu == 1 ? on1 : on0) += v.value;
    CHECK(on0 == 300);
    CHECK(on1 == 20);
    CHECK(r.get("instructions") == 0);
    // The fast read: the module's sums, without the rows.
    check_sums_of_rows(r, c.read());

    c.reset();
    CHECK(c.result().get("branches") == 0);
    CHECK_THROWS_WITH(c.result().get("cycles"), Catch::Contains("no event 'cycles'"));
}

TEST_CASE("a Counter on a module without COUNT_READ_SUM adds up the rows itself",
          "[counter-front][task]")
{
    // A module older than ARCHPMU_CAP_READ_SUM: the library sums what COUNT_READ gives.
    LoadedModule module(std::string(kExact) +
                        " test_hide_caps=" + std::to_string(ARCHPMU_CAP_READ_SUM));
    REQUIRE((archpmu::Device().info().capabilities & ARCHPMU_CAP_READ_SUM) == 0);
    pin_to(0);
    archpmu::Counter c{"branches,instructions"};
    c.start();
    inject_here(kBranches, 300);
    pin_to(1);
    inject_here(kBranches, 20);
    c.stop();
    unpin();
    const archpmu::Results sums = c.read();
    CHECK(sums.get("branches") == 320);
    CHECK(sums.at("branches").per_cpu.empty());
    check_sums_of_rows(c.result(), sums);
}

TEST_CASE("a thread Counter's start, stop and read on its CPU reach no other CPU",
          "[counter-front][task]")
{
    // Its counters run only where its thread does: the other CPUs' are shut
    // and hold nothing new, so there is nothing to do there (perf's read() of
    // a task event is as local).
    LoadedModule module(kExact);
    const auto debugfs = [](const char* name) {
        return std::stoull(read_file(std::string("/sys/kernel/debug/archpmu/") + name));
    };
    archpmu::Counter c{"branches"};
    // Cycles of start, stop and read on `cpu`; the CPUs they reached beyond
    // it. A periodic fold (after 1 s of counting) is a round of every CPU: a
    // measure it fell into is taken again.
    const auto remote_calls_on = [&](unsigned cpu) -> uint64_t {
        pin_to(cpu);
        for (int attempt = 0; attempt < 5; ++attempt) {
            c.reset();
            const uint64_t remote = debugfs("remote_cross_calls");
            const uint64_t folds = debugfs("fold_rounds");
            for (uint64_t i = 1; i <= 5; ++i) {
                c.start();
                inject_here(kBranches, 10);
                c.stop();
                CHECK(c.result().get("branches") == 10 * i);
            }
            c.start();
            CHECK(c.result().get("branches") == 50);  // a read while it counts
            c.stop();
            if (debugfs("fold_rounds") == folds)
                return debugfs("remote_cross_calls") - remote;
        }
        FAIL("a periodic fold in every measure");
        return 0;
    };
    CHECK(remote_calls_on(0) == 0);
    // Where it moves, its counters are there: still none.
    CHECK(remote_calls_on(1) == 0);
    unpin();
}

TEST_CASE("a Counter's start, stop and read allocate nothing once it has read",
          "[counter-front][task]")
{
    // The benchmark's path: what costs a system call should cost no more
    // than that, and a heap allocation is not free.
    LoadedModule module(kExact);
    pin_to(0);
    archpmu::Counter c{"branches,instructions"};
    c.start();
    inject_here(kBranches, 10);
    (void)c.read();
    bool rising = true;
    uint64_t last = 0;
    const uint64_t before = heap_allocations();
    for (int i = 0; i < 100; ++i) {
        c.stop();
        c.start();
        inject_here(kBranches, 1);
        const uint64_t n = c.read().get("branches");
        rising = rising && n > last;
        last = n;
    }
    const uint64_t after = heap_allocations();
    c.stop();
    unpin();
    CHECK(after - before == 0);
    CHECK(rising);
    CHECK(c.read().get("branches") == 110);
    CHECK(c.result().get("branches") == 110);
    CHECK_FALSE(c.read().at("branches").multiplexed);
}

TEST_CASE("a thread Counter's count does not wrap over many short start-stop windows",
          "[counter-front][task]")
{
    // 16-bit counters: each window's 40,000 fit, five windows' 200,000 do
    // not, unless every stop folds them (a counting counter raises no PMI).
    LoadedModule module(std::string(kExact) + " model_gp_width=16");
    pin_to(0);
    archpmu::Counter c{"branches"};
    for (int i = 0; i < 5; ++i) {
        c.start();
        inject_here(kBranches, 40000);
        c.stop();
    }
    unpin();
    CHECK(c.result().get("branches") == 200000);
}

TEST_CASE("a thread Counter starts and stops only on its own thread", "[counter-front][task]")
{
    LoadedModule module(kExact);
    archpmu::Counter c{"branches"};
    std::string error;
    std::thread other([&] {
        try {
            c.start();
        } catch (const archpmu::Error& e) {
            error = e.what();
        }
    });
    other.join();
    CHECK_THAT(error, Catch::Contains("this Counter counts thread"));
    c.start();
    inject_here(kBranches, 9);
    c.stop();
    CHECK(c.result().get("branches") == 9);

    // A fork's child is another thread too, though its pthread_t is the
    // parent's (the check asks the kernel again after a fork).
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        try {
            c.start();
        } catch (const archpmu::Error& e) {
            ::_exit(e.code().value() == EINVAL ? 0 : 101);
        }
        ::_exit(102);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("a process Counter counts every thread of the process", "[counter-front][task]")
{
    LoadedModule module(kExact);
    archpmu::Counter c{"branches", archpmu::Counter::Scope::process};
    c.start();
    inject_here(kBranches, 40);
    inject_in_other_thread(1, 500);  // a thread created after the Counter: counted
    c.stop();
    CHECK(c.result().get("branches") == 540);
}

TEST_CASE("a Counter with more events than counters takes turns and scales, as perf",
          "[counter-front][task][multiplex]")
{
    LoadedModule module("backend=model mux_interval_ms=2");
    // Five GP events on four GP counters.
    archpmu::Counter c{"branches,branch-misses,cache-references,cache-misses,bus-cycles"};
    c.start();
    spin_for(std::chrono::milliseconds(300));
    c.stop();
    const archpmu::Results r = c.result();
    REQUIRE(r.events.size() == 5);
    for (const auto& e : r.events) {
        INFO(e.name);
        CHECK(e.multiplexed);
        CHECK(e.time_running_ns < e.time_enabled_ns);
        CHECK(r.get(e.name) >= e.value);
    }
}

TEST_CASE("a Counter's refusal names the bad event", "[counter-front][task]")
{
    LoadedModule module(kExact);
    try {
        archpmu::Counter c{"branches,bogus"};
        FAIL("an unknown event was taken");
    } catch (const archpmu::Error& e) {
        CHECK(e.code().value() == EINVAL);
        CHECK_THAT(e.what(), Catch::Contains("bogus"));
    }
}

TEST_CASE("a session with rings reads and sums as a counting session does",
          "[counter-front][sampling]")
{
    LoadedModule module(kExact);
    auto evs = archpmu::parse_event_list("branches,instructions");
    evs[0].sample.period = 100;
    archpmu::SessionOptions o = on_cpus({0});
    o.sampling = archpmu::SamplingOptions{};
    archpmu::Session s(evs, o);
    s.start();
    inject_events(0, kBranches, 1000);
    s.stop();
    const archpmu::Snapshot snap = s.read();
    REQUIRE(snap.values.size() == 2);
    CHECK(snap.values[0].value == 1000);
    const archpmu::Results r = archpmu::summarize(evs, snap);
    CHECK(r.get("branches") == 1000);
    CHECK_FALSE(r.at("branches").multiplexed);
    // One injection of 1000 is one overflow: one sample.
    CHECK(s.ring_stats().at(0).samples >= 1);
}

TEST_CASE("a Counter counts perf's cache events as the CPU model encodes them",
          "[counter-front][cache-events]")
{
    LoadedModule module(std::string(kExact) + " " + dump_params("GenuineIntel00506E3_Skylake.txt"));
    pin_to(0);
    // Skylake: MEM_INST_RETIRED.ALL_LOADS (81D0H) and L1D.REPLACEMENT (151H).
    archpmu::Counter c{"L1-dcache-loads,L1-dcache-load-misses"};
    c.start();
    inject_here(0x81d0, 400);
    inject_here(0x0151, 40);
    c.stop();
    unpin();
    CHECK(c.result().get("L1-dcache-loads") == 400);
    CHECK(c.result().get("L1-dcache-load-misses") == 40);
    // One that needs OFFCORE_RSP is refused at the open, saying so.
    CHECK_THROWS_WITH(archpmu::Counter{"LLC-loads"}, Catch::Contains("'LLC-loads': it needs "
                                                                     "OFFCORE_RSP"));
}
