// SPDX-License-Identifier: MIT
#include "report.hpp"

#include <fmt/format.h>

#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

namespace archpmu {
namespace {

std::string join(const std::vector<std::string>& items, const char* sep)
{
    std::string out;
    for (const auto& item : items) {
        if (!out.empty())
            out += sep;
        out += item;
    }
    return out;
}

std::string fixed_list(const CpuInfo& c)
{
    std::vector<std::string> items;
    for (unsigned j : c.fixed_counters())
        items.push_back(std::to_string(j));
    return items.empty() ? "-" : join(items, ",");
}

constexpr std::size_t kWrapColumns = 100;

// `words` after `lead`, as lines of at most kWrapColumns, continued under the first word.
std::string wrapped(const std::string& lead, const std::vector<std::string>& words)
{
    std::string out = lead;
    std::size_t column = lead.size();
    const std::string indent(lead.size(), ' ');
    for (std::size_t i = 0; i < words.size(); ++i) {
        if (i > 0 && column + 1 + words[i].size() > kWrapColumns) {
            out += "\n" + indent;
            column = indent.size();
        } else if (i > 0) {
            out += ' ';
            ++column;
        }
        out += words[i];
        column += words[i].size();
    }
    return out + "\n";
}

unsigned number_after_colon(const std::string& line)
{
    const auto colon = line.find(':');
    try {
        return colon == std::string::npos
                   ? 0
                   : static_cast<unsigned>(std::stoul(line.substr(colon + 1)));
    } catch (const std::exception&) {
        return 0;
    }
}

std::string text_after_colon(const std::string& line)
{
    const auto colon = line.find(':');
    if (colon == std::string::npos)
        return {};
    const auto start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? std::string() : line.substr(start);
}

}  // namespace

CpuModel parse_cpuinfo(const std::string& text)
{
    CpuModel m;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.empty() && (m.known() || m.family))
            break;  // the end of the first processor's block
        const std::string key = line.substr(0, line.find_first_of("\t:"));
        if (key == "vendor_id")
            m.vendor = text_after_colon(line);
        else if (key == "cpu family")
            m.family = number_after_colon(line);
        else if (key == "model")
            m.model = number_after_colon(line);
        else if (key == "stepping")
            m.stepping = number_after_colon(line);
        else if (key == "model name")
            m.name = text_after_colon(line);
    }
    return m;
}

CpuModel read_cpu_model()
{
    std::ifstream in("/proc/cpuinfo");
    std::stringstream text;
    text << in.rdbuf();
    return parse_cpuinfo(text.str());
}

std::string describe(const CpuModel& m)
{
    return fmt::format("{} family {} model {} ({:#x}) stepping {}{}", m.vendor, m.family, m.model,
                       m.model, m.stepping, m.name.empty() ? "" : ": " + m.name);
}

std::string info_json(const Info& info, const std::vector<CpuInfo>& cpus, int indent,
                      const CpuModel& model)
{
    nlohmann::ordered_json doc;
    doc["abi_version"] = info.abi_version;
    doc["backend"] = std::string(to_string(info.backend));
    doc["privilege"] = std::string(to_string(info.privilege));
    if (model.known())
        doc["cpu_model"] = {{"vendor", model.vendor},
                            {"family", model.family},
                            {"model", model.model},
                            {"stepping", model.stepping},
                            {"name", model.name}};
    doc["cpus"] = nlohmann::ordered_json::array();
    for (const auto& c : cpus) {
        nlohmann::ordered_json j;
        j["cpu"] = c.cpu;
        j["version"] = c.version;
        j["gp_counters"] = c.gp_counters;
        j["gp_width"] = c.gp_width;
        j["fixed_counters"] = c.fixed_counters();
        j["fixed_width"] = c.fixed_width;
        j["events"] = c.events();
        j["anythread_deprecated"] = c.anythread_deprecated();
        if (c.hybrid())
            j["core_type"] = std::string(to_string(c.core_type));
        else
            j["core_type"] = nullptr;
        j["full_width_write"] = c.full_width_write();
        j["tsx_force_abort"] = c.tsx_force_abort();
        doc["cpus"].push_back(std::move(j));
    }
    return doc.dump(indent) + "\n";
}

std::string info_table(const Info& info, const std::vector<CpuInfo>& cpus, const CpuModel& model)
{
    std::ostringstream out;
    out << "archpmu: backend " << to_string(info.backend) << ", ABI " << info.abi_version << ", "
        << cpus.size() << " CPU" << (cpus.size() == 1 ? "" : "s") << " enumerated\n";
    if (model.known())
        out << "processor: " << describe(model) << '\n';
    if (info.privilege == Privilege::own_user)
        out << "you may count your own programs in user mode (not CPUs, kernel mode or "
               "samples: those need CAP_PERFMON)\n";
    else if (info.privilege == Privilege::none)
        out << "you may not count: sessions need CAP_PERFMON (the module's unprivileged=off)\n";
    out << '\n';

    const auto groups = group_by_pmu(cpus);
    std::vector<std::vector<std::string>> rows = {
        {"CPUS", "TYPE", "VER", "GP", "GP-WIDTH", "FIXED", "FIX-WIDTH", "FULL-WIDTH", "ANYTHREAD"}};
    std::string events;
    for (const auto& g : groups) {
        const CpuInfo& c = g.pmu;
        if (c.version == 0) {
            rows.push_back({format_cpu_list(g.cpus), "-", "0", "-", "-", "-", "-", "-", "-"});
            events += wrapped("events, CPUs " + format_cpu_list(g.cpus) + ": ",
                              {"none (no architectural PMU)"});
            continue;
        }
        const char* anythread = c.anythread_deprecated() ? "deprecated"
                                : c.version >= 3         ? "yes"
                                                         : "no";
        rows.push_back(
            {format_cpu_list(g.cpus), c.hybrid() ? std::string(to_string(c.core_type)) : "-",
             std::to_string(c.version), std::to_string(c.gp_counters), std::to_string(c.gp_width),
             fixed_list(c), c.fixed_mask ? std::to_string(c.fixed_width) : "-",
             c.full_width_write() ? "yes" : "no", anythread});
        events += wrapped("events, CPUs " + format_cpu_list(g.cpus) + ": ", c.events());
        if (c.tsx_force_abort())
            events += "CPUs " + format_cpu_list(g.cpus) +
                      ": GP counter 3 is left to TSX (TSX_FORCE_ABORT microcode); sessions count "
                      "on the others\n";
    }
    std::vector<std::size_t> width(rows[0].size(), 0);
    for (const auto& row : rows)
        for (std::size_t i = 0; i < row.size(); ++i)
            width[i] = std::max(width[i], row[i].size());
    for (const auto& row : rows) {
        for (std::size_t i = 0; i < row.size(); ++i) {
            if (i + 1 == row.size())
                out << row[i];
            else
                out << std::left << std::setw(static_cast<int>(width[i] + 2)) << row[i];
        }
        out << '\n';
    }
    out << '\n' << events;
    return out.str();
}

}  // namespace archpmu
