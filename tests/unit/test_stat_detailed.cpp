// SPDX-License-Identifier: MIT
// `archpmu stat -d/-dd/-ddd`: perf's detailed events, encoded per CPU model from the
// kernel's tables, and the <not supported> rows of those that cannot be counted.
#include <catch2/catch.hpp>

#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "archpmu.h"
#include "archpmu/cache_events.hpp"
#include "archpmu/error.hpp"
#include "archpmu/events.hpp"
#include "stat_detailed.hpp"
#include "stat_format.hpp"

using Catch::Matchers::Contains;

namespace {

archpmu::CpuInfo cpu(std::uint32_t n, std::uint32_t eax,
                     archpmu::CoreType type = archpmu::CoreType::none)
{
    archpmu::CpuInfo c;
    c.cpu = n;
    c.version = 4;
    c.cpuid_01_eax = eax;
    c.core_type = type;
    return c;
}

constexpr std::uint32_t kSkylake = 0x000506e3;        // family 6, model 5EH
constexpr std::uint32_t kAlderLake = 0x00090672;      // family 6, model 97H
constexpr std::uint32_t kNovaLake = 0x00300f10;       // family 18 (0FH + 3), model 01H
constexpr std::uint32_t kDiamondRapids = 0x00400f10;  // family 19 (0FH + 4), model 01H

std::vector<std::string> names(const std::vector<archpmu::tool::DetailedEvent>& events)
{
    std::vector<std::string> out;
    for (const auto& e : events)
        out.push_back(e.name);
    return out;
}

archpmu::EventSpec event(const char* name, std::uint64_t config)
{
    archpmu::EventSpec e;
    e.name = name;
    e.config = config;
    return e;
}

// stat's rows of `list` on `cpus` (a module with core types): its refusal, errno and
// reason, or {0, ""}.
std::pair<int, std::string> rows_refusal(const char* list,
                                         const std::vector<archpmu::CpuInfo>& cpus)
{
    try {
        archpmu::tool::with_cache_events(archpmu::parse_event_list(list), cpus, true);
        return {0, ""};
    } catch (const archpmu::Error& e) {
        return {e.code().value(), e.reason()};
    }
}

}  // namespace

TEST_CASE("stat -d, -dd, -ddd: perf 6.1's events in its order", "[stat][detailed]")
{
    using V = std::vector<std::string>;
    const std::vector<archpmu::CpuInfo> skl = {cpu(0, kSkylake)};
    CHECK(names(archpmu::tool::detailed_events(1, skl, false)) ==
          V{"L1-dcache-loads", "L1-dcache-load-misses", "LLC-loads", "LLC-load-misses"});
    CHECK(names(archpmu::tool::detailed_events(2, skl, false)).size() == 10);
    CHECK(names(archpmu::tool::detailed_events(2, skl, false))[9] == "iTLB-load-misses");
    CHECK(names(archpmu::tool::detailed_events(3, skl, false)).back() ==
          "L1-dcache-prefetch-misses");
    CHECK(archpmu::tool::detailed_events(7, skl, false).size() == 12);
}

TEST_CASE("stat -d on Skylake: the kernel's encodings, LLC not supported", "[stat][detailed]")
{
    const auto d = archpmu::tool::detailed_events(3, {cpu(0, kSkylake), cpu(1, kSkylake)}, false);
    REQUIRE(d.size() == 12);
    REQUIRE(d[0].spec);
    CHECK(d[0].spec->config == 0x81d0);  // MEM_INST_RETIRED.ALL_LOADS
    CHECK(d[0].spec->name == "L1-dcache-loads");
    REQUIRE(d[1].spec);
    CHECK(d[1].spec->config == 0x151);  // L1D.REPLACEMENT
    // LLC-loads is OFFCORE_RESPONSE, which needs an MSR archpmu never writes.
    CHECK_FALSE(d[2].spec);
    CHECK_THAT(d[2].why, Contains("OFFCORE_RSP"));
    CHECK(archpmu::cache_event_name("itlb-LOADS") == "iTLB-loads");
    CHECK(archpmu::cache_event_name("instructions").empty());
    CHECK_FALSE(d[3].spec);
    // L1-icache-loads: Skylake's table has none (perf: <not supported>).
    CHECK_FALSE(d[4].spec);
    CHECK_THAT(d[4].why, Contains("no such event"));
    REQUIRE(d[5].spec);
    CHECK(d[5].spec->config == 0x283);  // ICACHE_64B.MISS
    REQUIRE(d[8].spec);
    CHECK(d[8].spec->config == 0x2085);  // ITLB_MISSES.STLB_HIT
    CHECK_FALSE(d[10].spec);
    CHECK_FALSE(d[11].spec);
}

TEST_CASE("stat -d: a model without a table has none of the events", "[stat][detailed]")
{
    for (const auto& d : archpmu::tool::detailed_events(3, {cpu(0, 0x000006e8)}, false))  // Yonah
        CHECK_FALSE(d.spec);
    // A module that does not tell the CPU model: the reason says so.
    const auto d = archpmu::tool::detailed_events(1, {cpu(0, 0)}, false);
    CHECK_FALSE(d[0].spec);
    CHECK_THAT(d[0].why, Contains("CPUID.1:EAX"));
}

TEST_CASE("stat -d: the family and model as the SDM composes them", "[stat][detailed]")
{
    // Family 0FH + extended family, model with the extended model.
    const auto d = archpmu::tool::detailed_events(2, {cpu(0, kDiamondRapids)}, false);
    REQUIRE(d[1].spec);
    CHECK(d[1].spec->config == 0xe124);
    // A hybrid model that CPUID does not call hybrid: its P-cores' encodings.
    const auto n = archpmu::tool::detailed_events(2, {cpu(0, kNovaLake)}, false);
    REQUIRE(n[1].spec);
    CHECK(n[1].spec->config == 0xe124);
    const auto e =
        archpmu::tool::detailed_events(2, {cpu(0, kNovaLake, archpmu::CoreType::atom)}, false);
    CHECK_FALSE(e[1].spec);
    REQUIRE(e[4].spec);
    CHECK(e[4].spec->config == 0x380);
}

TEST_CASE("stat -d on a hybrid part: each core type's encoding, or none where they differ",
          "[stat][detailed]")
{
    using archpmu::CoreType;
    const auto both = archpmu::tool::detailed_events(
        1, {cpu(0, kAlderLake, CoreType::core), cpu(1, kAlderLake, CoreType::atom)}, false);
    // L1-dcache-loads is 81D0H on both.
    REQUIRE(both[0].spec);
    CHECK(both[0].spec->config == 0x81d0);
    // L1-dcache-load-misses: E124H on the P-cores, none on the E-cores.
    CHECK_FALSE(both[1].spec);
    CHECK_THAT(both[1].why, Contains("CPU 1"));
    CHECK_THAT(both[1].why, Contains("-C"));
    const auto p = archpmu::tool::detailed_events(1, {cpu(0, kAlderLake, CoreType::core)}, false);
    REQUIRE(p[1].spec);
    CHECK(p[1].spec->config == 0xe124);
    const auto e = archpmu::tool::detailed_events(1, {cpu(1, kAlderLake, CoreType::atom)}, false);
    CHECK_FALSE(e[1].spec);
}

TEST_CASE(
    "stat -d on a hybrid part with a module that keeps events to a core type: an event "
    "per core type, as perf's",
    "[stat][detailed][core-type]")
{
    using archpmu::CoreType;
    const auto d = archpmu::tool::detailed_events(
        1,
        {cpu(0, kAlderLake, CoreType::core), cpu(1, kAlderLake, CoreType::atom),
         cpu(2, kAlderLake, CoreType::core)},
        true);
    // Each core type's event, P-cores first; the lines show them as cpu_core/NAME/.
    CHECK(names(d) == std::vector<std::string>{"L1-dcache-loads", "L1-dcache-loads",
                                               "L1-dcache-load-misses", "L1-dcache-load-misses",
                                               "LLC-loads", "LLC-loads", "LLC-load-misses",
                                               "LLC-load-misses"});
    const uint32_t on_core = ARCHPMU_EVENT_ON_CORE_TYPE(ARCHPMU_CORE_TYPE_CORE);
    const uint32_t on_atom = ARCHPMU_EVENT_ON_CORE_TYPE(ARCHPMU_CORE_TYPE_ATOM);
    REQUIRE(d[0].spec);
    CHECK(d[0].spec->config == 0x81d0);
    CHECK(d[0].spec->flags == (on_core | ARCHPMU_EVENT_RAW));
    CHECK(d[0].flags == on_core);
    CHECK(d[3].flags == on_atom);
    REQUIRE(d[1].spec);
    CHECK(d[1].spec->flags == (on_atom | ARCHPMU_EVENT_RAW));
    // The P-cores count their L1-dcache-load-misses; the E-cores have none.
    REQUIRE(d[2].spec);
    CHECK(d[2].spec->config == 0xe124);
    CHECK(d[2].spec->flags == (on_core | ARCHPMU_EVENT_RAW));
    CHECK_FALSE(d[3].spec);
    CHECK_THAT(d[3].why, Contains("has no such event"));
    // One core type alone: perf's names, no type.
    const auto p = archpmu::tool::detailed_events(1, {cpu(0, kAlderLake, CoreType::core)}, true);
    CHECK(p[1].name == "L1-dcache-load-misses");
    REQUIRE(p[1].spec);
    CHECK(p[1].spec->flags == ARCHPMU_EVENT_RAW);
}

TEST_CASE("stat -e with perf's cache events: encoded per model, split per core type as perf",
          "[stat][detailed][cache-events]")
{
    using archpmu::CoreType;
    using archpmu::parse_event_list;
    using archpmu::tool::with_cache_events;
    const std::vector<archpmu::CpuInfo> skl = {cpu(0, kSkylake), cpu(1, kSkylake)};
    // Encoded with their modifiers; the other events as they are.
    auto rows =
        with_cache_events(parse_event_list("cycles,L1-dcache-load-misses:u,LLC-loads"), skl, true);
    REQUIRE(rows.size() == 3);
    REQUIRE(rows[0].spec);
    CHECK(rows[0].spec->config == 0x3c);
    REQUIRE(rows[1].spec);
    CHECK(rows[1].spec->config == (0x151 | ARCHPMU_EVTSEL_USR));
    CHECK(rows[1].spec->cache_event.empty());
    CHECK(rows[1].name == "L1-dcache-load-misses:u");
    // LLC-loads needs OFFCORE_RSP: perf's <not supported> row.
    CHECK_FALSE(rows[2].spec);
    CHECK_THAT(rows[2].why, Contains("OFFCORE_RSP"));
    // In a group it cannot be a row of its own: refused, named.
    auto [code, why] = rows_refusal("{cycles,LLC-loads}", skl);
    CHECK(code == EOPNOTSUPP);
    CHECK_THAT(why, Contains("'LLC-loads' in a group: it needs OFFCORE_RSP"));

    // Alder Lake's P- and E-cores together: one event per core type, P-cores first.
    const std::vector<archpmu::CpuInfo> adl = {cpu(0, kAlderLake, CoreType::core),
                                               cpu(1, kAlderLake, CoreType::atom)};
    rows = with_cache_events(parse_event_list("L1-dcache-load-misses,instructions"), adl, true);
    REQUIRE(rows.size() == 3);
    const uint32_t on_core = ARCHPMU_EVENT_ON_CORE_TYPE(ARCHPMU_CORE_TYPE_CORE);
    const uint32_t on_atom = ARCHPMU_EVENT_ON_CORE_TYPE(ARCHPMU_CORE_TYPE_ATOM);
    REQUIRE(rows[0].spec);
    CHECK(rows[0].spec->config == 0xe124);
    CHECK(rows[0].spec->flags == (on_core | ARCHPMU_EVENT_RAW));
    CHECK_FALSE(rows[1].spec);
    CHECK(rows[1].flags == on_atom);
    CHECK_THAT(rows[1].why, Contains("no such event"));
    CHECK(rows[2].name == "instructions");
    // One core type named: that type's encoding alone.
    rows = with_cache_events(parse_event_list("cpu_core/L1-dcache-load-misses/"), adl, true);
    REQUIRE(rows.size() == 1);
    REQUIRE(rows[0].spec);
    CHECK(rows[0].spec->config == 0xe124);
    // Without the module's core types, or in a group, the encodings must agree.
    rows = with_cache_events(parse_event_list("L1-dcache-load-misses"), adl, false);
    REQUIRE(rows.size() == 1);
    CHECK_THAT(rows[0].why, Contains("differs"));
    CHECK(with_cache_events(parse_event_list("{L1-dcache-loads,cycles}"), adl, true)
              .at(0)
              .spec->config == 0x81d0);
    std::tie(code, why) = rows_refusal("{L1-dcache-load-misses,cycles}", adl);
    CHECK(code == EINVAL);
    CHECK_THAT(why, Contains("cpu_core/L1-dcache-load-misses/ or cpu_atom/L1-dcache-load-misses/"));
    // Where both core types lack it alike, the reason is theirs, not a difference.
    std::tie(code, why) = rows_refusal("{cycles,LLC-loads}", adl);
    CHECK(code == EOPNOTSUPP);
    CHECK_THAT(why, Contains("'LLC-loads' in a group: it needs OFFCORE_RSP"));
}

TEST_CASE("stat -d: <not supported> rows among the counts, miss ratios by name", "[stat][detailed]")
{
    archpmu::StatTotals t;
    t.events = {event("cycles", 0x3c), event("L1-dcache-loads", 0x81d0),
                event("L1-dcache-load-misses", 0x151)};
    t.counters = {ARCHPMU_COUNTER_FIXED | 1, 0, 1};
    t.cpus = {0, 1};
    t.elapsed_ns = 1000000000;
    t.per_cpu = {{500, 500}, {300, 100}, {30, 10}};
    t.absent = std::vector<std::vector<bool>>(3, {false, false});
    t.offline = {false, false};
    t.multiplexed = std::vector<bool>(3, false);
    t.crowded_out.resize(3);
    t.enabled_ns = t.running_ns = std::vector<std::vector<std::uint64_t>>(3, {1, 1});

    std::vector<archpmu::EventSpec> rows = t.events;
    rows.push_back(event("LLC-loads", 0));
    rows.push_back(event("LLC-load-misses", 0));
    const std::vector<bool> opened = {true, true, true, false, false};
    const auto all = archpmu::tool::with_unopened_rows(t, rows, opened);
    REQUIRE(all.events.size() == 5);
    CHECK(all.events[3].name == "LLC-loads");
    CHECK(all.counters[3] == ARCHPMU_NO_COUNTER);
    CHECK(all.per_cpu[2] == std::vector<std::uint64_t>{30, 10});
    CHECK(all.absent[4] == std::vector<bool>{true, true});

    archpmu::StatFormat f;
    const std::string human = archpmu::stat_human(all, f);
    CHECK_THAT(human, Contains("<not supported>      LLC-loads"));
    CHECK_THAT(human, Contains("<not supported>      LLC-load-misses"));
    // 40 of 400 loads missed: perf's "of all L1-dcache accesses".
    CHECK_THAT(human, Contains("#  10.00% of all L1-dcache accesses"));
    f.style = archpmu::StatFormat::Style::csv;
    f.separator = ",";
    const std::string csv = archpmu::stat_csv(all, f);
    CHECK_THAT(csv, Contains("<not supported>,,LLC-loads,"));
    CHECK_THAT(csv, Contains("40,,L1-dcache-load-misses,"));
    CHECK_THAT(csv, Contains("10.00,of all L1-dcache accesses"));
}

TEST_CASE("stat -d: rows between the counts keep each count in its place, in every form",
          "[stat][detailed]")
{
    // Skylake -dd: L1-icache-loads has no encoding, between opened rows. Goldmont's
    // iTLB-loads is C0H, instructions' encoding, and gets no insn-per-cycle ratio.
    archpmu::StatTotals t;
    t.events = {event("cycles", 0x3c), event("instructions", 0xc0),
                event("L1-icache-load-misses:u", 0x10283), event("iTLB-loads:u", 0x100c0)};
    t.counters = {ARCHPMU_COUNTER_FIXED | 1, ARCHPMU_COUNTER_FIXED, 0, 1};
    t.cpus = {0};
    t.elapsed_ns = 1000000000;
    t.per_cpu = {{1000}, {2000}, {7}, {9}};
    t.absent = std::vector<std::vector<bool>>(4, {false});
    t.offline = {false};
    t.multiplexed = std::vector<bool>(4, false);
    t.crowded_out.resize(4);
    t.enabled_ns = t.running_ns = std::vector<std::vector<std::uint64_t>>(4, {1});
    const std::vector<archpmu::EventSpec> rows = {
        t.events[0], t.events[1], event("L1-icache-loads", 0), t.events[2], t.events[3]};
    const auto all = archpmu::tool::with_unopened_rows(t, rows, {true, true, false, true, true});
    REQUIRE(all.per_cpu.size() == 5);
    CHECK(all.per_cpu[3] == std::vector<std::uint64_t>{7});
    CHECK(all.per_cpu[4] == std::vector<std::uint64_t>{9});
    CHECK(all.counters[3] == 0);
    CHECK(all.absent[2] == std::vector<bool>{true});

    archpmu::StatFormat f;
    const std::string human = archpmu::stat_human(all, f);
    CHECK_THAT(human, Contains("<not supported>      L1-icache-loads"));
    // The base is not counted: the ratio's unit alone, as perf.
    CHECK_FALSE(Contains("of all L1-icache accesses").match(human));
    CHECK_THAT(human, Contains("2.00 insn per cycle"));
    CHECK_FALSE(Contains("0.01 insn per cycle").match(human));
    f.style = archpmu::StatFormat::Style::json;
    const auto doc = nlohmann::json::parse(archpmu::stat_json(all, f));
    CHECK(doc["events"][2]["value"].is_null());
    CHECK(doc["events"][2]["config"].is_null());
    CHECK(doc["events"][2]["per_cpu"]["0"].is_null());
    CHECK(doc["events"][3]["value"] == 7);
    f.style = archpmu::StatFormat::Style::json_lines;
    const std::string lines = archpmu::stat_json_lines(all, f);
    CHECK_THAT(lines, Contains("\"counter-value\" : \"<not supported>\", \"unit\" : \"\", "
                               "\"event\" : \"L1-icache-loads\""));
    CHECK_THAT(lines,
               Contains("\"counter-value\" : \"9.000000\", \"unit\" : \"\", \"event\" : "
                        "\"iTLB-loads:u\", \"event-runtime\" : 1, \"pcnt-running\" : "
                        "100.00, \"metric-value\" : 0.000000, \"metric-unit\" : \"(null)\""));
}

TEST_CASE("a CPU's family and model as the SDM displays them", "[stat][detailed]")
{
    CHECK(cpu(0, kSkylake).family() == 6);
    CHECK(cpu(0, kSkylake).model() == 0x5e);
    CHECK(cpu(0, kDiamondRapids).family() == 19);
    CHECK(cpu(0, kDiamondRapids).model() == 0x01);
    // Family 0FH's extended family, and no extended model below family 06H.
    CHECK(cpu(0, 0x00000f48).family() == 15);
    CHECK(cpu(0, 0x00010552).model() == 0x05);
    CHECK(cpu(0, 0).family() == 0);
}

TEST_CASE(
    "stat -d on a hybrid part: a core type's event has its type's line only, and its "
    "type's ratio",
    "[stat][detailed][core-type]")
{
    const uint32_t on_core = ARCHPMU_EVENT_ON_CORE_TYPE(ARCHPMU_CORE_TYPE_CORE);
    const uint32_t on_atom = ARCHPMU_EVENT_ON_CORE_TYPE(ARCHPMU_CORE_TYPE_ATOM);
    archpmu::StatTotals t;
    t.events = {event("dTLB-loads", 0x81d0), event("dTLB-loads", 0x81d0),
                event("dTLB-load-misses", 0xe12), event("dTLB-load-misses", 0xe08)};
    t.events[0].flags = t.events[2].flags = on_core;
    t.events[1].flags = t.events[3].flags = on_atom;
    t.counters = {0, 1, 2, 3};
    t.cpus = {0, 1};
    t.elapsed_ns = 1000000000;
    t.per_cpu = {{400, 0}, {0, 200}, {8, 0}, {0, 20}};
    t.absent = {{false, true}, {true, false}, {false, true}, {true, false}};
    t.offline = {false, false};
    t.multiplexed = std::vector<bool>(4, false);
    t.crowded_out.resize(4);
    t.enabled_ns = t.running_ns = {{5, 0}, {0, 5}, {5, 0}, {0, 5}};
    archpmu::StatFormat f;
    f.core_types = {{0, "core"}, {1, "atom"}};
    f.style = archpmu::StatFormat::Style::csv;
    f.separator = ",";
    CHECK(archpmu::stat_csv(t, f) ==
          "400,,cpu_core/dTLB-loads/,5,100.00,,,gp0\n"
          "200,,cpu_atom/dTLB-loads/,5,100.00,,,gp1\n"
          "8,,cpu_core/dTLB-load-misses/,5,100.00,2.00,of all dTLB cache accesses,gp2\n"
          "20,,cpu_atom/dTLB-load-misses/,5,100.00,10.00,of all dTLB cache accesses,gp3\n");
    // Per CPU (-A): each CPU's own type's events.
    f.per_cpu = true;
    CHECK(archpmu::stat_csv(t, f) ==
          "CPU0,400,,dTLB-loads,5,100.00,,,gp0\n"
          "CPU1,200,,dTLB-loads,5,100.00,,,gp1\n"
          "CPU0,8,,dTLB-load-misses,5,100.00,2.00,of all dTLB cache accesses,gp2\n"
          "CPU1,20,,dTLB-load-misses,5,100.00,10.00,of all dTLB cache accesses,gp3\n");
    f.per_cpu = false;
    f.style = archpmu::StatFormat::Style::json;
    const auto doc = nlohmann::json::parse(archpmu::stat_json(t, f));
    CHECK(doc["events"][1]["core_type"] == "atom");
    CHECK(doc["events"][1]["per_core_type"]["core"].is_null());
    CHECK(doc["events"][1]["per_core_type"]["atom"] == 200);
}

TEST_CASE(
    "stat on a hybrid part: cpu_core/.../ events keep their names, and IPC pairs within "
    "a core type",
    "[stat][core-type]")
{
    const uint32_t on_core = ARCHPMU_EVENT_ON_CORE_TYPE(ARCHPMU_CORE_TYPE_CORE);
    const uint32_t on_atom = ARCHPMU_EVENT_ON_CORE_TYPE(ARCHPMU_CORE_TYPE_ATOM);
    archpmu::StatTotals t;
    // The PMU in any case, as the parser takes it.
    t.events = {event("CPU_ATOM/cycles/", 0x3c), event("cpu_core/cycles/", 0x3c),
                event("cpu_core/instructions/", 0xc0)};
    t.events[0].flags = on_atom;
    t.events[1].flags = t.events[2].flags = on_core;
    t.counters = {ARCHPMU_COUNTER_FIXED | 1, ARCHPMU_COUNTER_FIXED | 1, ARCHPMU_COUNTER_FIXED};
    t.cpus = {0, 1};
    t.elapsed_ns = 1000000000;
    t.per_cpu = {{0, 300}, {1000, 0}, {2000, 0}};
    t.absent = {{true, false}, {false, true}, {false, true}};
    t.offline = {false, false};
    t.multiplexed = std::vector<bool>(3, false);
    t.crowded_out.resize(3);
    t.enabled_ns = t.running_ns = {{0, 5}, {5, 0}, {5, 0}};
    archpmu::StatFormat f;
    f.core_types = {{0, "core"}, {1, "atom"}};
    f.style = archpmu::StatFormat::Style::csv;
    f.separator = ",";
    CHECK(archpmu::stat_csv(t, f) ==
          "300,,CPU_ATOM/cycles/,5,100.00,,,fixed1\n"
          "1000,,cpu_core/cycles/,5,100.00,,,fixed1\n"
          "2000,,cpu_core/instructions/,5,100.00,2.00,insn per cycle,fixed0\n");
}

TEST_CASE("an event's name for one core type, as perf's hybrid PMUs name it", "[stat][core-type]")
{
    using archpmu::name_on_core_type;
    CHECK(name_on_core_type("L1-dcache-load-misses:u", "atom") ==
          "cpu_atom/L1-dcache-load-misses/u");
    CHECK(name_on_core_type("cpu/event=0xc0,umask=0/:k", "core") ==
          "cpu_core/event=0xc0,umask=0/k");
    CHECK(name_on_core_type("branches@gp", "core") == "cpu_core/branches/@gp");
    // Named for its PMU already, or no core type: as it is.
    CHECK(name_on_core_type("cpu_atom/LLC-loads/", "atom") == "cpu_atom/LLC-loads/");
    CHECK(name_on_core_type("cycles", "") == "cycles");
}
