// SPDX-License-Identifier: MIT
// archpmu: the command-line tool over /dev/archpmu.
#include <exception>
#include <iostream>

#include "archpmu/device.hpp"
#include "archpmu/error.hpp"
#include "args.hpp"
#include "exporter.hpp"
#include "list.hpp"
#include "record.hpp"
#include "report.hpp"
#include "selftest.hpp"
#include "stat.hpp"
#include "watch.hpp"

namespace {

int run_info(const std::string& device_path, bool json)
{
    const archpmu::Device dev(device_path);
    const auto info = dev.info();
    const auto cpus = dev.all_cpu_info();
    const auto model = archpmu::read_cpu_model();
    std::cout << (json ? archpmu::info_json(info, cpus, 2, model)
                       : archpmu::info_table(info, cpus, model));
    return 0;
}

int run(int argc, char** argv)
{
    using Action = archpmu::tool::Command::Action;
    const auto cmd = archpmu::tool::parse_command_line(argc, argv, std::cout);
    switch (cmd.action) {
        case Action::info:
            return run_info(cmd.device, cmd.json);
        case Action::list:
            return archpmu::tool::run_list(cmd.device, cmd.json, cmd.pattern);
        case Action::stat:
            return archpmu::tool::run_stat(cmd.stat);
        case Action::record:
            return archpmu::tool::run_record(cmd.record);
        case Action::monitor:
            return archpmu::tool::run_monitor(cmd.json);
        case Action::who:
            return archpmu::tool::run_who(cmd.json);
        case Action::regs:
            return archpmu::tool::run_regs(cmd.device, cmd.cpus, cmd.json);
        case Action::selftest: {
            archpmu::tool::SelftestOptions options{cmd.device, std::nullopt};
            if (!cmd.cpus.empty())
                options.cpu = cmd.cpus.front();
            return archpmu::tool::run_selftest(options);
        }
        case Action::exporter:
            return archpmu::tool::run_exporter(cmd.exporter);
        case Action::exit:
            break;
    }
    if (!cmd.error.empty())
        std::cerr << cmd.error << '\n';
    return cmd.status;
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
