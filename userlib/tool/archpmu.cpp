// SPDX-License-Identifier: MIT
// archpmu: the command-line tool over /dev/archpmu.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "archpmu/device.hpp"
#include "archpmu/error.hpp"
#include "archpmu/report.hpp"

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
    CLI::App app{"archpmu: the Intel architectural PMU through /dev/archpmu"};
    app.require_subcommand(1);
    std::string device_path = archpmu::kDefaultDevicePath;
    app.add_option("-d,--device", device_path, "the archpmu device")->capture_default_str();

    bool json = false;
    auto* info = app.add_subcommand("info", "describe every CPU's PMU, grouped by layout");
    info->add_flag("-j,--json", json, "print JSON instead of a table");

    CLI11_PARSE(app, argc, argv);
    if (info->parsed())
        return run_info(device_path, json);
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
