// SPDX-License-Identifier: MIT
#include "regs_format.hpp"

#include <nlohmann/json.hpp>
#include <string>

#include "archpmu/regs.hpp"

namespace archpmu {
namespace {

// A field of more than one bit is printed with its value even when it is 1.
bool multi_bit(const std::string& name)
{
    return name == "event" || name == "umask" || name == "cmask" || name == "umask2";
}

}  // namespace

std::string registers_table(const std::vector<CpuRegisters>& cpus)
{
    std::string out;
    for (const auto& c : cpus) {
        out += "CPU " + std::to_string(c.cpu) + "\n";
        for (const auto& r : c.regs) {
            char line[96];
            (void)std::snprintf(line, sizeof(line), "  %-24s 0x%04x  0x%016llx",
                                register_name(r.msr).c_str(), r.msr,
                                static_cast<unsigned long long>(r.value));
            out += line;
            const char* sep = "  ";
            for (const auto& [name, v] : decode_register(r.msr, r.value)) {
                out += sep + name + (v == 1 && !multi_bit(name) ? "" : "=" + hex_string(v));
                sep = " ";
            }
            out += "\n";
        }
    }
    return out;
}

std::string registers_json(const std::vector<CpuRegisters>& cpus)
{
    nlohmann::json doc = nlohmann::json::array();
    for (const auto& c : cpus) {
        nlohmann::json regs = nlohmann::json::array();
        for (const auto& r : c.regs) {
            nlohmann::json fields = nlohmann::json::object();
            for (const auto& [name, v] : decode_register(r.msr, r.value))
                fields[name] = v;
            regs.push_back({{"name", register_name(r.msr)},
                            {"msr", r.msr},
                            {"value", r.value},
                            {"fields", fields}});
        }
        doc.push_back({{"cpu", c.cpu}, {"registers", regs}});
    }
    return doc.dump(2) + "\n";
}

}  // namespace archpmu
