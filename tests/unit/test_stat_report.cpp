// SPDX-License-Identifier: MIT
// `archpmu stat` output: JSON, CSV, human, number formatting.
#include <catch2/catch.hpp>

#include <cerrno>
#include <nlohmann/json.hpp>

#include "archpmu.h"
#include "archpmu/error.hpp"
#include "archpmu/stat_report.hpp"

namespace {

archpmu::StatTotals sample()
{
    archpmu::StatTotals t;
    t.events = archpmu::parse_event_list("cycles,instructions,branches:u");
    t.counters = {ARCHPMU_COUNTER_FIXED | 1, ARCHPMU_COUNTER_FIXED | 0, 3};
    t.cpus = {0, 2};
    t.elapsed_ns = 1500000000;
    t.per_cpu = {{1000, 3000}, {2000, 1000}, {7, 0}};
    t.offline = {false, true};
    return t;
}

}  // namespace

TEST_CASE("stat --json has the documented shape", "[stat]")
{
    const auto doc = nlohmann::json::parse(archpmu::stat_json(sample()));
    CHECK(doc["elapsed_ns"] == 1500000000);
    CHECK(doc["cpus"] == nlohmann::json({0, 2}));
    REQUIRE(doc["events"].size() == 3);
    const auto& ins = doc["events"][1];
    CHECK(ins["name"] == "instructions");
    CHECK(ins["config"] == "0xc0");
    CHECK(ins["counter"] == "fixed0");
    CHECK(ins["value"] == 3000);
    CHECK(ins["per_cpu"] == nlohmann::json({{"0", 2000}, {"2", 1000}}));
    CHECK(doc["events"][2]["config"] == "0x100c4");
    CHECK(doc["events"][2]["counter"] == "gp3");
}

TEST_CASE("stat -x prints one line per event, or per CPU with -A", "[stat]")
{
    archpmu::StatFormat f;
    f.separator = ";";
    CHECK(archpmu::stat_csv(sample(), f) ==
          "4000;cycles;fixed1\n3000;instructions;fixed0\n7;branches:u;gp3\n");
    f.per_cpu = true;
    f.interval_s = 1.0;
    const auto csv = archpmu::stat_csv(sample(), f);
    CHECK_THAT(csv, Catch::StartsWith("1.000000000;CPU0;1000;cycles;fixed1\n"));
    CHECK_THAT(csv, Catch::Contains("1.000000000;CPU2;0;branches:u;gp3\n"));
}

TEST_CASE("stat's human output is perf-like", "[stat]")
{
    archpmu::StatFormat f;
    f.target = "'sleep 1'";
    const auto out = archpmu::stat_human(sample(), f);
    CHECK_THAT(out, Catch::Contains("Performance counter stats for 'sleep 1' (CPUs 0,2):"));
    f.task = true;  // a task's count has no CPUs, as perf's
    CHECK_THAT(archpmu::stat_human(sample(), f),
               Catch::Contains("Performance counter stats for 'sleep 1':\n"));
    f.task = false;
    CHECK_THAT(out, Catch::Contains("4,000      cycles"));
    CHECK_THAT(out, Catch::Contains("#   0.75 insn per cycle"));
    CHECK_THAT(out, Catch::Contains("1.500000000 seconds time elapsed"));
    f.per_cpu = true;
    CHECK_THAT(archpmu::stat_human(sample(), f), Catch::Contains("CPU2(offline)"));
}

TEST_CASE("thousands separators", "[stat]")
{
    CHECK(archpmu::thousands(0) == "0");
    CHECK(archpmu::thousands(999) == "999");
    CHECK(archpmu::thousands(1000) == "1,000");
    CHECK(archpmu::thousands(1234567) == "1,234,567");
    CHECK(archpmu::thousands(18446744073709551615ULL) == "18,446,744,073,709,551,615");
}

TEST_CASE("CPU lists parse into ascending CPU numbers", "[stat]")
{
    CHECK(archpmu::parse_cpu_list("0-3,6") == std::vector<uint32_t>{0, 1, 2, 3, 6});
    CHECK(archpmu::parse_cpu_list("5,1") == std::vector<uint32_t>{1, 5});
    CHECK_THROWS_WITH(archpmu::parse_cpu_list("1,1"), Catch::Contains("listed twice"));
    CHECK_THROWS_WITH(archpmu::parse_cpu_list("3-1"), Catch::Contains("runs backwards"));
    CHECK_THROWS_WITH(archpmu::parse_cpu_list("a"), Catch::Contains("not a CPU number"));
    CHECK_THROWS_WITH(archpmu::parse_cpu_list(""), Catch::Contains("it is empty"));
}

TEST_CASE("CPU lists refuse empty items, signs and CPUs past 8191", "[stat]")
{
    const auto error_of = [](const std::string& text) -> std::string {
        try {
            archpmu::parse_cpu_list(text);
        } catch (const archpmu::Error& e) {
            CHECK(e.code().value() == EINVAL);
            return e.what();
        }
        return {};
    };
    const std::string allowed = "; give CPUs 0-8191 as N or N-M, comma-separated";
    CHECK_THAT(error_of("1,,2"), Catch::Contains("bad CPU list '1,,2': an empty item" + allowed));
    CHECK_THAT(error_of("1,"), Catch::Contains("an empty item"));
    CHECK_THAT(error_of(",1"), Catch::Contains("an empty item"));
    CHECK_THAT(error_of("-1"),
               Catch::Contains("bad CPU list '-1': '-1' is not a CPU number or range" + allowed));
    CHECK_THAT(error_of("1-"), Catch::Contains("'1-' is not a CPU number or range"));
    CHECK_THAT(error_of("1-2-3"), Catch::Contains("'1-2-3' is not a CPU number or range"));
    CHECK_THAT(error_of("99999999999"),
               Catch::Contains("bad CPU list '99999999999': CPU 99999999999 is out of range"));
    CHECK_THAT(error_of("99999999999999999999999"), Catch::Contains("is out of range"));
    CHECK_THAT(error_of("0-8192"), Catch::Contains("CPU 8192 is out of range"));
    CHECK_THAT(error_of("0-3,2"), Catch::Contains("CPU 2 is listed twice"));
    CHECK_THAT(error_of("3-1"), Catch::Contains("range 3-1 runs backwards" + allowed));
    CHECK(archpmu::parse_cpu_list("8191").size() == 1);
}
