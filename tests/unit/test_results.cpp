// SPDX-License-Identifier: MIT
// A session's per-event results: perf's aggregate of the per-CPU rows.
#include <catch2/catch.hpp>
#include <cerrno>

#include "archpmu/error.hpp"
#include "archpmu/events.hpp"
#include "archpmu/session.hpp"
#include "count_value_row.hpp"

using archpmu::unit::row;

TEST_CASE("results sum the CPUs and scale the sum as perf stat does", "[results]")
{
    const auto events = archpmu::parse_event_list("instructions,cycles");
    archpmu::Snapshot snap;
    snap.timestamp_ns = 42;
    // CPU-major: both events of CPU 0, then of CPU 1.
    snap.values = {row(0, 0, 100, 1000, 1000), row(0, 1, 50, 1000, 500), row(1, 0, 300, 1000, 1000),
                   row(1, 1, 150, 1000, 500)};
    snap.values[1].multiplexed = true;
    snap.values[3].crowded_out = true;
    const archpmu::Results r = archpmu::summarize(events, snap);
    REQUIRE(r.events.size() == 2);
    CHECK(r.timestamp_ns == 42);
    CHECK(r.events[0].name == "instructions");
    CHECK(r.events[0].value == 400);
    CHECK(r.events[0].per_cpu.size() == 2);
    CHECK_FALSE(r.events[0].multiplexed);
    CHECK(r.get("instructions") == 400);
    // 200 counted in 1000 of 2000 ns enabled: 400, as perf scales the aggregate.
    CHECK(r.events[1].value == 200);
    CHECK(r.events[1].time_enabled_ns == 2000);
    CHECK(r.events[1].time_running_ns == 1000);
    CHECK(r.get("cycles") == 400);
    CHECK(r.events[1].multiplexed);
    CHECK(r.events[1].crowded_out);
}

TEST_CASE("an event is absent only where no CPU of the session has it", "[results]")
{
    const auto events = archpmu::parse_event_list("r0300,r0400");
    archpmu::Snapshot snap;
    snap.values = {row(0, 0, 7, 10, 10), row(0, 1, 0, 10, 0), row(1, 0, 0, 10, 0),
                   row(1, 1, 0, 10, 0)};
    snap.values[1].absent = true;
    snap.values[2].absent = true;
    snap.values[3].absent = true;
    const archpmu::Results r = archpmu::summarize(events, snap);
    CHECK_FALSE(r.events[0].absent);  // CPU 0 has it
    CHECK(r.events[1].absent);
    CHECK(r.get("r0400") == 0);  // never on a counter: nothing to scale
}

TEST_CASE("a result is asked for by the name the event list gave", "[results]")
{
    const archpmu::Results r =
        archpmu::summarize(archpmu::parse_event_list("instructions:u"), archpmu::Snapshot{});
    CHECK(r.events.at(0).per_cpu.empty());
    CHECK_FALSE(r.events.at(0).absent);  // no rows: nothing says it is absent
    try {
        (void)r.get("instructions");
        FAIL("an event the session does not have was found");
    } catch (const archpmu::Error& e) {
        CHECK(e.code().value() == ENOENT);
        CHECK_THAT(e.what(), Catch::Contains("'instructions'"));
    }
}

TEST_CASE("summarizing into a Results again starts afresh and keeps its storage", "[results]")
{
    const auto events = archpmu::parse_event_list("instructions,cycles");
    archpmu::Snapshot first;
    first.values = {row(0, 0, 100, 1000, 1000), row(0, 1, 50, 1000, 500)};
    first.values[1].multiplexed = true;
    first.values[1].incomplete = true;
    archpmu::Results r;
    archpmu::summarize(events, first, r);
    REQUIRE(r.events[1].multiplexed);
    const auto* rows = r.events[0].per_cpu.data();

    // A second snapshot with nothing set: nothing of the first one stays.
    archpmu::Snapshot second;
    second.timestamp_ns = 7;
    second.values = {row(0, 0, 3, 10, 10), row(0, 1, 4, 10, 10)};
    archpmu::summarize(events, second, r);
    CHECK(r.timestamp_ns == 7);
    CHECK(r.events[0].value == 3);
    CHECK(r.events[1].value == 4);
    CHECK(r.events[1].time_running_ns == 10);
    CHECK_FALSE(r.events[1].multiplexed);
    CHECK_FALSE(r.events[1].incomplete);
    CHECK(r.events[0].per_cpu.size() == 1);
    CHECK(r.events[0].per_cpu.data() == rows);
    CHECK(r.events[1].name == "cycles");

    // Other events: the names follow.
    archpmu::summarize(archpmu::parse_event_list("branches,cycles"), second, r);
    CHECK(r.events[0].name == "branches");
    CHECK(r.get("branches") == 3);
}
