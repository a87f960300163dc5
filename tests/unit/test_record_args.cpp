// SPDX-License-Identifier: MIT
// archpmu record's command line.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "args.hpp"

using archpmu::tool::Command;
using Catch::Contains;

namespace {

Command parse(std::vector<std::string> args)
{
    args.insert(args.begin(), "archpmu");
    std::vector<const char*> argv;
    for (const auto& a : args)
        argv.push_back(a.c_str());
    argv.push_back(nullptr);
    std::ostringstream help;
    return archpmu::tool::parse_command_line(static_cast<int>(args.size()), argv.data(), help);
}

}  // namespace

TEST_CASE("record's defaults are perf's: cycles at 4000 Hz into perf.data", "[record_args]")
{
    const auto cmd = parse({"record", "--", "true"});
    REQUIRE(cmd.action == Command::Action::record);
    REQUIRE(cmd.record.events.size() == 1);
    CHECK(cmd.record.events[0].name == "cycles");
    CHECK(cmd.record.freq_hz == 4000);
    CHECK(cmd.record.period == 0);
    CHECK(cmd.record.output == "perf.data");
    CHECK(cmd.record.command == std::vector<std::string>{"true"});
    CHECK(cmd.record.cmdline.size() == 4);
    CHECK_FALSE(cmd.record.system_wide);  // the command only, as perf record
}

TEST_CASE("record's targets are perf's: a COMMAND, -p, -t, or CPUs", "[record_args]")
{
    auto cmd = parse({"record", "-p", "12,34", "--duration", "1"});
    REQUIRE(cmd.action == Command::Action::record);
    CHECK(cmd.record.pids == std::vector<pid_t>{12, 34});
    CHECK_FALSE(cmd.record.system_wide);
    cmd = parse({"record", "-t", "56"});
    REQUIRE(cmd.action == Command::Action::record);
    CHECK(cmd.record.tids == std::vector<pid_t>{56});
    CHECK_FALSE(cmd.record.system_wide);
    cmd = parse({"record", "-a", "--", "true"});
    CHECK(cmd.record.system_wide);
    cmd = parse({"record", "-C", "1", "--", "true"});
    CHECK(cmd.record.system_wide);
    cmd = parse({"record", "--duration", "1"});  // nothing named: every CPU, as perf
    CHECK(cmd.record.system_wide);
    cmd = parse({"record", "-a", "-p", "12"});
    CHECK(cmd.status == 129);
    cmd = parse({"record", "-p", "x"});
    CHECK(cmd.status == 129);
    CHECK_THAT(cmd.error, Contains("-p/--pid"));
}

TEST_CASE("record takes a period, CPUs, an output and ring pages", "[record_args]")
{
    const auto cmd = parse({"record", "-e", "instructions:u,branches", "-c", "100003", "-C", "0-1",
                            "-o", "x.data", "-m", "128", "--duration", "2"});
    REQUIRE(cmd.action == Command::Action::record);
    CHECK(cmd.record.events.size() == 2);
    CHECK(cmd.record.period == 100003);
    CHECK(cmd.record.freq_hz == 0);
    CHECK(cmd.record.cpus == std::vector<std::uint32_t>{0, 1});
    CHECK(cmd.record.output == "x.data");
    CHECK(cmd.record.ring_pages == 128);
    CHECK(cmd.record.duration);
}

TEST_CASE("record refuses bad values", "[record_args]")
{
    auto cmd = parse({"record", "-F", "0"});
    CHECK(cmd.status == 129);
    CHECK_THAT(cmd.error, Contains("-F/--freq"));
    cmd = parse({"record", "-c", "x"});
    CHECK(cmd.status == 129);
    CHECK_THAT(cmd.error, Contains("-c/--count"));
    cmd = parse({"record", "-m", "3"});
    CHECK(cmd.status == 129);
    CHECK_THAT(cmd.error, Contains("power of 2"));
    cmd = parse({"record", "-c", "10", "-F", "10"});
    CHECK(cmd.status == 129);
    cmd = parse({"record", "--duration", "1", "--", "true"});
    CHECK(cmd.status == 129);
    CHECK_THAT(cmd.error, Contains("archpmu record:"));
}

TEST_CASE("record's call graphs are perf's: -g, --call-graph fp and dwarf[,SIZE]", "[record_args]")
{
    auto cmd = parse({"record", "-g", "--", "true"});
    REQUIRE(cmd.action == Command::Action::record);
    CHECK(cmd.record.callchain);
    CHECK(cmd.record.user_stack == 0);
    cmd = parse({"record", "--call-graph", "fp", "--", "true"});
    CHECK(cmd.record.callchain);
    CHECK(cmd.record.user_stack == 0);
    cmd = parse({"record", "--call-graph", "dwarf", "--", "true"});
    CHECK(cmd.record.callchain);
    CHECK(cmd.record.user_stack == 8192);
    cmd = parse({"record", "--call-graph", "dwarf,100", "--", "true"});
    CHECK(cmd.record.user_stack == 104);  // rounded up to 8, as perf
    cmd = parse({"record", "--call-graph", "dwarf,99999", "--", "true"});
    CHECK(cmd.status == 129);
    CHECK_THAT(cmd.error, Contains("--call-graph"));
    cmd = parse({"record", "--call-graph", "lbr", "--", "true"});
    CHECK(cmd.status == 129);
    cmd = parse({"record", "--call-graph", "fp,8", "--", "true"});
    CHECK(cmd.status == 129);
    cmd = parse({"record", "--", "true"});
    CHECK_FALSE(cmd.record.callchain);
    // A sample must fit in half the ring (of 4 KiB pages here).
    cmd = parse({"record", "--call-graph", "dwarf", "-m", "1", "--", "true"});
    CHECK(cmd.status == 129);
    CHECK_THAT(cmd.error,
               Contains("-m/--mmap-pages: a ring of 1 page cannot hold a sample with 8192 bytes"));
    cmd = parse({"record", "--call-graph", "dwarf,2048", "-m", "1", "--", "true"});
    CHECK(cmd.action == Command::Action::record);
}
