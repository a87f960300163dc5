// SPDX-License-Identifier: MIT
#include "archpmu/pfm_events.hpp"

#include <perfmon/pfmlib.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <optional>

#include "archpmu.h"
#include "archpmu/error.hpp"

namespace archpmu {
namespace {

// IA32_PERFEVTSELx bits libpfm4 sets on every encoding: USR and OS (from the
// privilege levels asked for), INT and EN. archpmu sets those itself.
constexpr std::uint64_t kPfmControlBits =
    ARCHPMU_EVTSEL_USR | ARCHPMU_EVTSEL_OS | ARCHPMU_EVTSEL_INT | ARCHPMU_EVTSEL_EN;
// What archpmu programs from an event spec: event, umask, edge, AnyThread, INV, CMASK.
constexpr std::uint64_t kProgrammableBits = 0xffffULL | ARCHPMU_EVTSEL_EDGE | ARCHPMU_EVTSEL_ANY |
                                            ARCHPMU_EVTSEL_INV |
                                            (0xffULL << ARCHPMU_EVTSEL_CMASK_SHIFT);

// libpfm4 initialised once for the process (it has no per-caller state).
bool pfm_ready()
{
    static const bool ready = pfm_initialize() == PFM_SUCCESS;
    return ready;
}

// The present Intel core PMUs, other than the generic architectural table: one,
// or one per core type on a hybrid part (P-cores first, as libpfm4 lists them).
std::vector<pfm_pmu_info_t> intel_core_pmus()
{
    std::vector<pfm_pmu_info_t> out;
    if (!pfm_ready())
        return out;
    for (int pmu = PFM_PMU_NONE; pmu < PFM_PMU_MAX; ++pmu) {
        pfm_pmu_info_t info{};
        info.size = sizeof(info);
        if (pfm_get_pmu_info(static_cast<pfm_pmu_t>(pmu), &info) != PFM_SUCCESS)
            continue;
        if (!info.is_present || info.type != PFM_PMU_TYPE_CORE ||
            info.pmu == PFM_PMU_INTEL_X86_ARCH || info.name == nullptr)
            continue;
        if (std::string(info.desc ? info.desc : "").find("Intel") == std::string::npos)
            continue;
        out.push_back(info);
    }
    return out;
}

enum class Encoded { ok, unknown, needs_umask, unprogrammable };

// libpfm4's encoding of "PMU::EVENT[:UMASK]" as EventSpec::config bits.
Encoded encode(const std::string& pmu, const std::string& event, std::uint64_t& config)
{
    std::array<std::uint64_t, 8> codes{};
    pfm_pmu_encode_arg_t arg{};
    arg.size = sizeof(arg);
    arg.codes = codes.data();
    arg.count = static_cast<int>(codes.size());
    const std::string full = pmu + "::" + event;
    const int ret = pfm_get_os_event_encoding(full.c_str(), PFM_PLM0 | PFM_PLM3, PFM_OS_NONE, &arg);
    if (ret == PFM_ERR_NOTFOUND || ret == PFM_ERR_ATTR)
        return Encoded::unknown;
    if (ret == PFM_ERR_UMASK)
        return Encoded::needs_umask;
    if (ret != PFM_SUCCESS)
        return Encoded::unprogrammable;
    // A second code is another MSR (offcore response, load latency).
    if (arg.count != 1 || (codes[0] & ~(kPfmControlBits | kProgrammableBits)) != 0)
        return Encoded::unprogrammable;
    config = codes[0] & kProgrammableBits;
    return Encoded::ok;
}

std::string upper(std::string s)
{
    for (auto& c : s)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

}  // namespace

std::string pfm_pmu_name()
{
    std::string names;
    for (const auto& pmu : intel_core_pmus())
        names += (names.empty() ? "" : ",") + std::string(pmu.name);
    return names;
}

namespace {

// One PMU's encoding of a name in perf's or libpfm4's spelling. perf's
// EVENT.UMASK is libpfm4's EVENT:UMASK; an event's own name may hold a dot
// too, so the last dot is tried first, then the name as it is.
Encoded encode_name(const std::string& pmu, const std::string& name, std::uint64_t& config)
{
    Encoded result = Encoded::unknown;
    const auto dot = name.rfind('.');
    if (dot != std::string::npos && dot > 0 && dot + 1 < name.size()) {
        std::string colon = name;
        colon[dot] = ':';
        result = encode(pmu, colon, config);
    }
    return result == Encoded::unknown ? encode(pmu, name, config) : result;
}

}  // namespace

namespace {

std::string refusal(const std::string& name, const std::string& pmu, Encoded why)
{
    if (why == Encoded::needs_umask)
        return "event '" + name + "' (libpfm4, " + pmu +
               ") needs a unit mask: EVENT.UMASK ('archpmu list " + name + "' names them)";
    return "event '" + name + "' (libpfm4, " + pmu +
           ") needs more than an event select: another MSR (offcore response, load latency) "
           "or a filter archpmu does not program";
}

// The encoding every core type agrees on (archpmu programs one on every CPU),
// or the reason there is none.
Encoded encode_everywhere(const std::vector<pfm_pmu_info_t>& pmus, const std::string& name,
                          std::uint64_t& config, std::string& why)
{
    const Encoded first = encode_name(pmus.front().name, name, config);
    if (first != Encoded::ok) {
        if (first != Encoded::unknown)
            why = refusal(name, pmus.front().name, first);
        return first;
    }
    for (std::size_t i = 1; i < pmus.size(); ++i) {
        std::uint64_t other = 0;
        const Encoded there = encode_name(pmus[i].name, name, other);
        if (there == Encoded::ok && other == config)
            continue;
        why = "event '" + name + "' is " +
              (there == Encoded::unknown ? "not known"
               : there == Encoded::ok    ? "encoded differently"
                                         : "not programmable") +
              " on " + pmus[i].name + " (libpfm4), unlike " + pmus.front().name +
              "; a name stands for one encoding on every CPU: give each core type's "
              "raw (cpu_core/event=...,umask=.../, cpu_atom/event=...,umask=.../)";
        return Encoded::unprogrammable;
    }
    return Encoded::ok;
}

}  // namespace

std::vector<PfmEvent> pfm_events()
{
    std::vector<PfmEvent> out;
    const auto pmus = intel_core_pmus();
    if (pmus.empty())
        return out;
    // On a hybrid part: the P-cores' names that encode the same on every core type.
    const auto* pmu = &pmus.front();
    std::string why;
    for (int idx = pmu->first_event; idx != -1; idx = pfm_get_event_next(idx)) {
        pfm_event_info_t event{};
        event.size = sizeof(event);
        if (pfm_get_event_info(idx, PFM_OS_NONE, &event) != PFM_SUCCESS || !event.name)
            continue;
        bool has_umask = false;
        for (int a = 0; a < event.nattrs; ++a) {
            pfm_event_attr_info_t attr{};
            attr.size = sizeof(attr);
            if (pfm_get_event_attr_info(idx, a, PFM_OS_NONE, &attr) != PFM_SUCCESS ||
                attr.type != PFM_ATTR_UMASK || !attr.name)
                continue;
            has_umask = true;
            PfmEvent e;
            e.name = upper(std::string(event.name) + "." + attr.name);
            if (encode_everywhere(pmus, e.name, e.config, why) != Encoded::ok)
                continue;
            e.description = attr.desc ? attr.desc : (event.desc ? event.desc : "");
            out.push_back(std::move(e));
        }
        PfmEvent e;
        e.name = upper(event.name);
        if (!has_umask && encode_everywhere(pmus, e.name, e.config, why) == Encoded::ok) {
            e.description = event.desc ? event.desc : "";
            out.push_back(std::move(e));
        }
    }
    return out;
}

std::optional<std::uint64_t> pfm_event_config(const std::string& name)
{
    const auto pmus = intel_core_pmus();
    if (pmus.empty() || name.empty())
        return std::nullopt;
    std::uint64_t config = 0;
    std::string why;
    switch (encode_everywhere(pmus, name, config, why)) {
        case Encoded::ok:
            return config;
        case Encoded::unknown:
            return std::nullopt;
        case Encoded::needs_umask:
        case Encoded::unprogrammable:
            break;
    }
    throw Error(EINVAL, why);
}

}  // namespace archpmu
