// SPDX-License-Identifier: MIT
// examples/ run as a user would run them, on the model.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <regex>
#include <string>

#include "archpmu/events.hpp"
#include "archpmu/session.hpp"
#include "harness.hpp"

using namespace archpmu::itest;

TEST_CASE("example count_region counts its loop", "[examples]")
{
    LoadedModule module("backend=model");
    const auto r = run_command(ARCHPMU_EXAMPLE_COUNT_REGION);
    INFO(r.out);
    REQUIRE(r.status == 0);
    std::smatch m;
    REQUIRE(std::regex_search(r.out, m, std::regex("instructions +([0-9]+)")));
    CHECK(std::stoull(m[1]) > 0);
    CHECK(std::regex_search(r.out, std::regex("IPC +[0-9]+\\.[0-9]+")));
}

TEST_CASE("example count_region says what is wrong without the module", "[examples]")
{
    const auto r = run_command(ARCHPMU_EXAMPLE_COUNT_REGION);
    INFO(r.out);
    CHECK(r.status == 1);
    CHECK(r.out.find("count_region: ") != std::string::npos);
    CHECK(r.out.find("/dev/archpmu") != std::string::npos);
}

TEST_CASE("example sample_function writes a perf.data that perf report reads",
          "[examples][sampling]")
{
    LoadedModule module("backend=model model_version=4");
    const std::string file = "/tmp/archpmu-example.data";
    ::unlink(file.c_str());
    const auto r = run_command(std::string(ARCHPMU_EXAMPLE_SAMPLE_FUNCTION) + " " + file);
    INFO(r.out);
    REQUIRE(r.status == 0);
    const auto report = run_command("perf report -i " + file + " --stdio --sort sym");
    INFO(report.out);
    REQUIRE(report.status == 0);
    CHECK(perf_report_share(report.out, "spin") >= 50.0);
    ::unlink(file.c_str());
}

TEST_CASE("example watch_events hears a session open and close", "[examples][netlink]")
{
    LoadedModule module("backend=model");
    FILE* watcher =
        ::popen(("timeout 20 " + std::string(ARCHPMU_EXAMPLE_WATCH_EVENTS) + " 2").c_str(), "r");
    REQUIRE(watcher);
    char line[512];
    REQUIRE(std::fgets(line, sizeof(line), watcher));
    CHECK(std::string(line).find("watching") == 0);
    {
        archpmu::Session s(archpmu::parse_event_list("instructions"), on_cpus({0}));
    }
    std::string out;
    while (std::fgets(line, sizeof(line), watcher))
        out += line;
    const int status = ::pclose(watcher);
    INFO(out);
    CHECK(status == 0);
    CHECK(out.find("session-open session ") == 0);
    CHECK(out.find("\nsession-close session ") != std::string::npos);
    CHECK(out.find(" pid " + std::to_string(::getpid())) != std::string::npos);
}
