// SPDX-License-Identifier: MIT
#include "archpmu/report.hpp"

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

}  // namespace

std::string info_json(const Info& info, const std::vector<CpuInfo>& cpus, int indent)
{
    nlohmann::ordered_json doc;
    doc["abi_version"] = info.abi_version;
    doc["backend"] = std::string(to_string(info.backend));
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
        doc["cpus"].push_back(std::move(j));
    }
    return doc.dump(indent) + "\n";
}

std::string info_table(const Info& info, const std::vector<CpuInfo>& cpus)
{
    std::ostringstream out;
    out << "archpmu: backend " << to_string(info.backend) << ", ABI " << info.abi_version << ", "
        << cpus.size() << " CPU" << (cpus.size() == 1 ? "" : "s") << " enumerated\n\n";

    const auto groups = group_by_pmu(cpus);
    std::vector<std::vector<std::string>> rows = {{"CPUS", "TYPE", "VER", "GP", "GP-WIDTH", "FIXED",
                                                   "FIX-WIDTH", "FULL-WIDTH", "ANYTHREAD",
                                                   "EVENTS"}};
    for (const auto& g : groups) {
        const CpuInfo& c = g.pmu;
        if (c.version == 0) {
            rows.push_back({format_cpu_list(g.cpus), "-", "0", "-", "-", "-", "-", "-", "-",
                            "no architectural PMU"});
            continue;
        }
        const char* anythread = c.anythread_deprecated() ? "deprecated"
                                : c.version >= 3         ? "yes"
                                                         : "no";
        rows.push_back(
            {format_cpu_list(g.cpus), c.hybrid() ? std::string(to_string(c.core_type)) : "-",
             std::to_string(c.version), std::to_string(c.gp_counters), std::to_string(c.gp_width),
             fixed_list(c), c.fixed_mask ? std::to_string(c.fixed_width) : "-",
             c.full_width_write() ? "yes" : "no", anythread, join(c.events(), " ")});
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
    return out.str();
}

}  // namespace archpmu
