// SPDX-License-Identifier: MIT
// `archpmu list`: the architectural events' availability, per core type, is what
// `archpmu info` reports, on every impersonated CPU, and their counters are those the
// module takes them on; the guest's Skylake events
// come from libpfm4, and on the model backend only the architectural encodings count.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "../common/cpuid_dump.hpp"
#include "../common/dump_expectations.hpp"
#include "archpmu/error.hpp"
#include "archpmu/events.hpp"
#include "archpmu/session.hpp"
#include "harness.hpp"

using namespace archpmu::itest;

namespace {

nlohmann::json tool_json(const std::string& args)
{
    const auto r = run_command("{ " + std::string(ARCHPMU_TOOL) + " " + args + " 2>/dev/null; }");
    REQUIRE(r.status == 0);
    return nlohmann::json::parse(r.out);
}

// 0, or the errno with which the module refuses `spec` on `cpu` alone.
int open_errno(const std::string& spec, uint32_t cpu)
{
    try {
        archpmu::Session s(archpmu::parse_event_list(spec), on_cpus({cpu}));
        return 0;
    } catch (const archpmu::Error& e) {
        return e.code().value();
    }
}

}  // namespace

TEST_CASE("list's counters of each architectural event are those the module places it on",
          "[list-tool]")
{
    for (const auto& dc : archpmu::test::dump_cases()) {
        INFO(dc.file);
        LoadedModule module(dump_params(dc.file));
        const auto info = tool_json("info --json");
        const auto list = tool_json("list --json");
        // The first CPU of each core type ("all" where not hybrid), and its counters.
        std::map<std::string, nlohmann::json> cpu_of;
        for (const auto& cpu : info["cpus"]) {
            const std::string type =
                cpu["core_type"].is_null() ? "all" : cpu["core_type"].get<std::string>();
            if (!cpu_of.count(type))
                cpu_of[type] = cpu;
        }
        for (const auto& e : list["architectural"]) {
            const std::string name = e["name"];
            CHECK(e["top_down"] == (name == "slots" || name.rfind("topdown-", 0) == 0));
            // A counters entry for exactly the core types ("all") whose CPUs have it.
            std::set<std::string> want_types;
            for (const auto& cpu : info["cpus"])
                for (const auto& have : cpu["events"])
                    if (have == name)
                        want_types.insert(cpu["core_type"].is_null()
                                              ? "all"
                                              : cpu["core_type"].get<std::string>());
            REQUIRE(e.contains("counters"));
            std::set<std::string> types;
            for (const auto& [type, counters] : e["counters"].items())
                types.insert(type);
            CHECK(types == want_types);
            for (const auto& [type, counters] : e["counters"].items()) {
                INFO(name << " on " << type);
                REQUIRE(cpu_of.count(type));
                const auto& cpu = cpu_of[type];
                const unsigned n_cpu = cpu["cpu"];
                const auto fixed = counters["fixed"].get<std::set<unsigned>>();
                const auto gp = counters["gp"].get<std::set<unsigned>>();
                const auto not_driven = counters["gp_not_driven"].get<std::set<unsigned>>();
                // Every counter the CPU has, pinned by the name as stat takes it: it
                // opens exactly where the list says.
                for (const unsigned j : cpu["fixed_counters"].get<std::vector<unsigned>>())
                    CHECK((open_errno(name + "@fixed" + std::to_string(j), n_cpu) == 0) ==
                          (fixed.count(j) == 1));
                const unsigned n_gp = cpu["gp_counters"];
                for (unsigned n = 0; n < n_gp; ++n) {
                    const int err = open_errno(name + "@gp" + std::to_string(n), n_cpu);
                    CHECK((err == 0) == (gp.count(n) == 1));
                    if (not_driven.count(n))
                        CHECK(err == ECHRNG);
                }
                // With no pin, the module finds one of them, if any.
                CHECK((open_errno(name, n_cpu) == 0) == (!fixed.empty() || !gp.empty()));
            }
        }
    }
}

TEST_CASE("list shows each architectural event on exactly the CPUs info gives it", "[list-tool]")
{
    for (const auto& dc : archpmu::test::dump_cases()) {
        INFO(dc.file);
        LoadedModule module(dump_params(dc.file));
        const auto info = tool_json("info --json");
        const auto list = tool_json("list --json");
        CHECK(list["backend"] == "model");
        // event name -> the CPUs whose info lists it, and their core types.
        std::map<std::string, std::vector<unsigned>> cpus_of;
        std::map<std::string, std::set<std::string>> types_of;
        for (const auto& cpu : info["cpus"])
            for (const auto& e : cpu["events"]) {
                cpus_of[e.get<std::string>()].push_back(cpu["cpu"].get<unsigned>());
                if (!cpu["core_type"].is_null())
                    types_of[e.get<std::string>()].insert(cpu["core_type"].get<std::string>());
            }
        REQUIRE(list["architectural"].size() == 13);
        for (const auto& e : list["architectural"]) {
            const std::string name = e["name"];
            INFO(name);
            auto want = cpus_of[name];
            std::sort(want.begin(), want.end());
            CHECK(e["cpus"].get<std::vector<unsigned>>() == want);
            const auto types = e["core_types"].get<std::vector<std::string>>();
            const bool hybrid = !info["cpus"][0]["core_type"].is_null();
            if (hybrid)
                CHECK(std::set<std::string>(types.begin(), types.end()) == types_of[name]);
            else
                CHECK(types.empty());
        }
    }
}

TEST_CASE(
    "list names the guest's Skylake events from libpfm4; the model counts the architectural ones",
    "[list-tool]")
{
    // The SDM's architectural event encodings (CPUID.0AH:EBX bits 0-12), written here
    // rather than taken from the library, so the test does not grade the library by itself.
    static const std::set<unsigned long long> kArchitecturalCodes = {
        0x003c, 0x00c0, 0x013c, 0x412e, 0x4f2e, 0x00c4, 0x00c5,
        0x01a4, 0x02a4, 0x0073, 0x019c, 0x02c2, 0x01e4};
    LoadedModule module("backend=model");
    const auto list = tool_json("list --json");
    CHECK(list["pmu"] == "skl");
    REQUIRE(list["model_specific"].size() > 200);
    bool saw_l3_miss = false;
    for (const auto& e : list["model_specific"]) {
        const std::string name = e["name"];
        const auto config = std::stoull(e["config"].get<std::string>(), nullptr, 16);
        const bool architectural = kArchitecturalCodes.count(config & 0xffff) != 0;
        CHECK(e["counts"].get<bool>() == architectural);
        saw_l3_miss = saw_l3_miss || name == "MEM_LOAD_RETIRED.L3_MISS";
    }
    CHECK(saw_l3_miss);
    // PATTERN: a substring in any case, or a glob.
    const auto some = tool_json("list --json mem_load_retired");
    CHECK(some["architectural"].empty());
    for (const auto& e : some["model_specific"])
        CHECK(e["name"].get<std::string>().rfind("MEM_LOAD_RETIRED.", 0) == 0);
    CHECK(tool_json("list --json 'br*'")["architectural"].size() == 2);  // branches, branch-misses

    // A libpfm4 name counts by name: on the model, an architectural encoding does.
    const auto r = run_command("{ " + std::string(ARCHPMU_TOOL) +
                               " stat -x, -e BR_INST_RETIRED.ALL_BRANCHES,MEM_LOAD_RETIRED.L3_MISS"
                               " -a --duration 0.2 2>&1 >/dev/null; }");
    REQUIRE(r.status == 0);
    CHECK_THAT(r.out, Catch::Contains(",,BR_INST_RETIRED.ALL_BRANCHES,"));
    CHECK_THAT(r.out, Catch::Contains("0,,MEM_LOAD_RETIRED.L3_MISS,"));
}

TEST_CASE("list works without the module, without availability", "[list-tool][userspace]")
{
    const auto r = run_tool("list instructions");
    CHECK(r.status == 0);
    CHECK_THAT(r.out, Catch::Contains("instructions") && Catch::Contains("availability not shown"));
}

TEST_CASE(
    "list shows PERF_METRICS' metric events on the P-cores that have them, with their "
    "level",
    "[list-tool][topdown]")
{
    // An Arrow Lake as the real part: PERF_METRICS (levels 1 and 2) on its P-cores only.
    LoadedModule module("model_perf_caps=0x8000 model_hybrid_perf_caps=0 " +
                        dump_params("GenuineIntel00C0662_ArrowLake_07.txt"));
    const auto list = tool_json("list --json");
    REQUIRE(list["metrics"].size() == 8);
    CHECK(list["metrics"][0]["name"] == "topdown-retiring");
    CHECK(list["metrics"][0]["event"] == "cpu/event=0x00,umask=0x80/");
    CHECK(list["metrics"][0]["level"] == 1);
    CHECK(list["metrics"][7]["name"] == "topdown-mem-bound");
    CHECK(list["metrics"][7]["level"] == 2);
    std::vector<unsigned> p_cores;
    for (const unsigned cpu : online_cpus())
        if (!is_odd_cpu(cpu))
            p_cores.push_back(cpu);
    for (const auto& m : list["metrics"])
        CHECK(m["cpus"].get<std::vector<unsigned>>() == p_cores);
    const auto text = run_tool("list fetch-lat");
    REQUIRE(text.status == 0);
    std::string cpus;
    for (const unsigned cpu : p_cores)
        cpus += (cpus.empty() ? "" : ",") + std::to_string(cpu);
    CHECK_THAT(text.out, Catch::Contains("topdown-fetch-lat        cpu/event=0x00,umask=0x86/   "
                                         "level 2  CPUs " +
                                         cpus + "\n"));
}

TEST_CASE("list shows perf's cache events as each core type encodes them",
          "[list-tool][cache-events]")
{
    {
        LoadedModule module(dump_params("GenuineIntel00506E3_Skylake.txt"));
        const auto text = run_tool("list '*dcache-load*'");
        REQUIRE(text.status == 0);
        CHECK_THAT(text.out, Catch::Contains("  L1-dcache-loads            0x81d0\n"));
        CHECK_THAT(text.out, Catch::Contains("  L1-dcache-load-misses      0x151\n"));
        CHECK_THAT(text.out, !Catch::Contains("LLC-loads"));
        CHECK_THAT(run_tool("list LLC-loads").out,
                   Catch::Contains("  LLC-loads                  not supported\n"));
    }
    LoadedModule module(dump_params("GenuineIntel00C0662_ArrowLake_07.txt"));
    // P-cores first, as perf's cpu_core/ and cpu_atom/.
    CHECK_THAT(run_tool("list L1-dcache-load-misses").out,
               Catch::Contains("  L1-dcache-load-misses      core 0xe124; atom not supported\n"));
    const auto list = tool_json("list --json");
    const auto misses = std::find_if(list["cache"].begin(), list["cache"].end(), [](const auto& c) {
        return c["name"] == "L1-dcache-load-misses";
    });
    REQUIRE(misses != list["cache"].end());
    CHECK((*misses)["encodings"]["core"]["config"] == "0xe124");
    CHECK((*misses)["encodings"]["atom"]["config"].is_null());
    CHECK_THAT((*misses)["encodings"]["atom"]["why"].get<std::string>(),
               Catch::Contains("no such event"));
}
