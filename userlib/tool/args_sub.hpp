// SPDX-License-Identifier: MIT
// The stat and record subcommands' options: bound to CLI11 by add_*, then checked
// into StatOptions and RecordOptions by check_*, for parse_command_line (args.cpp).
// A check throws archpmu::Error (EINVAL) with one line, which the caller prints
// above the usage.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "record.hpp"
#include "stat.hpp"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace archpmu::tool {

// "OPTION: why".
[[noreturn]] void refuse(std::string_view option, const std::string& why);
// A command line that does not make sense as a whole: `what` alone.
[[noreturn]] void misuse(const std::string& what);

struct RecordArgs {
    std::vector<std::string> events;
    std::string cpus;
    std::string count;
    std::string freq;
    std::string pages;
    std::string duration;
    std::string pids;
    std::string tids;
    bool all_cpus = false;
    CLI::Option* all_opt = nullptr;
    CLI::Option* cpu_opt = nullptr;
    CLI::Option* pid_opt = nullptr;
    CLI::Option* tid_opt = nullptr;
    CLI::Option* count_opt = nullptr;
    CLI::Option* freq_opt = nullptr;
    CLI::Option* pages_opt = nullptr;
    CLI::Option* duration_opt = nullptr;
    bool graph = false;
    std::string call_graph;
    CLI::Option* graph_opt = nullptr;
    CLI::Option* call_graph_opt = nullptr;
};

CLI::App* add_record(CLI::App& app, RecordArgs& a, RecordOptions& rec);
void check_record(const RecordArgs& a, RecordOptions& rec);

struct StatArgs {
    std::vector<std::string> events;
    std::string cpus;
    std::string interval;
    std::string separator;
    std::string duration;
    std::string pids;
    std::string tids;
    std::string repeat;
    std::string td_level;
    std::vector<std::string> metric_groups;
    bool all_cpus = false;
    bool json_lines = false;
    bool json_doc = false;
    bool topdown = false;
    unsigned detailed = 0;
    CLI::Option* all_opt = nullptr;
    CLI::Option* cpu_opt = nullptr;
    CLI::Option* pid_opt = nullptr;
    CLI::Option* tid_opt = nullptr;
    CLI::Option* per_cpu_opt = nullptr;
    CLI::Option* interval_opt = nullptr;
    CLI::Option* separator_opt = nullptr;
    CLI::Option* output_opt = nullptr;
    CLI::Option* append_opt = nullptr;
    CLI::Option* repeat_opt = nullptr;
    CLI::Option* td_level_opt = nullptr;
    CLI::Option* duration_opt = nullptr;
};

CLI::App* add_stat(CLI::App& app, StatArgs& a, StatOptions& st);
// `command`: stat's COMMAND, moved into st.
void check_stat(const StatArgs& a, StatOptions& st, std::vector<std::string> command);

}  // namespace archpmu::tool
