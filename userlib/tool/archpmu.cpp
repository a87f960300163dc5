// SPDX-License-Identifier: MIT
// archpmu: the command-line tool over /dev/archpmu.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "archpmu/device.hpp"
#include "archpmu/error.hpp"
#include "archpmu/report.hpp"
#include "stat.hpp"

namespace {

int run_info(const std::string& device_path, bool json)
{
    const archpmu::Device dev(device_path);
    const auto info = dev.info();
    const auto cpus = dev.all_cpu_info();
    std::cout << (json ? archpmu::info_json(info, cpus) : archpmu::info_table(info, cpus));
    return 0;
}

int run(int argc, char** argv)
{
    // Everything after "--" is the command for `stat` to run.
    int own_args = argc;
    std::vector<std::string> command;
    for (int i = 1; i < argc; ++i) {
        if (std::string(argv[i]) == "--") {
            own_args = i;
            command.assign(argv + i + 1, argv + argc);
            break;
        }
    }

    CLI::App app{"archpmu: the Intel architectural PMU through /dev/archpmu"};
    app.require_subcommand(1);
    std::string device_path = archpmu::kDefaultDevicePath;
    app.add_option("-d,--device", device_path, "the archpmu device")->capture_default_str();

    bool json = false;
    auto* info = app.add_subcommand("info", "describe every CPU's PMU, grouped by layout");
    info->add_flag("-j,--json", json, "print JSON instead of a table");

    archpmu::tool::StatOptions st;
    auto* stat = app.add_subcommand(
        "stat", "count events on CPUs while COMMAND runs (stat [options] -- COMMAND ARGS)");
    stat->add_option("-e,--event", st.events,
                     "events, comma-separated (default: cycles, instructions, ref-cycles, "
                     "branches, branch-misses); repeatable");
    auto* all_cpus =
        stat->add_flag("-a,--all-cpus", st.all_cpus, "count on every online CPU (the default)");
    stat->add_option("-C,--cpu", st.cpu_list, "count on these CPUs only (e.g. 0-3,6)")
        ->excludes(all_cpus);
    stat->add_flag("-A,--per-cpu", st.per_cpu, "a count per CPU instead of the sum");
    stat->add_option("-I,--interval-print", st.interval_ms, "print every MS milliseconds")
        ->check(CLI::Range(10U, 3600000U));
    stat->add_option("-x,--field-separator", st.separator, "CSV output with this separator");
    stat->add_flag("-j,--json", st.json, "JSON output");
    stat->add_option("--duration", st.duration_s, "count for SECONDS (without a COMMAND)")
        ->check(CLI::PositiveNumber);

    try {
        app.parse(own_args, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    if (info->parsed())
        return run_info(device_path, json);
    if (stat->parsed()) {
        if (command.empty() && st.duration_s < 0 && !st.interval_ms) {
            std::cerr << "archpmu stat: give a COMMAND (after --), --duration SECONDS or "
                         "-I MS (then Ctrl-C stops)\n";
            return 2;
        }
        if (!command.empty() && st.duration_s >= 0) {
            std::cerr << "archpmu stat: --duration and a COMMAND exclude each other\n";
            return 2;
        }
        st.device = device_path;
        st.command = command;
        return archpmu::tool::run_stat(st);
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv)
{
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "archpmu: " << e.what() << '\n';
    } catch (...) {
        std::cerr << "archpmu: unknown error\n";
    }
    return 1;
}
