// SPDX-License-Identifier: MIT
// Events for one core type (ARCHPMU_EVENT_CORE_TYPE, perf's cpu_core/.../ and
// cpu_atom/.../) on the Arrow Lake impersonation (CPU 0 a P-core, CPU 1 an E-core, and
// so on: the odd CPUs are E-cores):
// each counts on its type only, exactly, unscaled, in CPU and task sessions, with and
// without multiplexing; the refusals say why.
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cerrno>
#include <sstream>
#include <string>
#include <utility>

#include "archpmu.h"
#include "archpmu/error.hpp"
#include "archpmu/events.hpp"
#include "archpmu/netlink.hpp"
#include "archpmu/sampling.hpp"
#include "archpmu/session.hpp"
#include "harness.hpp"

using namespace archpmu::itest;
using archpmu::Session;

namespace {

// MEM_LOAD_RETIRED.L3_MISS-like encodings that differ per core type, as the kernel's
// cache tables have them on hybrid parts; plain r08d1 counts on both.
constexpr const char* kEvents =
    "cpu_core/event=0xd1,umask=0x08/,cpu_atom/event=0xd1,umask=0x40/,r08d1";

std::string arrow_lake()
{
    return "model_rate_percent=0 " + dump_params("GenuineIntel00C0662_ArrowLake_07.txt");
}

// 100 of 08D1H on the P-core; 30 of 40D1H and 7 of 08D1H on the E-core.
void check_counts(const archpmu::Results& r)
{
    REQUIRE(r.events.size() == 3);
    CHECK(r.events[0].value == 100);
    CHECK(r.events[0].scaled() == 100);
    CHECK(r.events[1].value == 30);
    CHECK(r.events[1].scaled() == 30);
    CHECK(r.events[2].value == 107);
    for (std::size_t e = 0; e < 3; ++e)
        CHECK_FALSE(r.events[e].absent);  // each counts somewhere
    // Per CPU: absent on the other type (the odd CPUs are E-cores), with no counter
    // and no time.
    for (const auto& v : r.events[0].per_cpu) {
        INFO("cpu " << v.cpu);
        CHECK(v.absent == is_odd_cpu(v.cpu));
        if (v.absent) {
            CHECK(v.counter == ARCHPMU_NO_COUNTER);
            CHECK(v.time_enabled_ns == 0);
            CHECK(v.time_running_ns == 0);
        }
    }
    for (const auto& v : r.events[1].per_cpu)
        CHECK(v.absent == !is_odd_cpu(v.cpu));
}

// The module's sums (Session::read_totals, ARCHPMU_COUNT_READ_SUM) are the library's of
// the rows, flag for flag: an event absent on one type's CPUs is not absent summed.
// `s` is stopped, so that both reads see the same counts and times.
void check_module_sums(const Session& s)
{
    const auto rows = s.results();
    archpmu::Results sums;
    s.read_totals(sums);
    check_sums_of_rows(rows, sums);
}

}  // namespace

TEST_CASE("cpu_core and cpu_atom events count on their core type only, on CPUs",
          "[core-type][hybrid]")
{
    LoadedModule module(arrow_lake());
    for (const auto mux : {Mux::off, Mux::on}) {
        INFO("multiplexing " << (mux == Mux::on));
        Session s(archpmu::parse_event_list(kEvents), on_cpus({0, 1}, mux));
        s.start();
        inject_events(0, 0x08d1, 100);
        inject_events(1, 0x40d1, 30);
        inject_events(1, 0x08d1, 7);
        check_counts(s.results());
        s.stop();
        check_module_sums(s);
    }
    // Pinned, and never rotated out: each on its type's CPUs, not refused on the other's
    // (both pin fixed counter 1, which each type's CPUs have once).
    for (const auto mux : {Mux::off, Mux::on}) {
        INFO("multiplexing " << (mux == Mux::on));
        Session s(archpmu::parse_event_list("cpu_core/cycles/@fixed1,cpu_atom/cycles/@fixed1,"
                                            "{cpu_core/instructions/,cpu_core/branches/}:D"),
                  on_cpus({0, 1}, mux));
        s.start();
        inject_events(0, 0x00c4, 5);
        inject_events(1, 0x00c4, 9);
        const auto r = s.results();
        CHECK(r.events[0].per_cpu[0].counter == (ARCHPMU_COUNTER_FIXED | 1));
        CHECK(r.events[0].per_cpu[1].absent);
        CHECK(r.events[1].per_cpu[1].counter == (ARCHPMU_COUNTER_FIXED | 1));
        CHECK(r.events[3].value == 5);
        CHECK(r.events[3].per_cpu[1].absent);
    }
    // Taking turns on the P-core (12 GP events on at most 10 GP counters) while the
    // E-core's own event, alone there, counts all the time, exactly.
    {
        std::string list;
        for (int i = 0; i < 12; ++i)
            list += "cpu_core/event=0xc4,umask=0x00/@gp,";
        Session s(archpmu::parse_event_list(list + "cpu_atom/event=0xc4,umask=0x00/"),
                  on_cpus({0, 1}, Mux::on));
        s.start();
        inject_events(1, 0x00c4, 50);
        const auto r = s.results();
        REQUIRE(r.events.size() == 13);
        CHECK(r.events[12].value == 50);
        for (const auto& v : r.events[12].per_cpu) {
            INFO("cpu " << v.cpu);
            CHECK(v.absent == (v.cpu == 0));
            CHECK_FALSE(v.multiplexed);
        }
        CHECK(r.events[0].per_cpu[0].multiplexed);
        CHECK(r.events[0].per_cpu[1].absent);
        CHECK(r.events[0].value == 0);
        s.stop();
        check_module_sums(s);
    }
    // The tool's lines: a cpu_core/.../ event keeps its name, on its type's line only.
    const auto t = run_tool("stat -x, -C 0,1 -e cpu_core/event=0xd1,umask=0x08/,cycles -- " +
                            std::string(ARCHPMU_ITEST) + " --inject 0 0x08d1 100");
    REQUIRE(t.status == 0);
    CHECK_THAT(t.out, Catch::StartsWith("100,,cpu_core/event=0xd1,umask=0x08/,"));
    CHECK_THAT(t.out, !Catch::Contains("cpu_atom/event=0xd1"));
    CHECK_THAT(t.out, Catch::Contains(",,cpu_atom/cycles/,"));
}

TEST_CASE("cpu_core and cpu_atom events follow a task onto their core type only",
          "[core-type][hybrid][task]")
{
    LoadedModule module(arrow_lake());
    archpmu::TaskScope self;
    self.kind = archpmu::TaskScope::Kind::thread;
    self.inherit = false;
    {
        Session s(archpmu::parse_event_list(kEvents), on_task(self));
        s.start();
        pin_to(0);
        inject_here(0x08d1, 100);
        pin_to(1);
        inject_here(0x40d1, 30);
        inject_here(0x08d1, 7);
        // Not the task's: on CPU 0 while it runs on CPU 1.
        inject_events(0, 0x08d1, 1000);
        s.stop();
        check_counts(s.results());
    }
    unpin();
}

TEST_CASE("an event for a core type no CPU of the session has is refused, saying so",
          "[core-type][hybrid]")
{
    std::string why;
    {
        LoadedModule module(arrow_lake());
        CHECK(open_errno("cpu_atom/event=0xd1,umask=0x40/", on_cpus({0}), &why) == ENOENT);
        CHECK_THAT(why, Catch::Contains("counts on cpu_atom CPUs only, and the session has none"));
        CHECK(open_errno("cpu_core/cycles/", on_cpus({1}, Mux::on), &why) == ENOENT);
        CHECK_THAT(why, Catch::Contains("counts on cpu_core CPUs only, and the session has none"));
        // Another refusal of such an event says its own reason: AnyThread, which v6
        // deprecates, not sampling.
        CHECK(open_errno("cpu_core/event=0x3c,any/", on_cpus({0, 1}), &why) == EOPNOTSUPP);
        CHECK_THAT(why, Catch::Contains("AnyThread"));
        // A group of two core types, as a program might build it.
        auto mixed = archpmu::parse_event_list("cpu_core/cycles/,cpu_atom/instructions/");
        mixed[1].flags |= ARCHPMU_EVENT_GROUP;
        try {
            Session s(mixed, on_cpus({0, 1}));
            FAIL("a group of two core types opened");
        } catch (const archpmu::Error& e) {
            CHECK(e.code().value() == EINVAL);
            CHECK_THAT(e.what(), Catch::Contains("'cpu_atom/instructions/': a group's events "
                                                 "are all for its leader's core type "
                                                 "('cpu_core/cycles/')"));
        }
    }
    // A part without core types has neither.
    LoadedModule module("model_rate_percent=0 " + dump_params("GenuineIntel00506E3_Skylake.txt"));
    CHECK(open_errno("cpu_core/cycles/", on_cpus({}), &why) == ENOENT);
    CHECK_THAT(why, Catch::Contains("counts on cpu_core CPUs only"));
}

TEST_CASE("cpu_core and cpu_atom events sample on their core type only, as perf record's",
          "[core-type][record-tool]")
{
    LoadedModule module(arrow_lake());
    const std::string file = "/tmp/archpmu-record-core-type.data";
    // Branches in fives of 100 on the P-core (CPU 0) and threes on an E-core (CPU 1): a
    // sample each for its type's event, none for the other's.
    std::string work;
    for (const auto& [cpu, times] : {std::pair{0, 5}, std::pair{1, 3}})
        for (int i = 0; i < times; ++i)
            work += std::string(work.empty() ? "" : "; ") + "taskset -c " + std::to_string(cpu) +
                    " " + ARCHPMU_ITEST + " --inject here 0xc4 100";
    for (const char* scope : {"", "-a "}) {
        INFO(scope);
        ::unlink(file.c_str());
        // --sample-read: each sample reads the other type's event too, 0 where it is absent.
        const auto rec = run_command(std::string(ARCHPMU_TOOL) + " record " + scope +
                                     "--sample-read -e cpu_core/branches/,cpu_atom/branches/ "
                                     "-c 100 -o " +
                                     file + " -- sh -c '" + work + "'");
        INFO(rec.out);
        REQUIRE(rec.status == 0);
        const auto script = run_command("perf script -i " + file + " -F cpu,event");
        INFO(script.out);
        REQUIRE(script.status == 0);
        unsigned core_on_p = 0, atom_on_e = 0, elsewhere = 0;
        std::istringstream in(script.out);
        std::string line;
        while (std::getline(in, line)) {
            if (line.find("[000]") != std::string::npos &&
                line.find("cpu_core/branches/") != std::string::npos)
                core_on_p++;
            else if (line.find("[001]") != std::string::npos &&
                     line.find("cpu_atom/branches/") != std::string::npos)
                atom_on_e++;
            else if (line.find("branches") != std::string::npos)
                elsewhere++;
        }
        CHECK(core_on_p == 5);
        CHECK(atom_on_e == 3);
        CHECK(elsewhere == 0);
    }
    // Watchers see its period, though the session's first CPU (a P-core) has none of it.
    archpmu::SessionOptions opts = on_cpus({0, 1});
    opts.sampling = archpmu::SamplingOptions{};
    auto events = archpmu::parse_event_list("cpu_atom/branches/");
    events[0].sample.period = 100;
    Session s(events, opts);
    const auto sessions = archpmu::dump_sessions();
    REQUIRE(sessions.size() == 1);
    REQUIRE(sessions[0].events.size() == 1);
    CHECK(sessions[0].events[0].period == 100);
}
