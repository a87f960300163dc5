// SPDX-License-Identifier: MIT
// The event parser: names, aliases, Intel names, raw forms, modifiers,
// counter choices, lists, and errors that point at the bad part.
#include <catch2/catch.hpp>

#include <cerrno>

#include "archpmu.h"
#include "archpmu/error.hpp"
#include "archpmu/events.hpp"

using archpmu::parse_event;
using archpmu::parse_event_list;

namespace {

std::string error_of(const std::string& text)
{
    try {
        parse_event_list(text);
    } catch (const archpmu::Error& e) {
        CHECK(e.code().value() == EINVAL);
        return e.what();
    }
    return {};
}

}  // namespace

TEST_CASE("perf names and their aliases", "[events]")
{
    CHECK(parse_event("cycles").config == 0x003c);
    CHECK(parse_event("cpu-cycles").config == 0x003c);
    CHECK(parse_event("instructions").config == 0x00c0);
    CHECK(parse_event("ref-cycles").config == 0x0300);
    CHECK(parse_event("bus-cycles").config == 0x013c);
    CHECK(parse_event("cache-references").config == 0x4f2e);
    CHECK(parse_event("cache-misses").config == 0x412e);
    CHECK(parse_event("branches").config == 0x00c4);
    CHECK(parse_event("branch-instructions").config == 0x00c4);
    CHECK(parse_event("branch-misses").config == 0x00c5);
    CHECK(parse_event("slots").config == 0x01a4);
    CHECK(parse_event("topdown-bad-spec").config == 0x0073);
    CHECK(parse_event("lbr-inserts").config == 0x01e4);
    CHECK(parse_event("cycles").flags == 0);
}

TEST_CASE("Intel names, in any case", "[events]")
{
    CHECK(parse_event("INST_RETIRED.ANY").config == 0x00c0);
    CHECK(parse_event("CPU_CLK_UNHALTED.THREAD").config == 0x003c);
    CHECK(parse_event("CPU_CLK_UNHALTED.REF_TSC").config == 0x0300);
    CHECK(parse_event("LONGEST_LAT_CACHE.MISS").config == 0x412e);
    CHECK(parse_event("BR_INST_RETIRED.ALL_BRANCHES").config == 0x00c4);
    CHECK(parse_event("br_misp_retired.all_branches").config == 0x00c5);
    CHECK(parse_event("TOPDOWN.SLOTS").config == 0x01a4);
}

TEST_CASE("raw forms: r<hex> and cpu/.../", "[events]")
{
    const auto r = parse_event("r00c0");
    CHECK(r.config == 0x00c0);
    CHECK(r.flags == ARCHPMU_EVENT_RAW);
    CHECK(parse_event("r1a8").config == 0x1a8);  // umask 01, event A8
    CHECK(parse_event("r2004c0").config == 0x2004c0);

    const auto c = parse_event("cpu/event=0xc0,umask=0x00,cmask=1,inv,edge,any/");
    CHECK(c.config == (0xc0 | 1ULL << 24 | 1ULL << 23 | 1ULL << 18 | 1ULL << 21));
    CHECK(c.flags == ARCHPMU_EVENT_RAW);
    CHECK(parse_event("cpu/event=0x2e,umask=0x41/").config == 0x412e);
    CHECK(parse_event("cpu/event=192,umask=1,inv=0,cmask=2/").config == (0x01c0 | 2ULL << 24));
    // v6: the second unit mask and the CMASK equality flag (CPUID leaf 23H).
    CHECK(parse_event("cpu/event=0xc0,cmask=2,eq,umask2=0x81/").config ==
          (0xc0 | 2ULL << 24 | 1ULL << 36 | 0x81ULL << 40));
    CHECK(parse_event("cpu/event=0xc0,eq=0/").config == 0xc0);
}

TEST_CASE("modifiers :u and :k set the ring bits", "[events]")
{
    CHECK(parse_event("instructions:u").config == (0x00c0 | 1ULL << 16));
    CHECK(parse_event("instructions:k").config == (0x00c0 | 1ULL << 17));
    CHECK(parse_event("instructions:uk").config == (0x00c0 | 3ULL << 16));
    CHECK(parse_event("cpu/event=0xc4/:u").config == (0x00c4 | 1ULL << 16));
    CHECK(parse_event("r00c5:k").config == (0x00c5 | 1ULL << 17));
}

TEST_CASE("counter choices: @gp, @gpN, @fixedN", "[events]")
{
    CHECK(parse_event("instructions@gp").flags == ARCHPMU_EVENT_GP_ONLY);
    const auto gp3 = parse_event("branches@gp3");
    CHECK(gp3.flags == ARCHPMU_EVENT_PIN);
    CHECK(gp3.counter == 3);
    const auto fixed = parse_event("cycles:u@fixed1");
    CHECK(fixed.flags == ARCHPMU_EVENT_PIN);
    CHECK(fixed.counter == (ARCHPMU_COUNTER_FIXED | 1));
    CHECK(fixed.config == (0x003c | 1ULL << 16));
    CHECK(parse_event("INST_RETIRED.ANY@FIXC0").counter == ARCHPMU_COUNTER_FIXED);
    CHECK(parse_event("INST_RETIRED.ANY@PMC2").counter == 2);
}

TEST_CASE("lists split on commas outside cpu/.../", "[events]")
{
    const auto list =
        parse_event_list("cycles,cpu/event=0xc0,umask=0,cmask=1/,r00c5:u,instructions");
    REQUIRE(list.size() == 4);
    CHECK(list[0].name == "cycles");
    CHECK(list[1].name == "cpu/event=0xc0,umask=0,cmask=1/");
    CHECK(list[1].config == (0xc0 | 1ULL << 24));
    CHECK(list[2].name == "r00c5:u");
    CHECK(list[3].config == 0x00c0);
}

TEST_CASE("a bad spec gets a message that points at the offending part", "[events]")
{
    CHECK_THAT(error_of("cycles,bogus"), Catch::Contains("unknown event 'bogus'"));
    CHECK_THAT(error_of("cpu/event=0x1c0/"), Catch::Contains("event=0x1c0 is out of range"));
    CHECK_THAT(error_of("cpu/event=0xc0,cmask=256/"),
               Catch::Contains("cmask=256 is out of range (0-255)"));
    CHECK_THAT(error_of("cpu/umask=1/"), Catch::Contains("needs event="));
    CHECK_THAT(error_of("cpu/event=0xc0,bogus=1/"), Catch::Contains("unknown term 'bogus=1'"));
    CHECK_THAT(error_of("cpu/event=0xc0"), Catch::Contains("without its closing"));
    CHECK_THAT(error_of("instructions:x"), Catch::Contains("unknown modifier 'x'"));
    CHECK_THAT(error_of("instructions@pmcx"), Catch::Contains("is not a number"));
    CHECK_THAT(error_of("instructions@bank0"), Catch::Contains("unknown counter 'bank0'"));
    CHECK_THAT(error_of("rzz"), Catch::Contains("is not a number"));
    CHECK_THAT(error_of("r12345678901234567"), Catch::Contains("at most 16 hex digits"));
    CHECK_THAT(error_of("cycles,,instructions"), Catch::Contains("empty event"));
    // The caret sits under the bad part.
    CHECK_THAT(error_of("cpu/event=0xc0,cmask=999/"),
               Catch::Contains("cpu/event=0xc0,cmask=999/\n                       ^^^"));
}

TEST_CASE("empty parts, repeats and huge numbers are refused", "[events]")
{
    CHECK_THAT(error_of("cycles:"), Catch::Contains("bad event 'cycles:': empty modifier after ':' "
                                                    "(use u, k, uk or D)\n  cycles:\n        ^"));
    CHECK_THAT(error_of("cycles:u,instructions:"), Catch::Contains("empty modifier after ':'"));
    CHECK_THAT(error_of("cycles:uu"), Catch::Contains("modifier 'u' given twice"));
    CHECK_THAT(error_of("cycles:u:k"), Catch::Contains("a second ':'"));
    CHECK_THAT(error_of("cycles@gp@gp1"), Catch::Contains("a second counter choice"));
    CHECK_THAT(error_of("cpu/event=0xc0,event=0xc4/"), Catch::Contains("term 'event' given twice"));
    CHECK_THAT(error_of("cpu/event=0xc0,inv,INV/"), Catch::Contains("term 'inv' given twice"));
    CHECK_THAT(error_of("cycles,"), Catch::Contains("bad event 'cycles,': empty event (separate "
                                                    "events with one comma, none at either end)"));
    CHECK_THAT(error_of(",cycles"), Catch::Contains("empty event (separate events"));
    CHECK_THAT(error_of(""), Catch::Contains("empty event list"));
    // Past 64 bits: still archpmu::Error, not std::out_of_range from stoull.
    CHECK_THAT(error_of("cpu/event=99999999999999999999999/"),
               Catch::Contains("event=99999999999999999999999 is out of range (0-255)"));
    CHECK_THAT(error_of("cpu/event=0xc0,umask=0x10000000000000000/"),
               Catch::Contains("umask=0x10000000000000000 is out of range (0-255)"));
    CHECK_THAT(error_of("cycles@gp99999999999999999999"), Catch::Contains("is out of range"));
    CHECK(parse_event("cycles:uk@gp1").counter == 1);
}

TEST_CASE("counter names", "[events]")
{
    CHECK(archpmu::counter_name(0) == "gp0");
    CHECK(archpmu::counter_name(7) == "gp7");
    CHECK(archpmu::counter_name(ARCHPMU_COUNTER_FIXED | 2) == "fixed2");
}

TEST_CASE("groups: {a,b} with the group's modifiers, and :D pins", "[events]")
{
    const auto list = parse_event_list(
        "{cycles,instructions:k}:u,branches,{r00c4,cpu/event=0xc5,"
        "umask=0/}:D,cache-misses:uD");
    REQUIRE(list.size() == 6);
    CHECK(list[0].flags == 0);
    CHECK(list[0].name == "cycles:u");
    CHECK(list[0].config == (0x003c | ARCHPMU_EVTSEL_USR));
    CHECK(list[1].flags == ARCHPMU_EVENT_GROUP);
    CHECK(list[1].name == "instructions:k");
    CHECK(list[1].config == (0x00c0 | ARCHPMU_EVTSEL_OS));  // its own ring wins
    CHECK(list[2].flags == 0);
    CHECK(list[3].flags == (ARCHPMU_EVENT_RAW | ARCHPMU_EVENT_NO_ROTATE));
    CHECK(list[4].flags == (ARCHPMU_EVENT_GROUP | ARCHPMU_EVENT_RAW));
    CHECK(list[4].config == 0x00c5);
    CHECK(list[5].flags == ARCHPMU_EVENT_NO_ROTATE);
    CHECK(list[5].config == (0x412e | ARCHPMU_EVTSEL_USR));

    CHECK_THAT(error_of("{cycles,instructions"), Catch::Contains("'{' without its closing '}'"));
    CHECK_THAT(error_of("{}"), Catch::Contains("empty group"));
    CHECK_THAT(error_of("{cycles,}"), Catch::Contains("empty event"));
    CHECK_THAT(error_of("{cycles,{instructions}}"), Catch::Contains("a brace inside an event"));
    CHECK_THAT(error_of("{cycles}x"), Catch::Contains("unexpected text after the group's '}'"));
    CHECK_THAT(error_of("{cycles}:x"), Catch::Contains("unknown modifier 'x'"));
    CHECK_THAT(error_of("cycles:DD"), Catch::Contains("modifier 'D' given twice"));
    CHECK_THAT(error_of("{cycles},"), Catch::Contains("empty event"));
}

TEST_CASE("D on a group member is refused: the whole group is pinned or none of it", "[events]")
{
    CHECK_THAT(error_of("{cycles,instructions:D}"),
               Catch::Contains("'instructions:D': D pins a whole group: write {a,b}:D"));
    CHECK(parse_event_list("{cycles:D,instructions}")[0].flags == ARCHPMU_EVENT_NO_ROTATE);
}

TEST_CASE("perf's cache events parse by name, encoded when the session opens",
          "[events][cache-events]")
{
    const auto list = parse_event_list(
        "L1-dcache-load-misses:u,l1-DCACHE-loads,cpu_core/dTLB-loads/:k,{iTLB-loads,cycles}");
    REQUIRE(list.size() == 5);
    CHECK(list[0].cache_event == "L1-dcache-load-misses");
    CHECK(list[0].config == ARCHPMU_EVTSEL_USR);  // the modifiers' bits only
    CHECK(list[0].name == "L1-dcache-load-misses:u");
    CHECK(list[1].cache_event == "L1-dcache-loads");  // perf's spelling, from any case
    CHECK(list[2].cache_event == "dTLB-loads");
    CHECK(list[2].flags == ARCHPMU_EVENT_ON_CORE_TYPE(ARCHPMU_CORE_TYPE_CORE));
    CHECK(list[2].config == ARCHPMU_EVTSEL_OS);
    CHECK(list[3].cache_event == "iTLB-loads");
    CHECK(list[4].flags == ARCHPMU_EVENT_GROUP);
    CHECK(list[4].cache_event.empty());
    CHECK(parse_event("cycles").cache_event.empty());
    CHECK_THAT(error_of("L1-dcache-stores"), Catch::Contains("unknown event 'L1-dcache-stores'"));
}

TEST_CASE("cpu_core/.../ and cpu_atom/.../ count on one core type, as perf's hybrid PMUs",
          "[events][core-type]")
{
    const auto list = parse_event_list(
        "cpu_core/event=0xd1,umask=0x08/,cpu_atom/event=0xd1,umask=0x08/:u,cpu_core/cycles/,"
        "CPU_ATOM/instructions/@gp");
    REQUIRE(list.size() == 4);
    const uint32_t on_core = ARCHPMU_EVENT_ON_CORE_TYPE(ARCHPMU_CORE_TYPE_CORE);
    const uint32_t on_atom = ARCHPMU_EVENT_ON_CORE_TYPE(ARCHPMU_CORE_TYPE_ATOM);
    CHECK(list[0].config == 0x08d1);
    CHECK(list[0].flags == (on_core | ARCHPMU_EVENT_RAW));
    CHECK(list[1].config == (0x08d1 | ARCHPMU_EVTSEL_USR));
    CHECK(list[1].flags == (on_atom | ARCHPMU_EVENT_RAW));
    CHECK(list[1].name == "cpu_atom/event=0xd1,umask=0x08/:u");
    // A name inside: its encoding, architectural (CPUID's availability applies).
    CHECK(list[2].config == 0x003c);
    CHECK(list[2].flags == on_core);
    CHECK(list[3].config == 0x00c0);
    CHECK(list[3].flags == (on_atom | ARCHPMU_EVENT_GP_ONLY));
    // In a group.
    const auto group = parse_event_list("{cpu_core/cycles/,cpu_core/instructions/}");
    REQUIRE(group.size() == 2);
    CHECK(group[1].flags == (on_core | ARCHPMU_EVENT_GROUP));
    CHECK_THAT(error_of("{cpu_core/cycles/,instructions}"),
               Catch::Contains("'instructions': a group's events are all for one core type"));

    CHECK_THAT(error_of("cpu_core/bogus/"), Catch::Contains("unknown event 'bogus'"));
    // The inner name's own reason, under the whole event.
    CHECK_THAT(error_of("cpu_core/r12345678901234567/"),
               Catch::Contains("bad event 'cpu_core/r12345678901234567/': a raw config has at "
                               "most 16 hex digits"));
    CHECK_THAT(error_of("cpu_core/cycles:u/"),
               Catch::Contains("modifiers go after its closing '/'"));
    CHECK_THAT(error_of("cpu_atom/"), Catch::Contains("cpu_atom/ without its closing '/'"));
    CHECK_THAT(error_of("cpu_core//"), Catch::Contains("give cpu_core/ an event name"));
    CHECK_THAT(error_of("cpu_core/event=0x1c0/"), Catch::Contains("event=0x1c0 is out of range"));
}
