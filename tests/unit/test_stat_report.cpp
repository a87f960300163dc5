// SPDX-License-Identifier: MIT
// `archpmu stat` output: JSON, CSV, human, number formatting.
#include <catch2/catch.hpp>

#include <cerrno>
#include <nlohmann/json.hpp>
#include <sstream>

#include "archpmu.h"
#include "archpmu/error.hpp"
#include "stat_format.hpp"
#include "stat_report.hpp"

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

TEST_CASE("stat -x prints perf's fields, one line per event, or per CPU with -A", "[stat]")
{
    // value, unit, event, run-time, pct-running, metric-value, metric-unit; then the counter.
    archpmu::StatFormat f;
    f.separator = ";";
    auto t = sample();
    t.enabled_ns = {{100, 300}, {100, 300}, {400, 400}};
    t.running_ns = {{100, 300}, {100, 300}, {100, 199}};
    t.multiplexed = {false, false, true};
    CHECK(archpmu::stat_csv(t, f) ==
          "4000;;cycles;400;100.00;;;fixed1\n"
          "3000;;instructions;400;100.00;0.75;insn per cycle;fixed0\n"
          "7;;branches:u;299;37.00;;;mux\n");
    f.per_cpu = true;
    f.interval_ns = 1000000000;
    const auto csv = archpmu::stat_csv(t, f);
    CHECK_THAT(csv, Catch::StartsWith("     1.000000000;CPU0;1000;;cycles;100;100.00;;;fixed1\n"));
    CHECK_THAT(csv, Catch::Contains("     1.000000000;CPU0;2000;;instructions;100;100.00;2.00;insn "
                                    "per cycle;fixed0\n"));
    CHECK_THAT(csv, Catch::Contains("     1.000000000;CPU2;0;;branches:u;199;49.00;;;mux\n"));
    // Never on the PMU, or not on this core type: perf's words instead of a number.
    t.running_ns[2] = {0, 0};
    t.absent = {{false, false}, {false, false}, {false, true}};
    const auto words = archpmu::stat_csv(t, f);
    CHECK_THAT(words, Catch::Contains(";CPU0;<not counted>;;branches:u;0;0.00;;;mux\n"));
    CHECK_THAT(words, Catch::Contains(";CPU2;<not supported>;;branches:u;0;0.00;;;mux\n"));
}

TEST_CASE("stat -j prints perf's JSON lines, keys in perf's order, then the counter", "[stat]")
{
    archpmu::StatFormat f;
    auto t = sample();
    t.enabled_ns = {{100, 300}, {100, 300}, {400, 400}};
    t.running_ns = {{100, 300}, {100, 300}, {0, 0}};
    const auto lines = archpmu::stat_json_lines(t, f);
    CHECK(lines ==
          "{\"counter-value\" : \"4000.000000\", \"unit\" : \"\", \"event\" : \"cycles\", "
          "\"event-runtime\" : 400, \"pcnt-running\" : 100.00, \"metric-value\" : 0.000000, "
          "\"metric-unit\" : \"(null)\", \"counter\" : \"fixed1\"}\n"
          "{\"counter-value\" : \"3000.000000\", \"unit\" : \"\", \"event\" : \"instructions\", "
          "\"event-runtime\" : 400, \"pcnt-running\" : 100.00, \"metric-value\" : 0.750000, "
          "\"metric-unit\" : \"insn per cycle\", \"counter\" : \"fixed0\"}\n"
          "{\"counter-value\" : \"<not counted>\", \"unit\" : \"\", \"event\" : \"branches:u\", "
          "\"event-runtime\" : 0, \"pcnt-running\" : 0.00, \"metric-value\" : 0.000000, "
          "\"metric-unit\" : \"\", \"counter\" : \"gp3\"}\n");
    // Each line is a JSON object; under -I and -A it starts with the interval and the CPU.
    f.interval_ns = 2500000000;
    f.per_cpu = true;
    std::istringstream in(archpmu::stat_json_lines(t, f));
    int n = 0;
    for (std::string line; std::getline(in, line); ++n) {
        const auto j = nlohmann::json::parse(line);
        CHECK(j["interval"].get<double>() == Approx(2.5));
        CHECK(j.contains("cpu"));
        CHECK(line.rfind("{\"interval\" : 2.500000000, \"cpu\" : \"", 0) == 0);
    }
    CHECK(n == 6);
}

TEST_CASE("stat -I: perf's time stamp, and its header in the human table", "[stat]")
{
    archpmu::StatFormat f;
    f.interval_ns = 12345678901;
    f.interval_header = true;
    const auto human = archpmu::stat_human(sample(), f);
    CHECK_THAT(human, Catch::StartsWith("#           time             counts unit events\n"
                                        "    12.345678901                4,000      cycles"));
    CHECK(human.find("Performance counter stats") == std::string::npos);
    f.interval_header = false;
    CHECK_THAT(archpmu::stat_human(sample(), f), Catch::StartsWith("    12.345678901 "));
    const auto doc = nlohmann::json::parse(archpmu::stat_json(sample(), f));
    CHECK(doc["interval"].get<double>() == Approx(12.345678901));
    CHECK(archpmu::stat_json(sample(), f).find('\n') == archpmu::stat_json(sample(), f).size() - 1);
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

TEST_CASE("a command counted alone has perf's user and sys lines under the elapsed time", "[stat]")
{
    archpmu::StatFormat f;
    archpmu::StatTotals t = sample();
    CHECK_THAT(archpmu::stat_human(t, f), !Catch::Contains("seconds user"));
    t.command_times = archpmu::StatTotals::CpuTimes{250000000, 1000};
    const auto out = archpmu::stat_human(t, f);
    CHECK_THAT(out, Catch::EndsWith("         1.500000000 seconds time elapsed\n\n"
                                    "         0.250000000 seconds user\n"
                                    "         0.000001000 seconds sys\n\n\n"));
    // Only the human table has them, as perf's footer.
    f.style = archpmu::StatFormat::Style::csv;
    f.separator = ",";
    CHECK_THAT(archpmu::stat_report(t, f), !Catch::Contains("user"));
}

TEST_CASE("stat -r prints each count's mean and perf's spread of it", "[stat]")
{
    // Totals 4000, 4400, 3600 cycles: mean 4000, standard deviation 400, of
    // the mean 400 / sqrt(3) = 230.94, 5.77% of it.
    auto a = sample();
    auto b = sample();
    auto c = sample();
    b.per_cpu[0] = {1200, 3200};
    c.per_cpu[0] = {800, 2800};
    b.elapsed_ns = 1600000000;
    c.elapsed_ns = 1400000000;
    const auto m = archpmu::stat_mean({a, b, c});
    CHECK(m.runs == 3);
    CHECK(m.total(0) == 4000);
    CHECK(m.per_cpu[0] == std::vector<std::uint64_t>{1000, 3000});
    CHECK(m.noise_pct[0] == Approx(5.7735).epsilon(1e-4));
    CHECK(m.noise_pct[1] == 0);  // the same in every run
    CHECK(m.elapsed_ns == 1500000000);
    CHECK(m.elapsed_noise_ns == Approx(57735027).epsilon(1e-6));

    archpmu::StatFormat f;
    f.task = true;
    f.target = "'sleep 1'";
    const auto out = archpmu::stat_human(m, f);
    CHECK_THAT(out, Catch::Contains("Performance counter stats for 'sleep 1' (3 runs):\n"));
    CHECK_THAT(out, Catch::Contains("4,000      cycles") && Catch::Contains("( +-  5.77% )"));
    CHECK_THAT(
        out, Catch::Contains("              1.5000 +- 0.0577 seconds time elapsed  ( +-  3.85% )"));
    f.separator = ",";
    CHECK_THAT(archpmu::stat_csv(m, f),
               Catch::StartsWith("4000,,cycles,5.77%,0,100.00,,,fixed1\n"));
    const auto doc = nlohmann::json::parse(archpmu::stat_json(m));
    CHECK(doc["runs"] == 3);
    CHECK(doc["elapsed_stddev_ns"] == 57735027);
    CHECK(doc["events"][0]["stddev_pct"].get<double>() == Approx(5.7735).epsilon(1e-4));
    // One run prints as before: no spread anywhere.
    CHECK(archpmu::stat_human(a, f).find("+-") == std::string::npos);
    CHECK_FALSE(nlohmann::json::parse(archpmu::stat_json(a)).contains("runs"));
}

TEST_CASE("stat -r gives each core type's line its own spread, and none where it is 0, as perf",
          "[stat]")
{
    // CPU 0 a P-core, CPU 2 an E-core. cycles: 1000, 1200, 800 on the P-core and
    // 3000 in every run on the E-core; branches:u counts on the P-core alone.
    auto a = sample();
    auto b = sample();
    auto c = sample();
    b.per_cpu[0] = {1200, 3000};
    c.per_cpu[0] = {800, 3000};
    const auto m = archpmu::stat_mean({a, b, c});
    // 200 / sqrt(3) of 1000 on the P-core; the event's whole spread is of 4000.
    CHECK(m.noise_pct_over(0, {0}) == Approx(11.547).epsilon(1e-4));
    CHECK(m.noise_pct_over(0, {1}) == 0);
    CHECK(m.noise_pct_over(0, {0, 1}) == Approx(m.noise_pct[0]));
    CHECK(m.noise_pct[0] == Approx(2.8868).epsilon(1e-4));

    archpmu::StatFormat f;
    f.task = true;
    f.target = "'true'";
    f.core_types = {{0, "core"}, {2, "atom"}};
    const auto out = archpmu::stat_human(m, f);
    INFO(out);
    const auto line = [&](const std::string& name) {
        const auto at = out.find(name);
        REQUIRE(at != std::string::npos);
        return out.substr(out.rfind('\n', at) + 1, out.find('\n', at) - out.rfind('\n', at) - 1);
    };
    CHECK_THAT(line("cpu_core/cycles/"), Catch::Contains("( +- 11.55% )"));
    CHECK_THAT(line("cpu_atom/cycles/"), !Catch::Contains("+-"));
    // The same in every run: perf prints no "( +-  0.00% )".
    CHECK_THAT(line("cpu_core/branches/u"), !Catch::Contains("+-"));
    CHECK_THAT(line("cpu_atom/branches/u"), !Catch::Contains("+-"));
    f.separator = ",";
    const auto csv = archpmu::stat_csv(m, f);
    CHECK_THAT(csv, Catch::Contains("1000,,cpu_core/cycles/,11.55%,") &&
                        Catch::Contains("3000,,cpu_atom/cycles/,0.00%,"));
    // Nor for an elapsed time the same in every run.
    CHECK_THAT(out, Catch::Contains("                1.50 +- 0.00 seconds time elapsed\n"));
    // -A: perf keeps no spread per CPU, and prints 0.00% in its CSV.
    f.per_cpu = true;
    CHECK_THAT(archpmu::stat_csv(m, f), Catch::StartsWith("CPU0,1000,,cycles,0.00%,"));
}

TEST_CASE("stat -r on CPUs that differ between runs keeps each CPU's core type and spread",
          "[stat]")
{
    // The third run also had CPU 1, an E-core lacking branches:u, which came online.
    auto a = sample();
    auto b = sample();
    auto c = sample();
    for (auto* r : {&a, &b})
        r->absent = {{false, false}, {false, false}, {false, true}};
    c.cpus = {0, 1, 2};
    c.offline = {false, false, false};
    c.per_cpu = {{1000, 600, 3000}, {2000, 0, 1000}, {7, 0, 0}};
    c.absent = {{false, false, false}, {false, false, false}, {false, true, true}};
    const auto m = archpmu::stat_mean({a, b, c});
    REQUIRE(m.cpus == std::vector<std::uint32_t>{0, 1, 2});
    CHECK(m.absent[2] == std::vector<bool>{false, true, true});
    CHECK(m.absent[0] == std::vector<bool>{false, false, false});
    // cycles on CPU 1: 0, 0, 600: a mean of 200, a deviation of sqrt(120000), of the mean 200.
    CHECK(m.noise_pct_over(0, {1}) == Approx(100.0));
    CHECK(m.noise_pct_over(0, {0}) == 0);
    archpmu::StatFormat f;
    f.task = true;
    f.target = "'true'";
    f.core_types = {{0, "core"}, {1, "atom"}, {2, "atom"}};
    const auto out = archpmu::stat_human(m, f);
    INFO(out);
    CHECK_THAT(out, Catch::Contains("<not supported>      cpu_atom/branches/u"));
}

TEST_CASE("stat -r's per-CPU means add up to the mean total, over every CPU any run had", "[stat]")
{
    // 100 a run, on CPU 0 once and on CPU 2 twice: 33.3 and 66.7, which add up to 100.
    auto a = sample();
    auto b = sample();
    auto c = sample();
    a.per_cpu[2] = {100, 0};
    b.per_cpu[2] = {0, 100};
    c.per_cpu[2] = {0, 100};
    // A CPU that came online between runs: the third run also had CPU 1.
    c.cpus = {0, 1, 2};
    c.offline = {false, false, false};
    c.per_cpu = {{1000, 0, 3000}, {2000, 0, 1000}, {0, 0, 100}};
    const auto m = archpmu::stat_mean({a, b, c});
    CHECK(m.cpus == std::vector<std::uint32_t>{0, 1, 2});
    CHECK(m.per_cpu[2] == std::vector<std::uint64_t>{33, 0, 67});
    CHECK(m.total(2) == 100);
    CHECK(m.total(0) == 4000);
    CHECK(m.noise_pct[2] == 0);
    CHECK(m.offline == std::vector<bool>{false, false, true});
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

TEST_CASE("multiplexed counts are scaled and show perf's percentage", "[stat]")
{
    archpmu::StatTotals t = sample();
    // branches:u was on the PMU a quarter of its time on CPU 0, never on CPU 2.
    t.enabled_ns = {{100, 100}, {100, 100}, {100, 100}};
    t.running_ns = {{100, 100}, {100, 100}, {25, 0}};
    t.multiplexed = {false, false, true};
    CHECK(t.running_pct(0) == Approx(100.0));
    CHECK(t.running_pct(2) == Approx(12.5));
    const std::string human = archpmu::stat_human(t, {});
    CHECK_THAT(human, Catch::Contains("branches:u              mux  (12.50%)"));
    CHECK_THAT(human, !Catch::Contains("instructions            fixed0  (1"));
    archpmu::StatFormat per_cpu;
    per_cpu.per_cpu = true;
    CHECK_THAT(archpmu::stat_human(t, per_cpu), Catch::Contains("<not counted>"));
    const auto doc = nlohmann::json::parse(archpmu::stat_json(t));
    CHECK(doc["events"][2]["running_pct"] == Approx(12.5));
    CHECK(doc["events"][2]["time_running_ns"] == 25);
    CHECK(doc["events"][0]["running_pct"] == Approx(100.0));
    CHECK(doc["events"][2]["counter"] == "mux");
    CHECK(doc["events"][0]["counter"] == "fixed1");
}

TEST_CASE("an event that counted less only because its CPU was offline is not scaled", "[stat]")
{
    archpmu::Snapshot snap;
    archpmu::CountValue v;
    v.cpu = 0;
    v.value = 1000;
    v.time_enabled_ns = 400;
    v.time_running_ns = 100;  // offline three quarters of the time, not multiplexed
    snap.values.push_back(v);
    const auto t =
        archpmu::stat_totals_of(archpmu::parse_event_list("cycles"), {1}, nullptr, snap, 1);
    CHECK(t.total(0) == 1000);
    CHECK(t.running_pct(0) == Approx(100.0));
    snap.values[0].multiplexed = true;
    const auto m =
        archpmu::stat_totals_of(archpmu::parse_event_list("cycles"), {1}, nullptr, snap, 1);
    CHECK(m.total(0) == 4000);
    CHECK(m.running_pct(0) == Approx(25.0));
}

TEST_CASE("CountValue::scaled extrapolates by time enabled over time running", "[stat]")
{
    archpmu::CountValue v;
    v.value = 1000;
    v.time_enabled_ns = 400;
    v.time_running_ns = 100;
    CHECK(v.scaled() == 4000);
    v.time_running_ns = 400;
    CHECK(v.scaled() == 1000);
    v.time_running_ns = 0;
    CHECK(v.scaled() == 0);
    v.value = UINT64_MAX / 2;
    v.time_running_ns = 1;
    CHECK(v.scaled() == UINT64_MAX);
}

TEST_CASE("on a hybrid part each event is shown per core type, as perf's cpu_core/cpu_atom",
          "[stat]")
{
    auto t = sample();  // CPUs 0 (a P-core) and 2 (an E-core)
    t.enabled_ns = {{100, 100}, {100, 100}, {100, 0}};
    t.running_ns = {{100, 100}, {100, 100}, {100, 0}};
    t.absent = {{false, false}, {false, false}, {false, true}};
    archpmu::StatFormat f;
    f.core_types = {{0, "core"}, {2, "atom"}};
    const auto human = archpmu::stat_human(t, f);
    CHECK_THAT(human, Catch::Contains("1,000      cpu_core/cycles/"));
    CHECK_THAT(human, Catch::Contains("3,000      cpu_atom/cycles/"));
    // IPC per core type: 2000 / 1000 and 1000 / 3000.
    CHECK_THAT(human, Catch::Contains("#   2.00 insn per cycle"));
    CHECK_THAT(human, Catch::Contains("#   0.33 insn per cycle"));
    CHECK_THAT(human, Catch::Contains("<not supported>      cpu_atom/branches/u"));
    f.separator = ",";
    const auto csv = archpmu::stat_csv(t, f);
    CHECK_THAT(csv, Catch::StartsWith("1000,,cpu_core/cycles/,100,100.00,,,fixed1\n"
                                      "3000,,cpu_atom/cycles/,100,100.00,,,fixed1\n"));
    CHECK_THAT(csv, Catch::Contains("<not supported>,,cpu_atom/branches/u,0,100.00,,,gp3\n"));
    CHECK_THAT(archpmu::stat_json_lines(t, f), Catch::Contains(R"("event" : "cpu_core/cycles/")"));
    const auto doc = nlohmann::json::parse(archpmu::stat_json(t, f));
    CHECK(doc["events"][0]["value"] == 4000);
    CHECK(doc["events"][0]["per_core_type"] == nlohmann::json({{"core", 1000}, {"atom", 3000}}));
    CHECK(doc["events"][2]["per_core_type"]["atom"].is_null());
    // -A: a line per CPU, not per core type; not hybrid: one line.
    f.per_cpu = true;
    CHECK(archpmu::stat_csv(t, f).find("cpu_core/") == std::string::npos);
    CHECK_FALSE(
        nlohmann::json::parse(archpmu::stat_json(t, {}))["events"][0].contains("per_core_type"));
}

TEST_CASE("a core type the command never ran on shows <not counted>, as perf", "[stat]")
{
    auto t = sample();  // CPU 0 (a P-core) never ran the command; CPU 2 (an E-core) did
    t.per_cpu = {{0, 3000}, {0, 1000}, {0, 7}};
    t.enabled_ns = {{0, 100}, {0, 100}, {0, 100}};
    t.running_ns = t.enabled_ns;
    archpmu::StatFormat f;
    f.core_types = {{0, "core"}, {2, "atom"}};
    const auto human = archpmu::stat_human(t, f);
    CHECK_THAT(human, Catch::Contains("<not counted>      cpu_core/cycles/"));
    CHECK_THAT(human, Catch::Contains("<not counted>      cpu_core/instructions/"));
    CHECK_THAT(human, Catch::Contains("3,000      cpu_atom/cycles/"));
    // IPC only where both counted: 1000 / 3000 on the E-core.
    CHECK_THAT(human, Catch::Contains("#   0.33 insn per cycle"));
    CHECK(human.find("0.00 insn per cycle") == std::string::npos);
    f.separator = ",";
    const auto csv = archpmu::stat_csv(t, f);
    CHECK_THAT(csv, Catch::StartsWith("<not counted>,,cpu_core/cycles/,0,100.00,,,fixed1\n"
                                      "3000,,cpu_atom/cycles/,100,100.00,,,fixed1\n"));
    CHECK_THAT(csv, Catch::Contains("<not counted>,,cpu_core/instructions/,0,100.00,,,fixed0\n"));
    CHECK_THAT(archpmu::stat_json_lines(t, f),
               Catch::Contains(R"("counter-value" : "<not counted>", "unit" : "", )"
                               R"("event" : "cpu_core/cycles/")"));
    // Totals made without times still show their counts.
    t.enabled_ns.clear();
    t.running_ns.clear();
    CHECK_THAT(archpmu::stat_human(t, f), Catch::Contains("0      cpu_core/cycles/"));
}
