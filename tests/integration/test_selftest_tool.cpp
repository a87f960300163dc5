// SPDX-License-Identifier: MIT
// `archpmu selftest` on the model: it passes on every impersonated real CPU,
// skips what a PMU lacks, names what refuses sessions, and fails (exit 1, the
// refusal in its line) when a session it needs is refused.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "../common/dump_expectations.hpp"
#include "archpmu/device.hpp"
#include "harness.hpp"

using namespace archpmu::itest;

namespace {

CommandResult selftest(const std::string& args = "")
{
    return run_command(std::string(ARCHPMU_TOOL) + " selftest " + args);
}

// The check's line: "NAME  OUTCOME  summary".
bool has_line(const std::string& out, const std::string& name, const std::string& outcome)
{
    std::string padded = name;
    padded.resize(std::max<std::size_t>(padded.size(), 13), ' ');
    return out.find("\n" + padded + " " + outcome + "  ") != std::string::npos;
}

}  // namespace

TEST_CASE("selftest passes on the model impersonating real CPUs of each kind", "[selftest-tool]")
{
    // v1, v2 with three undeclared fixed counters, a VM without a PMU, v4, v5 with
    // a fixed-counter bitmap, hybrid v6: the other dumps add time, not kinds.
    const std::set<std::string> kinds = {
        "GenuineIntel00006E8_PM_Yonah.txt",          "GenuineIntel00006F6_Conroe.txt",
        "GenuineIntel00206E6_Beckton2.txt",          "GenuineIntel00506E3_Skylake.txt",
        "GenuineIntel00806F8_SapphireRapids_05.txt", "GenuineIntel00C0662_ArrowLake_07.txt"};
    for (const auto& dc : archpmu::test::dump_cases()) {
        if (!kinds.count(dc.file))
            continue;
        INFO(dc.file);
        LoadedModule module(dump_params(dc.file));
        const auto r = selftest();
        INFO(r.out);
        const uint32_t version = dc.types.at(0).version;
        if (version == 0) {
            // A VM without a virtual PMU: said, with the fix, and a failure.
            CHECK(r.status == 1);
            CHECK(has_line(r.out, "enumeration", "FAIL"));
            CHECK_THAT(r.out, Catch::Contains("have no architectural PMU (CPUID.0AH:EAX[7:0] = 0): "
                                              "a virtual machine"));
            CHECK(has_line(r.out, "counting", "SKIP"));
            continue;
        }
        CHECK(r.status == 0);
        CHECK_THAT(r.out, Catch::Contains(" 0 failed"));
        CHECK_THAT(r.out, Catch::Contains("'s registers afterwards:"));
        // From version 3 every dump has fixed counter 0 and at least 4 GP counters.
        const bool all = version >= 3;
        for (const char* check : {"enumeration", "usr-os", "sampling", "registers"})
            CHECK(has_line(r.out, check, "PASS"));
        // Before, what the PMU lacks is skipped (Yonah's v1: no fixed counters, no task sessions).
        for (const char* check : {"fixed-vs-gp", "cmask-inv", "task"})
            CHECK(has_line(r.out, check, "PASS") != (!all && has_line(r.out, check, "SKIP")));
        if (all)
            CHECK_THAT(r.out, Catch::Contains("(exact)"));
    }
}

TEST_CASE("selftest skips what a v1 PMU lacks and runs on the CPU asked for", "[selftest-tool]")
{
    LoadedModule module("backend=model model_version=1 model_gp=2 model_fixed=0");
    const unsigned cpu = online_cpus().back();
    const auto r = selftest("-C " + std::to_string(cpu));
    INFO(r.out);
    CHECK(r.status == 0);
    CHECK_THAT(r.out, Catch::Contains("checks on CPU " + std::to_string(cpu) + ";"));
    CHECK(has_line(r.out, "fixed-vs-gp", "SKIP"));
    CHECK(has_line(r.out, "cmask-inv", "SKIP"));
    CHECK(has_line(r.out, "sampling", "PASS"));
    CHECK(has_line(r.out, "task", "SKIP"));  // no GLOBAL_CTRL, no task sessions

    const auto bad = selftest("-C 4096");
    CHECK(bad.status == 1);
    CHECK_THAT(bad.out, Catch::Contains("selftest -C 4096: that CPU is not online"));
    const auto two = selftest("-C 0,1 2>&1");
    CHECK(two.status == 129);
    CHECK_THAT(two.out, Catch::Contains("-C/--cpu"));
}

TEST_CASE("selftest names what refuses sessions, and fails a check whose session is refused",
          "[selftest-tool]")
{
    LoadedModule module("backend=model model_version=4 model_gp=4");
    REQUIRE(load_hog(2) == 0);
    auto r = selftest();
    INFO(r.out);
    CHECK(r.status == 0);
    CHECK(has_line(r.out, "conditions", "NOTE"));
    CHECK_THAT(r.out, Catch::Contains("perf holds counters on CPUs"));
    CHECK_THAT(r.out, Catch::Contains("fix: stop them"));

    // Another agent counts on GP counter 3 of every CPU: three GP counters no longer fit.
    archpmu::Device dev;
    const uint64_t agent = 0x4300c4;  // EN | OS | USR, branches
    for (unsigned cpu : online_cpus())
        model_write_msr(dev, cpu, 0x189, agent);
    r = selftest();
    INFO(r.out);
    CHECK(r.status == 1);
    CHECK_THAT(r.out, Catch::Contains("another agent counts on CPUs"));
    CHECK_THAT(r.out, Catch::Contains("IA32_PERFEVTSEL3 = 0x4300c4"));
    CHECK(has_line(r.out, "cmask-inv", "FAIL"));
    CHECK(has_line(r.out, "fixed-vs-gp", "PASS"));
    CHECK(has_line(r.out, "registers", "PASS"));
    CHECK_THAT(r.out, Catch::Contains(" 1 failed"));
    for (unsigned cpu : online_cpus())
        model_write_msr(dev, cpu, 0x189, 0);
    CHECK(unload_hog() == 0);
}

TEST_CASE("selftest keeps to the CPUs its affinity allows", "[selftest-tool]")
{
    LoadedModule module("backend=model model_version=4");
    const unsigned last = online_cpus().back();
    REQUIRE(last > 0);
    const std::string taskset = "taskset -c " + std::to_string(last) + " ";
    auto r = run_command(taskset + ARCHPMU_TOOL + " selftest");
    INFO(r.out);
    CHECK(r.status == 0);
    CHECK_THAT(r.out, Catch::Contains("checks on CPU " + std::to_string(last) + ";"));
    CHECK(has_line(r.out, "task", "SKIP"));  // one CPU allowed: nowhere to move
    CHECK_THAT(r.out, Catch::Contains("(this thread)"));
    r = run_command(taskset + ARCHPMU_TOOL + " selftest -C 0");
    CHECK(r.status == 1);
    CHECK_THAT(r.out, Catch::Contains("CPU 0 is outside this process's CPU affinity"));
}

TEST_CASE("selftest's exact sums hold at any model counting speed", "[selftest-tool]")
{
    // CMASK counts cycles: at 37% speed, 37% of them, as the cycles event.
    LoadedModule module("backend=model model_version=4 model_rate_percent=37");
    const auto r = selftest();
    INFO(r.out);
    CHECK(r.status == 0);
    CHECK(has_line(r.out, "cmask-inv", "PASS"));
    CHECK(has_line(r.out, "fixed-vs-gp", "PASS"));
}
