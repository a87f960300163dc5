// SPDX-License-Identifier: MIT
// `archpmu info` output: the JSON document and the grouped table.
#include <catch2/catch.hpp>

#include <sstream>

#include <nlohmann/json.hpp>

#include "archpmu.h"
#include "archpmu/pmu.hpp"
#include "report.hpp"

namespace {

archpmu::CpuInfo pcore(uint32_t cpu)
{
    archpmu::CpuInfo c;
    c.cpu = cpu;
    c.version = 5;
    c.pmu_flags =
        ARCHPMU_PMU_HYBRID | ARCHPMU_PMU_FULL_WIDTH_WRITE | ARCHPMU_PMU_ANYTHREAD_DEPRECATED;
    c.core_type = archpmu::CoreType::core;
    c.gp_counters = 8;
    c.gp_width = 48;
    c.gp_mask = 0xff;
    c.fixed_mask = 0xd;
    c.fixed_width = 48;
    c.events_len = 8;
    c.events_mask = 0xff;
    return c;
}

archpmu::CpuInfo ecore(uint32_t cpu)
{
    auto c = pcore(cpu);
    c.core_type = archpmu::CoreType::atom;
    c.pmu_flags &= ~ARCHPMU_PMU_FULL_WIDTH_WRITE;
    c.gp_counters = 4;
    c.gp_mask = 0xf;
    c.events_mask = 0x1d00 | 0x7f;
    return c;
}

archpmu::Info model_info()
{
    archpmu::Info i;
    i.abi_version = 1;
    i.backend = archpmu::Backend::model;
    return i;
}

}  // namespace

TEST_CASE("info --json has the documented shape and values", "[report]")
{
    const auto doc = nlohmann::json::parse(archpmu::info_json(model_info(), {pcore(0), ecore(1)}));
    CHECK(doc["abi_version"] == 1);
    CHECK(doc["backend"] == "model");
    REQUIRE(doc["cpus"].size() == 2);
    const auto& p = doc["cpus"][0];
    CHECK(p["cpu"] == 0);
    CHECK(p["version"] == 5);
    CHECK(p["gp_counters"] == 8);
    CHECK(p["gp_width"] == 48);
    CHECK(p["fixed_counters"] == nlohmann::json({0, 2, 3}));
    CHECK(p["fixed_width"] == 48);
    CHECK(p["events"] == nlohmann::json({"cycles", "instructions", "ref-cycles", "cache-references",
                                         "cache-misses", "branches", "branch-misses", "slots"}));
    CHECK(p["anythread_deprecated"] == true);
    CHECK(p["core_type"] == "core");
    CHECK(p["full_width_write"] == true);
    const auto& e = doc["cpus"][1];
    CHECK(e["core_type"] == "atom");
    CHECK(e["full_width_write"] == false);
    CHECK(e["events"].back() == "lbr-inserts");
    CHECK(e["events"][7] == "topdown-be-bound");
}

TEST_CASE("info --json reports core_type null on non-hybrid parts", "[report]")
{
    auto c = pcore(0);
    c.pmu_flags &= ~ARCHPMU_PMU_HYBRID;
    c.core_type = archpmu::CoreType::none;
    const auto doc = nlohmann::json::parse(archpmu::info_json(model_info(), {c}));
    CHECK(doc["cpus"][0]["core_type"].is_null());
}

TEST_CASE("the info table has one row per distinct PMU with its CPU list", "[report]")
{
    const auto table =
        archpmu::info_table(model_info(), {pcore(0), pcore(1), ecore(2), ecore(3), pcore(4)});
    CHECK_THAT(table, Catch::Contains("backend model"));
    CHECK_THAT(table, Catch::Contains("5 CPUs enumerated"));
    CHECK_THAT(table, Catch::Contains("0-1,4 "));
    CHECK_THAT(table, Catch::Contains("2-3 "));
    // The events go below the table, one list per layout, within 100 columns.
    CHECK_THAT(table, Catch::Contains("\nevents, CPUs 0-1,4: cycles instructions"));
    CHECK_THAT(table, Catch::Contains("\nevents, CPUs 2-3: "));
    std::istringstream lines(table);
    for (std::string line; std::getline(lines, line);) {
        INFO(line);
        CHECK(line.size() <= 100);
    }
    CHECK(table.find("EVENTS") == std::string::npos);
}

TEST_CASE("info names the processor from /proc/cpuinfo", "[report]")
{
    const auto model = archpmu::parse_cpuinfo(
        "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 94\n"
        "model name\t: Intel Core Processor (Skylake)\nstepping\t: 3\nflags\t\t: fpu\n\n"
        "processor\t: 1\nvendor_id\t: Other\nmodel\t\t: 1\n");
    CHECK(model.vendor == "GenuineIntel");
    CHECK(model.family == 6);
    CHECK(model.model == 94);
    CHECK(model.stepping == 3);
    CHECK(model.name == "Intel Core Processor (Skylake)");
    CHECK(archpmu::describe(model) ==
          "GenuineIntel family 6 model 94 (0x5e) stepping 3: Intel Core Processor (Skylake)");
    const auto table = archpmu::info_table(model_info(), {pcore(0)}, model);
    CHECK_THAT(table, Catch::Contains("\nprocessor: GenuineIntel family 6 model 94 (0x5e)"));
    const auto doc = nlohmann::json::parse(archpmu::info_json(model_info(), {pcore(0)}, 2, model));
    CHECK(doc["cpu_model"]["model"] == 94);
    CHECK(doc["cpu_model"]["name"] == "Intel Core Processor (Skylake)");
    CHECK_FALSE(
        nlohmann::json::parse(archpmu::info_json(model_info(), {pcore(0)})).contains("cpu_model"));
    CHECK_FALSE(archpmu::parse_cpuinfo("").known());
}

TEST_CASE("CPU lists collapse runs", "[report]")
{
    CHECK(archpmu::format_cpu_list({}) == "");
    CHECK(archpmu::format_cpu_list({3}) == "3");
    CHECK(archpmu::format_cpu_list({0, 1, 2, 5, 7, 8}) == "0-2,5,7-8");
}

TEST_CASE("event names follow the CPUID bit order", "[report]")
{
    CHECK(archpmu::arch_event_name(0) == "cycles");
    CHECK(archpmu::arch_event_name(9) == "topdown-bad-spec");
    CHECK(archpmu::arch_event_name(12) == "lbr-inserts");
    CHECK(archpmu::arch_event_name(13).empty());
}
