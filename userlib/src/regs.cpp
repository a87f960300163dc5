// SPDX-License-Identifier: MIT
#include "archpmu/regs.hpp"

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace archpmu {
namespace {

constexpr std::uint32_t kPmc0 = 0x0c1;
constexpr std::uint32_t kEvtsel0 = 0x186;
constexpr std::uint32_t kFixedCtr0 = 0x309;
constexpr std::uint32_t kPerfMetrics = 0x329;
constexpr std::uint32_t kPerfCapabilities = 0x345;
constexpr std::uint32_t kFixedCtrCtrl = 0x38d;
constexpr std::uint32_t kGlobalStatus = 0x38e;
constexpr std::uint32_t kGlobalCtrl = 0x38f;
constexpr std::uint32_t kGlobalInuse = 0x392;
constexpr unsigned kGp = 8;
constexpr unsigned kFixed = 7;
// v6: GP counter n's counter at 1900H + 4n, its event select (CFG_A) one above.
constexpr std::uint32_t kV6Gp0Ctr = 0x1900;
constexpr std::uint32_t kV6Step = 4;
constexpr unsigned kV6Gp = 32;

// GP counter n of v6's range whose register `msr` is at `offset` (0: CTR, 1: CFG_A).
bool is_v6_gp(std::uint32_t msr, std::uint32_t offset)
{
    return msr >= kV6Gp0Ctr && msr < kV6Gp0Ctr + kV6Step * kV6Gp &&
           (msr - kV6Gp0Ctr) % kV6Step == offset;
}

using Fields = std::vector<std::pair<std::string, std::uint64_t>>;

void add(Fields& f, const std::string& name, std::uint64_t v)
{
    if (v)
        f.emplace_back(name, v);
}

Fields decode_evtsel(std::uint64_t v)
{
    Fields f;
    f.emplace_back("event", v & 0xff);
    f.emplace_back("umask", (v >> 8) & 0xff);
    static const std::pair<const char*, unsigned> bits[] = {{"usr", 16}, {"os", 17},  {"edge", 18},
                                                            {"pc", 19},  {"int", 20}, {"any", 21},
                                                            {"en", 22},  {"inv", 23}};
    for (const auto& [name, bit] : bits)
        add(f, name, (v >> bit) & 1);
    add(f, "cmask", (v >> 24) & 0xff);
    add(f, "eq", (v >> 36) & 1);
    add(f, "umask2", (v >> 40) & 0xff);
    return f;
}

Fields decode_fixed_ctrl(std::uint64_t v)
{
    Fields f;
    for (unsigned j = 0; j < kFixed; ++j) {
        const std::uint64_t nib = (v >> (4 * j)) & 0xf;
        const std::string p = "fixed" + std::to_string(j) + ".";
        add(f, p + "os", nib & 1);
        add(f, p + "usr", (nib >> 1) & 1);
        add(f, p + "any", (nib >> 2) & 1);
        add(f, p + "pmi", (nib >> 3) & 1);
    }
    return f;
}

enum class Global { ctrl, status, inuse };

Fields decode_global(std::uint64_t v, Global kind)
{
    Fields f;
    for (unsigned i = 0; i < 32; ++i)
        add(f, "pmc" + std::to_string(i), (v >> i) & 1);
    for (unsigned j = 0; j < 16; ++j)
        add(f, "fixed" + std::to_string(j), (v >> (32 + j)) & 1);
    if (kind == Global::status) {
        add(f, "perf_metrics", (v >> 48) & 1);
        add(f, "lbr_frz", (v >> 58) & 1);
        add(f, "ctr_frz", (v >> 59) & 1);
        add(f, "asci", (v >> 60) & 1);
        add(f, "ovf_uncore", (v >> 61) & 1);
        add(f, "ovf_buf", (v >> 62) & 1);
        add(f, "cond_chgd", (v >> 63) & 1);
    } else if (kind == Global::inuse) {
        add(f, "pmi_inuse", (v >> 63) & 1);
    }
    return f;
}

}  // namespace

std::string hex_string(std::uint64_t value)
{
    std::array<char, 24> buf{};
    (void)std::snprintf(buf.data(), buf.size(), "%#llx", static_cast<unsigned long long>(value));
    return buf.data();
}

std::string register_name(std::uint32_t msr)
{
    if (msr >= kEvtsel0 && msr < kEvtsel0 + kGp)
        return "IA32_PERFEVTSEL" + std::to_string(msr - kEvtsel0);
    if (msr >= kPmc0 && msr < kPmc0 + kGp)
        return "IA32_PMC" + std::to_string(msr - kPmc0);
    if (msr >= kFixedCtr0 && msr < kFixedCtr0 + kFixed)
        return "IA32_FIXED_CTR" + std::to_string(msr - kFixedCtr0);
    if (is_v6_gp(msr, 0) || is_v6_gp(msr, 1))
        return "IA32_PMC_GP" + std::to_string((msr - kV6Gp0Ctr) / kV6Step) +
               (is_v6_gp(msr, 0) ? "_CTR" : "_CFG_A");
    switch (msr) {
        case kFixedCtrCtrl:
            return "IA32_FIXED_CTR_CTRL";
        case kGlobalCtrl:
            return "IA32_PERF_GLOBAL_CTRL";
        case kGlobalStatus:
            return "IA32_PERF_GLOBAL_STATUS";
        case kGlobalInuse:
            return "IA32_PERF_GLOBAL_INUSE";
        case kPerfCapabilities:
            return "IA32_PERF_CAPABILITIES";
        case kPerfMetrics:
            return "MSR_PERF_METRICS";
        default:
            return "MSR " + hex_string(msr);
    }
}

std::vector<std::pair<std::string, std::uint64_t>> decode_register(std::uint32_t msr,
                                                                   std::uint64_t value)
{
    if ((msr >= kEvtsel0 && msr < kEvtsel0 + kGp) || is_v6_gp(msr, 1))
        return decode_evtsel(value);
    switch (msr) {
        case kFixedCtrCtrl:
            return decode_fixed_ctrl(value);
        case kGlobalCtrl:
            return decode_global(value, Global::ctrl);
        case kGlobalInuse:
            return decode_global(value, Global::inuse);
        case kGlobalStatus:
            return decode_global(value, Global::status);
        default:
            return {};
    }
}

}  // namespace archpmu
