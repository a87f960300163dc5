// SPDX-License-Identifier: MIT
// Reader for the CPUID dump files in tests/data/cpuid (one block per kind of
// logical CPU: "cpu-type N", then "LEAF SUBLEAF EAX EBX ECX EDX [name]").
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace archpmu::test {

struct CpuidRegs {
    std::uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};

// (leaf, subleaf) -> registers, for one kind of logical CPU.
using CpuidLeaves = std::map<std::pair<std::uint32_t, std::uint32_t>, CpuidRegs>;

inline std::vector<CpuidLeaves> read_cpuid_dump(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
        throw std::runtime_error("cannot read " + path);
    std::vector<CpuidLeaves> types;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#')
            continue;
        if (line.rfind("cpu-type", 0) == 0) {
            types.emplace_back();
            continue;
        }
        if (types.empty())
            throw std::runtime_error(path + ": leaf before any cpu-type line");
        std::istringstream fields(line);
        std::uint32_t leaf = 0, sub = 0;
        CpuidRegs r;
        fields >> std::hex >> leaf >> sub >> r.eax >> r.ebx >> r.ecx >> r.edx;
        if (!fields)
            throw std::runtime_error(path + ": bad line '" + line + "'");
        types.back()[{leaf, sub}] = r;
    }
    return types;
}

// The model_cpuid= module parameter value for one kind of CPU.
inline std::string model_cpuid_param(const CpuidLeaves& leaves)
{
    std::ostringstream out;
    out << std::hex;
    bool first = true;
    for (const auto& [key, r] : leaves) {
        const auto [leaf, sub] = key;
        const bool modelled = leaf == 0x01 || leaf == 0x0a || leaf == 0x1a ||
                              (leaf == 0x07 && sub <= 1) || (leaf == 0x23 && sub <= 5);
        if (!modelled)
            continue;
        if (!first)
            out << ',';
        first = false;
        out << leaf << '.' << sub << '=' << r.eax << ':' << r.ebx << ':' << r.ecx << ':' << r.edx;
    }
    return out.str();
}

}  // namespace archpmu::test
