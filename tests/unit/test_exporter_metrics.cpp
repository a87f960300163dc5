// SPDX-License-Identifier: MIT
// What archpmu exporter serves: names by Prometheus' rules, perf's scaling, the two
// formats and which one a scraper gets.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "archpmu/error.hpp"
#include "archpmu/events.hpp"
#include "args.hpp"
#include "count_value_row.hpp"
#include "exporter_metrics.hpp"
#include "openmetrics.hpp"

using archpmu::tool::event_family_name;
using archpmu::tool::prefers_openmetrics;
using archpmu::tool::ScrapeView;
using Catch::Contains;

using archpmu::unit::row;

namespace {

archpmu::CpuInfo cpu(std::uint32_t n, archpmu::CoreType type)
{
    archpmu::CpuInfo c;
    c.cpu = n;
    c.version = 5;
    c.core_type = type;
    c.gp_counters = 8;
    c.gp_width = 48;
    c.fixed_width = 48;
    c.fixed_mask = 0x7;
    return c;
}

const prometheus::MetricFamily* find(const std::vector<prometheus::MetricFamily>& fams,
                                     const std::string& name)
{
    for (const auto& f : fams)
        if (f.name == name)
            return &f;
    return nullptr;
}

}  // namespace

TEST_CASE("an event's family name follows Prometheus' rules", "[exporter]")
{
    CHECK(event_family_name("instructions") == "archpmu_instructions_total");
    CHECK(event_family_name("L1-dcache-load-misses") == "archpmu_l1_dcache_load_misses_total");
    CHECK(event_family_name("cycles:u") == "archpmu_cycles_u_total");
    CHECK(event_family_name("cpu_core/cycles/") == "archpmu_cycles_total");
    CHECK(event_family_name("CPU_ATOM/branches/:k") == "archpmu_branches_k_total");
    CHECK(event_family_name("cpu/event=0xc0,umask=0/") == "archpmu_cpu_event_0xc0_umask_0_total");
    CHECK(archpmu::tool::event_label("cpu_atom/branches/:u") == "branches:u");
}

TEST_CASE("two events of one family are refused unless their core types differ", "[exporter]")
{
    using archpmu::parse_event_list;
    CHECK_NOTHROW(archpmu::tool::check_family_names(parse_event_list("instructions,cycles")));
    CHECK_NOTHROW(
        archpmu::tool::check_family_names(parse_event_list("cpu_core/cycles/,cpu_atom/cycles/")));
    CHECK_NOTHROW(archpmu::tool::check_family_names(parse_event_list("branch-misses,r00c5")));
    CHECK_THROWS_WITH(
        archpmu::tool::check_family_names(parse_event_list("cycles,cpu_core/cycles/")),
        Contains("'cycles' and 'cpu_core/cycles/' would both be archpmu_cycles_total"));
    archpmu::EventSpec own;
    own.name = "running-seconds";  // no event has such a name: the check still holds
    CHECK_THROWS_WITH(archpmu::tool::check_family_names({own}),
                      Contains("archpmu_running_seconds_total, which the exporter serves"));
    own.name = "lost-samples";
    CHECK_THROWS_WITH(archpmu::tool::check_family_names({own}),
                      Contains("archpmu_lost_samples_total, which the exporter serves"));
}

TEST_CASE("a scrape: scaled counts, times in seconds, the PMU, and no sample where nothing counted",
          "[exporter]")
{
    ScrapeView v;
    v.up = true;
    v.events = archpmu::parse_event_list("instructions,cpu_atom/branches/");
    v.cpus = {cpu(0, archpmu::CoreType::core), cpu(1, archpmu::CoreType::atom)};
    v.backend = archpmu::Backend::model;
    v.sessions_opened = 3;
    v.snapshot.values = {row(0, 0, 1000, 4'000'000'000, 2'000'000'000),         // multiplexed: x2
                         row(0, 1, 0, 0, 0), row(1, 0, 500, 1'000'000'000, 0),  // never counted
                         row(1, 1, 77, 1'000'000'000, 1'000'000'000)};
    v.snapshot.values[1].absent = true;   // cpu_atom/ on a P-core
    v.snapshot.values[2].offline = true;  // every row of an offline CPU says so
    v.snapshot.values[3].offline = true;
    archpmu::tool::ReportedCounts reported;
    const auto fams = archpmu::tool::scrape_families(v, reported);

    const auto* inst = find(fams, "archpmu_instructions_total");
    REQUIRE(inst);
    CHECK(inst->type == prometheus::MetricType::Counter);
    REQUIRE(inst->metric.size() == 1);
    CHECK(inst->metric[0].counter.value == 2000);
    CHECK(inst->metric[0].label[0].name == "core_type");
    CHECK(inst->metric[0].label[0].value == "core");
    const auto* br = find(fams, "archpmu_branches_total");
    REQUIRE(br);
    REQUIRE(br->metric.size() == 1);
    CHECK(br->metric[0].label[1].value == "1");
    CHECK(br->metric[0].counter.value == 77);

    const auto* enabled = find(fams, "archpmu_enabled_seconds_total");
    REQUIRE(enabled);
    CHECK(enabled->metric.size() == 3);  // not the absent row
    CHECK(enabled->metric[0].counter.value == 4.0);
    CHECK(find(fams, "archpmu_running_seconds_total")->metric[1].counter.value == 0.0);

    const auto* online = find(fams, "archpmu_cpu_online");
    REQUIRE(online);
    REQUIRE(online->metric.size() == 2);
    CHECK(online->metric[0].gauge.value == 1);
    CHECK(online->metric[1].gauge.value == 0);
    CHECK(find(fams, "archpmu_pmu_info")->metric.size() == 2);
    CHECK(find(fams, "archpmu_sessions_opened_total")->metric[0].counter.value == 3);
    CHECK(find(fams, "archpmu_up")->metric[0].gauge.value == 1);
    for (const auto& f : fams)
        CHECK_FALSE(f.help.empty());

    // No sampling totals read (a module without the files): no family, rather than zeros.
    CHECK_FALSE(find(fams, "archpmu_throttled_total"));
    CHECK_FALSE(find(fams, "archpmu_lost_samples_total"));
    v.sampling = {{0, 5, 0}, {1, 0, 1234}};
    const auto with_sampling = archpmu::tool::scrape_families(v, reported);
    const auto* throttled = find(with_sampling, "archpmu_throttled_total");
    REQUIRE(throttled);
    CHECK(throttled->type == prometheus::MetricType::Counter);
    REQUIRE(throttled->metric.size() == 2);
    CHECK(throttled->metric[0].counter.value == 5);
    CHECK(throttled->metric[1].label[0].value == "atom");
    CHECK(throttled->metric[1].label[1].value == "1");
    const auto* lost = find(with_sampling, "archpmu_lost_samples_total");
    REQUIRE(lost);
    REQUIRE(lost->metric.size() == 2);
    CHECK(lost->metric[1].counter.value == 1234);

    v.up = false;
    const auto down = archpmu::tool::scrape_families(v, reported);
    CHECK(down.size() == 2);
    CHECK(find(down, "archpmu_up")->metric[0].gauge.value == 0);
}

TEST_CASE("OpenMetrics: TYPE and HELP without _total, UNIT for seconds, escapes, # EOF",
          "[exporter]")
{
    prometheus::MetricFamily f;
    f.name = "archpmu_enabled_seconds_total";
    f.help = "time \"enabled\"\nsecond line \\";
    f.type = prometheus::MetricType::Counter;
    prometheus::ClientMetric m;
    m.label = {{"cpu", "0"}, {"event", "a\"b"}};
    m.counter.value = 1.5;
    f.metric.push_back(m);
    prometheus::MetricFamily g;
    g.name = "archpmu_up";
    g.help = "up";
    g.type = prometheus::MetricType::Gauge;
    g.metric.emplace_back();
    g.metric[0].gauge.value = 1;
    const std::string text = archpmu::tool::serialize_openmetrics({f, g});
    CHECK(text ==
          "# TYPE archpmu_enabled_seconds counter\n"
          "# UNIT archpmu_enabled_seconds seconds\n"
          "# HELP archpmu_enabled_seconds time \\\"enabled\\\"\\nsecond line \\\\\n"
          "archpmu_enabled_seconds_total{cpu=\"0\",event=\"a\\\"b\"} 1.5\n"
          "# TYPE archpmu_up gauge\n"
          "# HELP archpmu_up up\n"
          "archpmu_up 1\n"
          "# EOF\n");
    prometheus::MetricFamily i;
    i.name = "archpmu_pmu_info";
    i.help = "the PMU";
    i.type = prometheus::MetricType::Gauge;
    i.metric.emplace_back();
    i.metric[0].label = {{"version", "5"}};
    i.metric[0].gauge.value = 1;
    CHECK(archpmu::tool::serialize_openmetrics({i}) ==
          "# TYPE archpmu_pmu info\n# HELP archpmu_pmu the PMU\n"
          "archpmu_pmu_info{version=\"5\"} 1\n# EOF\n");
    CHECK_THAT(archpmu::tool::serialize_text({f}),
               Contains("# TYPE archpmu_enabled_seconds_total counter"));
}

TEST_CASE("the scraper's Accept header picks the format", "[exporter]")
{
    // Prometheus 2.42's own header.
    CHECK(
        prefers_openmetrics("application/openmetrics-text;version=1.0.0,application/"
                            "openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;"
                            "q=0.5,*/*;q=0.1"));
    CHECK(prefers_openmetrics("application/openmetrics-text"));
    CHECK_FALSE(prefers_openmetrics(""));
    CHECK_FALSE(prefers_openmetrics("*/*"));
    CHECK_FALSE(prefers_openmetrics("text/plain;version=0.0.4"));
    CHECK_FALSE(prefers_openmetrics("text/plain, application/openmetrics-text;q=0.5"));
    CHECK_FALSE(prefers_openmetrics("application/openmetrics-text;version=2.0.0"));
    CHECK_FALSE(prefers_openmetrics("application/openmetrics-text;q=0"));
    CHECK(prefers_openmetrics("TEXT/PLAIN;q=0.2, Application/OpenMetrics-Text ; q=0.9"));
    CHECK(prefers_openmetrics("application/openmetrics-text;version=\"1.0.0\""));
    CHECK_FALSE(prefers_openmetrics("application/openmetrics-text;q=-1, text/plain;q=0.1"));
}

TEST_CASE("exporter's command line: --listen, events and CPUs checked before it runs", "[exporter]")
{
    using archpmu::tool::parse_listen;
    CHECK(parse_listen("127.0.0.1:10738") == "127.0.0.1:10738");
    CHECK(parse_listen("[::1]:9999") == "[::1]:9999");
    CHECK(parse_listen("0.0.0.0:1") == "0.0.0.0:1");
    for (const char* bad :
         {"127.0.0.1", ":10738", "127.0.0.1:0", "127.0.0.1:65536", "::1:80", "127.0.0.1:80s",
          "[]:80", "host:x", "localhost:80", "10738,127.0.0.1:10739", "[::1]:1,[::]:10738",
          "127.0.0.1 :80", "0x7f.0.0.1:80", "[127.0.0.1]:80"})
        CHECK_THROWS_WITH(parse_listen(bad), Contains("--listen: '" + std::string(bad) + "'"));
}

TEST_CASE("a multiplexed event's scaled count never falls between scrapes of one session",
          "[exporter]")
{
    ScrapeView v;
    v.up = true;
    v.events = archpmu::parse_event_list("instructions");
    v.snapshot.values = {row(0, 0, 1000, 4'000'000'000, 2'000'000'000)};  // 2000 scaled
    archpmu::tool::ReportedCounts reported;
    const auto value = [&] {
        return find(archpmu::tool::scrape_families(v, reported), "archpmu_instructions_total")
            ->metric[0]
            .counter.value;
    };
    CHECK(value() == 2000);
    v.snapshot.values[0] =
        row(0, 0, 1200, 5'000'000'000, 4'000'000'000);  // 1500: the estimate fell
    CHECK(value() == 2000);
    v.snapshot.values[0] = row(0, 0, 3000, 6'000'000'000, 5'000'000'000);  // 3600
    CHECK(value() == 3600);
    reported.clear();  // a new session
    v.snapshot.values[0] = row(0, 0, 10, 1'000'000'000, 1'000'000'000);
    CHECK(value() == 10);
}
