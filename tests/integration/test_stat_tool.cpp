// SPDX-License-Identifier: MIT
// The archpmu tool's stat command, end to end on the model with exact counts:
// the command it runs injects events (archpmu_itest --inject).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "archpmu/device.hpp"
#include "harness.hpp"

using namespace archpmu::itest;

namespace {

std::string injector(unsigned cpu, const char* code, unsigned long count)
{
    return std::string(ARCHPMU_ITEST) + " --inject " + std::to_string(cpu) + " " + code + " " +
           std::to_string(count);
}

// stat --topdown OPTIONS -x, on CPU 0 around `work`: level 1 of 255 slots, retiring 128,
// bad speculation 25, frontend and backend 51 each.
void check_level1_csv(const std::string& options, const std::string& work)
{
    const auto r = run_tool("stat --topdown " + options + " -x, -C 0 -- " + work);
    REQUIRE(r.status == 0);
    CHECK(r.out ==
          "Retiring,Bad Speculation,Frontend Bound,Backend Bound,\n"
          "50.2,9.8,20.0,20.0,\n");
}

// `command`'s own events: `n` of `code` injected by a task on `cpu`.
std::string here(unsigned cpu, const char* code, unsigned n)
{
    return "taskset -c " + std::to_string(cpu) + " " + ARCHPMU_ITEST + " --inject here " + code +
           " " + std::to_string(n);
}

// `out` has a whole line that matches `line`.
void check_line(const std::string& out, const std::string& line)
{
    INFO(line);
    CHECK_THAT(out, Catch::Matches("((.|\n)*\n)?" + line + "\n(.|\n)*"));
}

// The L1-dcache lines of stat -x, on the Arrow Lake impersonation for 400 loads and 40
// misses on a P-core and 200 loads on an E-core, which has no L1-dcache-load-misses.
void check_arrow_lake_l1_lines(const std::string& out)
{
    check_line(out, "400,,cpu_core/L1-dcache-loads/,[0-9]+,100\\.00,,,gp[0-9]");
    check_line(out, "200,,cpu_atom/L1-dcache-loads/,[0-9]+,100\\.00,,,gp[0-7]");
    check_line(out,
               "40,,cpu_core/L1-dcache-load-misses/,[0-9]+,100\\.00,10\\.00,of all L1-dcache "
               "accesses,gp[0-9]");
    check_line(out, "<not supported>,,cpu_atom/L1-dcache-load-misses/,0,100\\.00,,,-");
}

// On CPU 0, 400 MEM_INST_RETIRED.ALL_LOADS and 40 L1D.REPLACEMENT: on the Skylake
// impersonation, as the kernel's table encodes them, L1-dcache-loads and -load-misses.
std::string skylake_l1_work()
{
    return "sh -c '" + injector(0, "0x81d0", 400) + "; " + injector(0, "0x0151", 40) + "'";
}

}  // namespace

TEST_CASE("stat --json counts what the command did, exactly", "[stat-tool]")
{
    LoadedModule module("backend=model model_rate_percent=0");
    const auto r =
        run_tool("stat --json -e instructions,branches@gp -C 0,1 -- " + injector(1, "0xc0", 4321));
    REQUIRE(r.status == 0);
    const auto doc = nlohmann::json::parse(r.out);
    CHECK(doc["cpus"] == nlohmann::json({0, 1}));
    CHECK(doc["elapsed_ns"].get<uint64_t>() > 0);
    REQUIRE(doc["events"].size() == 2);
    const auto& ins = doc["events"][0];
    CHECK(ins["name"] == "instructions");
    CHECK(ins["config"] == "0xc0");
    CHECK(ins["counter"] == "fixed0");
    CHECK(ins["value"] == 4321);
    CHECK(ins["per_cpu"] == nlohmann::json({{"0", 0}, {"1", 4321}}));
    CHECK(doc["events"][1]["counter"] == "gp0");
    CHECK(doc["events"][1]["value"] == 0);
}

TEST_CASE("stat passes the command's exit status through", "[stat-tool]")
{
    LoadedModule module("backend=model model_rate_percent=0");
    CHECK(run_tool("stat -e instructions -- sh -c 'exit 3'").status == 3);
    CHECK(run_tool("stat -e instructions -- /nonexistent/command").status == 127);
}

TEST_CASE("stat -x and -A print CSV per CPU", "[stat-tool][userspace]")
{
    LoadedModule module("backend=model model_rate_percent=0");
    const auto r =
        run_tool("stat -x, -A -e cpu/event=0xc4,umask=0/ -C 0 -- " + injector(0, "0xc4", 77));
    REQUIRE(r.status == 0);
    // perf's fields (the run time varies), then the counter.
    CHECK_THAT(r.out, Catch::Matches("CPU0,77,,cpu/event=0xc4,umask=0/,[0-9]+,100\\.00,,,gp0\n"));
}

TEST_CASE("stat's human output shows counts, counters and IPC", "[stat-tool]")
{
    LoadedModule module("backend=model model_rate_percent=0");
    const auto r = run_tool("stat -e cycles,instructions -C 0 -- " + injector(0, "0x3c", 2000000));
    REQUIRE(r.status == 0);
    CHECK_THAT(r.out, Catch::Contains("2,000,000      cycles                  fixed1"));
    CHECK_THAT(r.out, Catch::Contains("0      instructions            fixed0"));
    CHECK_THAT(r.out, Catch::Contains("seconds time elapsed"));
}

TEST_CASE("stat refuses bad input with a message: 129 for the command line, else 1",
          "[stat-tool][userspace]")
{
    LoadedModule module("backend=model model_version=4 model_gp=4");
    auto r = run_tool("stat -e bogus --duration 0.1");
    CHECK(r.status == 129);
    CHECK_THAT(r.out, Catch::Contains("unknown event 'bogus'"));
    r = run_tool("stat -e instructions@gp9 --duration 0.1");
    CHECK(r.status == 1);
    CHECK_THAT(r.out, Catch::Contains("event 'instructions@gp9': the requested counter does not "
                                      "exist on CPU 0"));
    r = run_tool("stat -e instructions -C 0-99999 --duration 0.1");
    CHECK(r.status == 129);
    r = run_tool("stat -a -C 0 -e instructions --duration 0.1");
    CHECK(r.status == 129);
    CHECK_THAT(r.out, Catch::Contains("excludes"));
    r = run_tool("stat -e instructions");
    CHECK(r.status == 129);
    CHECK_THAT(r.out, Catch::Contains("give a COMMAND"));
}

TEST_CASE("stat -I prints one line per interval, and the last partial one",
          "[stat-tool][userspace]")
{
    LoadedModule module("backend=model");
    const auto r = run_tool("stat -x, -I 100 --duration 0.45 -e instructions -C 0");
    REQUIRE(r.status == 0);
    // Four whole intervals and the last 50 ms (a slow guest may miss one).
    const auto lines = std::count(r.out.begin(), r.out.end(), '\n');
    CHECK(lines >= 4);
    CHECK(lines <= 6);
    CHECK_THAT(r.out, Catch::Contains(",,instructions,"));
    CHECK_THAT(r.out, Catch::EndsWith(",fixed0\n"));
    // The last line is stamped at the end of the count, past 0.4 s.
    const auto last = r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1);
    CHECK(std::stod(last) >= 0.45);
}

TEST_CASE("stat --topdown gives level 1 per core type of an Arrow Lake, exactly",
          "[stat-tool][topdown]")
{
    LoadedModule module("model_rate_percent=0 " +
                        dump_params("GenuineIntel00C0662_ArrowLake_07.txt"));
    // The P-core (CPU 0) has slots and no bad-spec event: 200 slots, of which retiring
    // 100, frontend 40, backend 40, so bad speculation 20. The E-core (CPU 1) has all four
    // categories and no slots: retiring 60, bad speculation 20, frontend and backend 10.
    std::string work;
    for (const auto& [cpu, code, n] :
         std::vector<std::tuple<unsigned, const char*, unsigned>>{{0, "0x01a4", 200},
                                                                  {0, "0x02c2", 100},
                                                                  {0, "0x019c", 40},
                                                                  {0, "0x02a4", 40},
                                                                  {1, "0x02c2", 60},
                                                                  {1, "0x0073", 20},
                                                                  {1, "0x019c", 10},
                                                                  {1, "0x02a4", 10}})
        work += (work.empty() ? "" : "; ") + injector(cpu, code, n);
    auto r = run_tool("stat --topdown -x, -C 0,1 -- sh -c '" + work + "'");
    REQUIRE(r.status == 0);
    CHECK(r.out ==
          "pmu,Retiring,Bad Speculation,Frontend Bound,Backend Bound,\n"
          "cpu_core,50.0,10.0,20.0,20.0,\n"
          "cpu_atom,60.0,20.0,10.0,10.0,\n");
    r = run_tool("stat --topdown -C 0,1 -- sh -c '" + work + "'");
    REQUIRE(r.status == 0);
    CHECK_THAT(r.out, Catch::Contains("            Retiring      Bad Speculation       Frontend "
                                      "Bound        Backend Bound \n"));
    CHECK_THAT(r.out, Catch::Contains("cpu_core                50.0%                10.0%"));
    // Arrow Lake's architectural events have no level 2.
    r = run_tool("stat --topdown --td-level 2 -C 0 --duration 0.1");
    CHECK(r.status == 1);
    CHECK_THAT(r.out, Catch::Contains("the max level here is 1"));
    r = run_tool("stat -M TopdownL2 -C 0 --duration 0.1");
    CHECK(r.status == 1);
    CHECK_THAT(r.out,
               Catch::Contains("top-down level 2 (--td-level, -M TopdownL2): the max level here "
                               "is 1"));
}

TEST_CASE("stat --topdown takes level 1 from PERF_METRICS on an Ice Lake, exactly",
          "[stat-tool][topdown]")
{
    // IA32_PERF_CAPABILITIES[15] (the dump has no MSRs): PERF_METRICS.
    LoadedModule module("model_rate_percent=0 model_perf_caps=0x8000 " +
                        dump_params("GenuineIntel00706E5_IceLakeY.txt"));
    // 255 slots: retiring 128, bad speculation 25, frontend and backend 51 each, which
    // PERF_METRICS holds as exactly those fractions of 0xFF.
    // In one cross-call: a fold between slots and their categories would split them.
    const std::string work = std::string(ARCHPMU_ITEST) +
                             " --inject 0 0x01a4 255 0x02c2 128 0x0073 25 0x019c 51 0x02a4 51";
    check_level1_csv("", work);
    // perf's metric group TopdownL1 is the same.
    auto r = run_tool("stat -M TopdownL1 -x, -C 0 -- " + work);
    REQUIRE(r.status == 0);
    CHECK(r.out ==
          "Retiring,Bad Speculation,Frontend Bound,Backend Bound,\n"
          "50.2,9.8,20.0,20.0,\n");
    // The metric events are PERF_METRICS' fields times the slots, on their own "counters".
    r = run_tool("stat --topdown --json -C 0 -- " + work);
    REQUIRE(r.status == 0);
    const auto doc = nlohmann::json::parse(r.out);
    REQUIRE(doc["events"].size() == 5);
    CHECK(doc["events"][0]["counter"] == "fixed3");
    CHECK(doc["events"][0]["value"] == 255);
    const std::vector<std::pair<int, const char*>> fields = {
        {128, "metrics0"}, {25, "metrics1"}, {51, "metrics2"}, {51, "metrics3"}};
    for (std::size_t i = 0; i < fields.size(); ++i) {
        INFO(i);
        CHECK(doc["events"][i + 1]["value"] == fields[i].first);
        CHECK(doc["events"][i + 1]["counter"] == fields[i].second);
    }
    CHECK(doc["topdown"]["all"]["backend_bound"].get<double>() == Approx(20.0));
}

TEST_CASE("stat --topdown gives level 2 from PERF_METRICS on a Sapphire Rapids, exactly",
          "[stat-tool][topdown]")
{
    LoadedModule module("model_rate_percent=0 model_perf_caps=0x8000 " +
                        dump_params("GenuineIntel00806F8_SapphireRapids_05.txt"));
    // Level 1 as on the Ice Lake; of those slots heavy operations 51, branch mispredicts
    // 20, fetch latency 30 and memory bound 25 (perf's metric encodings 8400H-8700H).
    const std::string work = std::string(ARCHPMU_ITEST) +
                             " --inject 0 0x01a4 255 0x02c2 128 0x0073 25 0x019c 51 0x02a4 51 "
                             "0x8400 51 0x8500 20 0x8600 30 0x8700 25";
    // perf's default, the highest level there is: level 2, its pairs derived as perf does.
    auto r = run_tool("stat --topdown -x, -C 0 -- " + work);
    REQUIRE(r.status == 0);
    CHECK(r.out ==
          "Retiring,Bad Speculation,Frontend Bound,Backend Bound,Heavy Operations,"
          "Light Operations,Branch Mispredict,Machine Clears,Fetch Latency,Fetch Bandwidth,"
          "Memory Bound,Core Bound,\n"
          "50.2,9.8,20.0,20.0,20.0,30.2,7.8,2.0,11.8,8.2,9.8,10.2,\n");
    check_level1_csv("--td-level 1", work);
    r = run_tool("stat --topdown --json -C 0 -- " + work);
    REQUIRE(r.status == 0);
    const auto doc = nlohmann::json::parse(r.out);
    CHECK(doc["topdown"]["level"] == 2);
    CHECK(doc["topdown"]["all"]["core_bound"].get<double>() == Approx(100.0 * 26 / 255));
    CHECK(doc["events"].size() == 9);
}

TEST_CASE(
    "stat --topdown takes PERF_METRICS on an Arrow Lake's P-cores and the events on its "
    "E-cores",
    "[stat-tool][topdown]")
{
    // As the real part: PERF_METRICS on the P-cores only (IA32_PERF_CAPABILITIES[15]).
    LoadedModule module("model_rate_percent=0 model_perf_caps=0x8000 model_hybrid_perf_caps=0 " +
                        dump_params("GenuineIntel00C0662_ArrowLake_07.txt"));
    REQUIRE(archpmu::Device().cpu_info(0).perf_metrics());
    REQUIRE_FALSE(archpmu::Device().cpu_info(1).perf_metrics());
    // The P-core (CPU 0) as the Sapphire Rapids test's, levels 1 and 2; the E-core (CPU 1)
    // as the Arrow Lake test's, level 1 from its events.
    const std::string work = std::string(ARCHPMU_ITEST) +
                             " --inject 0 0x01a4 255 0x02c2 128 0x0073 25 0x019c 51 0x02a4 51 "
                             "0x8400 51 0x8500 20 0x8600 30 0x8700 25; " +
                             injector(1, "0x02c2", 60) + "; " + injector(1, "0x0073", 20) + "; " +
                             injector(1, "0x019c", 10) + "; " + injector(1, "0x02a4", 10);
    auto r = run_tool("stat --topdown -x, -C 0,1 -- sh -c '" + work + "'");
    REQUIRE(r.status == 0);
    const std::string none = "<not supported>,";
    CHECK(r.out ==
          "pmu,Retiring,Bad Speculation,Frontend Bound,Backend Bound,Heavy Operations,"
          "Light Operations,Branch Mispredict,Machine Clears,Fetch Latency,Fetch Bandwidth,"
          "Memory Bound,Core Bound,\n"
          "cpu_core,50.2,9.8,20.0,20.0,20.0,30.2,7.8,2.0,11.8,8.2,9.8,10.2,\n"
          "cpu_atom,60.0,20.0,10.0,10.0," +
              none + none + none + none + none + none + none + none + "\n");
    r = run_tool("stat --topdown --td-level 1 -x, -C 0,1 -- sh -c '" + work + "'");
    REQUIRE(r.status == 0);
    CHECK(r.out ==
          "pmu,Retiring,Bad Speculation,Frontend Bound,Backend Bound,\n"
          "cpu_core,50.2,9.8,20.0,20.0,\n"
          "cpu_atom,60.0,20.0,10.0,10.0,\n");
}

TEST_CASE("stat --topdown takes level 1 from the architectural events on an E-core-only part",
          "[stat-tool][topdown]")
{
    // As Alder Lake-N or Sierra Forest: v5, every architectural event (the four top-down
    // categories among them), no slots counter and no PERF_METRICS.
    LoadedModule module(
        "backend=model model_version=5 model_gp=6 model_fixed=3 model_events_len=13 "
        "model_rate_percent=0");
    // Retiring 60, bad speculation 20, frontend 15, backend 5 of 100 slots.
    const std::string work =
        std::string(ARCHPMU_ITEST) + " --inject 0 0x02c2 60 0x0073 20 0x019c 15 0x02a4 5";
    auto r = run_tool("stat --topdown -x, -C 0 -- " + work);
    REQUIRE(r.status == 0);
    CHECK(r.out ==
          "Retiring,Bad Speculation,Frontend Bound,Backend Bound,\n"
          "60.0,20.0,15.0,5.0,\n");
    // Level 2 needs PERF_METRICS.
    r = run_tool("stat --topdown --td-level 2 -C 0 --duration 0.1");
    CHECK(r.status == 1);
    CHECK_THAT(r.out, Catch::Contains("the max level here is 1"));
}

TEST_CASE("stat --topdown is refused, saying why, where no CPU has the events",
          "[stat-tool][topdown]")
{
    LoadedModule module("model_rate_percent=0 " + dump_params("GenuineIntel00506E3_Skylake.txt"));
    auto r = run_tool("stat --topdown -a --duration 0.1");
    CHECK(r.status == 1);
    CHECK_THAT(r.out, Catch::Contains("no CPU here has what level 1 needs"));
    CHECK_THAT(r.out, Catch::Contains("PERF_METRICS"));
    CHECK(run_tool("stat --device /dev/archpmu -e instructions -- true").status == 0);
}

TEST_CASE(
    "stat -d on an Arrow Lake counts each core type's events, as perf's cpu_core/ and "
    "cpu_atom/ rows, exactly",
    "[stat-tool][detailed][core-type]")
{
    LoadedModule module("model_rate_percent=0 " +
                        dump_params("GenuineIntel00C0662_ArrowLake_07.txt"));
    // The command's own loads on each core type (CPU 0 a P-core, CPU 1 an E-core), as
    // the kernel's tables encode them there: 81D0H loads on both, E124H L1 misses and
    // E12H dTLB misses on the P-core, E08H dTLB misses on the E-core.
    const std::string work = "sh -c '" + here(0, "0x81d0", 400) + "; " + here(0, "0xe124", 40) +
                             "; " + here(0, "0x0e12", 8) + "; " + here(1, "0x81d0", 200) + "; " +
                             here(1, "0x0e08", 20) + "'";
    // No -C: the command, wherever it runs.
    const auto r = run_tool("stat -dd -x, -e instructions -- " + work);
    REQUIRE(r.status == 0);
    check_arrow_lake_l1_lines(r.out);
    check_line(r.out,
               "8,,cpu_core/dTLB-load-misses/,[0-9]+,100\\.00,2\\.00,of all dTLB cache accesses,"
               "gp[0-9]");
    check_line(r.out,
               "20,,cpu_atom/dTLB-load-misses/,[0-9]+,100\\.00,10\\.00,of all dTLB cache accesses,"
               "gp[0-7]");
    CHECK_THAT(r.out, Catch::Contains("not supported: cpu_core/LLC-loads/, cpu_atom/LLC-loads/, "
                                      "cpu_core/LLC-load-misses/, cpu_atom/LLC-load-misses/: it "
                                      "needs OFFCORE_RSP"));
    // One core type system-wide: perf's plain names.
    const auto p = run_tool("stat -d -x, -e instructions -C 0 -- " + work);
    REQUIRE(p.status == 0);
    CHECK_THAT(p.out, Catch::Contains("\n40,,L1-dcache-load-misses,"));
    CHECK_THAT(p.out, !Catch::Contains("cpu_core/"));
}

TEST_CASE("stat -d and -e count perf's cache events as a Skylake encodes them, exactly",
          "[stat-tool][detailed][cache-events]")
{
    LoadedModule module("model_rate_percent=0 " + dump_params("GenuineIntel00506E3_Skylake.txt"));
    // MEM_INST_RETIRED.ALL_LOADS 400 and L1D.REPLACEMENT 40 on CPU 0, as the kernel's
    // table encodes L1-dcache-loads and -load-misses there; LLC-* need OFFCORE_RSP.
    const std::string work = skylake_l1_work();
    auto r = run_tool("stat -d -x, -e instructions -C 0 -- " + work);
    REQUIRE(r.status == 0);
    CHECK_THAT(r.out, Catch::Contains("archpmu stat: not supported: LLC-loads, LLC-load-misses: "
                                      "it needs OFFCORE_RSP"));
    CHECK_THAT(r.out, Catch::Matches("(.|\n)*\n0,,instructions,[0-9]+,100\\.00,,,fixed0\n"
                                     "400,,L1-dcache-loads,[0-9]+,100\\.00,,,gp[0-3]\n"
                                     "40,,L1-dcache-load-misses,[0-9]+,100\\.00,10\\.00,"
                                     "of all L1-dcache accesses,gp[0-3]\n"
                                     "<not supported>,,LLC-loads,0,100\\.00,,,-\n"
                                     "<not supported>,,LLC-load-misses,0,100\\.00,,,-\n"));
    // The same names in -e: any case, the ratio, <not supported> where they cannot count.
    r = run_tool("stat -x, -C 0 -e l1-dcache-loads,L1-dcache-load-misses,LLC-loads -- " + work);
    REQUIRE(r.status == 0);
    check_line(r.out,
               "archpmu stat: not supported: LLC-loads: it needs OFFCORE_RSP \\(OMR on the newest "
               "parts\\), a model-specific MSR archpmu does not program");
    check_line(r.out, "400,,l1-dcache-loads,[0-9]+,100\\.00,,,gp[0-3]");
    check_line(
        r.out,
        "40,,L1-dcache-load-misses,[0-9]+,100\\.00,10\\.00,of all L1-dcache accesses,gp[0-3]");
    check_line(r.out, "<not supported>,,LLC-loads,0,100\\.00,,,-");
    // In a group it is refused, named, and nothing runs.
    r = run_tool("stat -e '{cycles,LLC-load-misses}' -C 0 -- true");
    CHECK(r.status != 0);
    CHECK_THAT(r.out, Catch::Contains("'LLC-load-misses' in a group: it needs OFFCORE_RSP"));
    // Nothing left to count: refused, saying so, not an empty session.
    r = run_tool("stat -e LLC-loads -C 0 -- true");
    CHECK(r.status != 0);
    CHECK_THAT(r.out, Catch::Contains("none of the events can count here"));
    // -dd and -ddd add the L1 instruction cache, the TLBs and the prefetches, in perf's
    // order, after the default events.
    r = run_tool("stat -ddd -C 0 -- true");
    REQUIRE(r.status == 0);
    std::vector<std::string> order;
    for (const char* name :
         {"branch-misses", "L1-dcache-loads", "L1-dcache-load-misses", "LLC-loads",
          "LLC-load-misses", "L1-icache-loads", "L1-icache-load-misses", "dTLB-loads",
          "dTLB-load-misses", "iTLB-loads", "iTLB-load-misses", "L1-dcache-prefetches",
          "L1-dcache-prefetch-misses"})
        order.push_back(std::string(" ") + name + " ");
    std::size_t at = 0;
    for (const auto& name : order) {
        const std::size_t found = r.out.find(name, at);
        INFO(name);
        CHECK(found != std::string::npos);
        at = found == std::string::npos ? at : found;
    }
    CHECK_THAT(r.out, Catch::Contains("<not supported>      L1-icache-loads"));
    CHECK_THAT(r.out, Catch::Contains("<not supported>      L1-dcache-prefetches"));
    // --topdown replaces the events: not with -d; -d at the top level is not the device.
    CHECK(run_tool("stat -d --topdown -- true").status == 129);
    r = run_tool("-d /dev/archpmu stat -e instructions -- true");
    CHECK(r.status == 129);
    CHECK_THAT(r.out, Catch::Contains("--device"));
}

TEST_CASE(
    "stat -e L1-dcache-loads on an Arrow Lake counts each core type, as perf's cpu_core/ "
    "and cpu_atom/ rows",
    "[stat-tool][detailed][cache-events][core-type]")
{
    LoadedModule module("model_rate_percent=0 " +
                        dump_params("GenuineIntel00C0662_ArrowLake_07.txt"));
    const std::string work = "sh -c '" + here(0, "0x81d0", 400) + "; " + here(0, "0xe124", 40) +
                             "; " + here(1, "0x81d0", 200) + "'";
    const auto r = run_tool("stat -x, -e L1-dcache-loads,L1-dcache-load-misses -- " + work);
    REQUIRE(r.status == 0);
    check_arrow_lake_l1_lines(r.out);
    // One core type named: that one alone.
    const auto p = run_tool("stat -x, -e cpu_atom/L1-dcache-loads/ -- " + work);
    REQUIRE(p.status == 0);
    CHECK_THAT(p.out, Catch::StartsWith("200,,cpu_atom/L1-dcache-loads/,"));
    CHECK_THAT(p.out, !Catch::Contains("cpu_core/"));
    // Its reason names it once; a core type none of the CPUs counted has is refused.
    const auto llc = run_tool("stat -x, -e cpu_atom/LLC-loads/,instructions -- true");
    CHECK(llc.status == 0);
    CHECK_THAT(llc.out,
               Catch::Contains("not supported: cpu_atom/LLC-loads/: it needs OFFCORE_RSP"));
    const auto none = run_tool("stat -C 0 -e cpu_atom/L1-dcache-loads/ -- true");
    CHECK(none.status != 0);
    CHECK_THAT(none.out, Catch::Contains("counts on cpu_atom CPUs only, and the session has none"));
}
