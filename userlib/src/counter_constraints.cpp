// SPDX-License-Identifier: MIT
#include "archpmu/counter_constraints.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <unordered_map>
#include <vector>

namespace archpmu {
namespace {

// Which cores a row of perf's tables is for: all of a non-hybrid part's (no
// "Unit"), or a hybrid part's P-cores ("cpu_core") or E-cores ("cpu_atom").
enum class Unit : std::uint8_t { any, core, atom };
using U = Unit;

// An event that counts on some GP counters only.
struct Row {
    std::uint8_t event;
    std::uint8_t umask;
    Unit unit;
    std::uint32_t gp_mask;
};

// A core entry of perf's mapfile.csv: a regex over perf's CPUID string, the
// directory of event tables it names, and their restricted events, sorted.
struct MapEntry {
    const char* cpuid;
    const char* model;
    const Row* rows;
    std::size_t size;
};

#include "counter_constraints_table.inc"

constexpr bool tables_sorted()
{
    for (const auto& entry : kMap) {
        for (std::size_t i = 1; i < entry.size; ++i) {
            const Row& a = entry.rows[i - 1];
            const Row& b = entry.rows[i];
            if (a.event > b.event || (a.event == b.event && a.umask > b.umask))
                return false;
        }
    }
    return true;
}
static_assert(tables_sorted(), "counter_constraints_table.inc: rows out of order");

// perf's CPUID string, "GenuineIntel-<family>-<MODEL>-<STEPPING>": family in
// decimal, model and stepping in upper-case hex without leading zeros, the
// family and model as the SDM displays them (tools/perf/arch/x86/util/header.c).
std::string perf_cpuid(std::uint32_t eax)
{
    unsigned family = (eax >> 8) & 0xf;
    unsigned model = (eax >> 4) & 0xf;
    const unsigned stepping = eax & 0xf;
    if (family == 0xf)
        family += (eax >> 20) & 0xff;
    if (family >= 0x6)  // perf's test: the families 6 and 0xF (+ extended) of the SDM
        model += ((eax >> 16) & 0xf) << 4;
    return fmt::format("GenuineIntel-{}-{:X}-{:X}", family, model, stepping);
}

// A full CPUID string, vendor-family-model-stepping, has three dashes.
bool is_full_cpuid(std::string_view id)
{
    return std::count(id.begin(), id.end(), '-') == 3;
}

// perf's strcmp_cpuid_str: the POSIX extended regex's leftmost-longest match in
// the CPUID string must be as long as the string, or as its part before the
// stepping when the regex names no stepping.
bool cpuid_matches(const std::regex& re, bool full_regex, const std::string& id)
{
    std::smatch match;
    if (!std::regex_search(id, match, re))
        return false;
    const std::size_t len = full_regex ? id.size() : id.rfind('-');
    return static_cast<std::size_t>(match.length(0)) == len;
}

// The first mapfile entry matching a CPU (perf takes the first), nullptr for
// none. Each signature is matched once; each regex is compiled when first needed.
const MapEntry* find_entry(std::uint32_t cpuid_01_eax)
{
    // The signature without the processor type and reserved bits.
    const std::uint32_t signature = cpuid_01_eax & 0x0fff0fffU;
    static std::mutex lock;
    static std::unordered_map<std::uint32_t, const MapEntry*> found;
    // Compiled regexes, by entry; nullopt once an entry's failed to compile
    // (perf skips such an entry too).
    static std::vector<std::optional<std::regex>> regexes(std::size(kMap));
    static std::vector<bool> compiled(std::size(kMap), false);

    const std::lock_guard<std::mutex> guard(lock);
    if (const auto it = found.find(signature); it != found.end())
        return it->second;
    const std::string id = perf_cpuid(signature);
    const MapEntry* entry = nullptr;
    for (std::size_t i = 0; i < std::size(kMap) && entry == nullptr; ++i) {
        if (!compiled[i]) {
            compiled[i] = true;
            try {
                regexes[i].emplace(kMap[i].cpuid, std::regex::extended | std::regex::nosubs);
            } catch (const std::regex_error&) {
                regexes[i].reset();
            }
        }
        if (regexes[i] && cpuid_matches(*regexes[i], is_full_cpuid(kMap[i].cpuid), id))
            entry = &kMap[i];
    }
    found.emplace(signature, entry);
    return entry;
}

}  // namespace

std::uint32_t gp_counter_constraint(std::uint32_t cpuid_01_eax, CoreType core_type,
                                    std::uint32_t code)
{
    const MapEntry* entry = find_entry(cpuid_01_eax);
    if (entry == nullptr || entry->size == 0)
        return 0;
    const Row key{static_cast<std::uint8_t>(code & 0xff),
                  static_cast<std::uint8_t>((code >> 8) & 0xff), Unit::any, 0};
    const auto before = [](const Row& a, const Row& b) {
        return a.event != b.event ? a.event < b.event : a.umask < b.umask;
    };
    const Row* end = entry->rows + entry->size;
    const auto [first, last] = std::equal_range(entry->rows, end, key, before);
    std::uint32_t any = 0;
    std::uint32_t core = 0;
    std::uint32_t atom = 0;
    for (const Row* row = first; row != last; ++row) {
        switch (row->unit) {
            case Unit::any:
                any = row->gp_mask;
                break;
            case Unit::core:
                core = row->gp_mask;
                break;
            case Unit::atom:
                atom = row->gp_mask;
                break;
        }
    }
    if (any != 0)
        return any;  // a non-hybrid part: whatever the core type
    switch (core_type) {
        case CoreType::core:
            return core;
        case CoreType::atom:
            return atom;
        case CoreType::none:
        case CoreType::unknown:
            break;
    }
    // A hybrid part's core of unknown type: only what both types restrict.
    return core != 0 && atom != 0 ? core | atom : 0;
}

std::string_view counter_constraints_model(std::uint32_t cpuid_01_eax)
{
    const MapEntry* entry = find_entry(cpuid_01_eax);
    return entry != nullptr ? entry->model : std::string_view{};
}

std::string_view counter_constraints_source()
{
    return kTableSource;
}

}  // namespace archpmu
