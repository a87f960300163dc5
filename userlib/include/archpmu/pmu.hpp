// SPDX-License-Identifier: MIT
// archpmu: what the module reports about itself and about each CPU's PMU.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace archpmu {

enum class Backend { hw, model, unknown };
enum class CoreType { none, atom, core, unknown };
// What a caller may open (uapi ARCHPMU_PRIVILEGE_*): nothing, counting its own
// tasks in user mode only, or everything (CAP_PERFMON).
enum class Privilege { none, own_user, all };

std::string_view to_string(Backend backend);
// "core", "atom", or "none"/"unknown".
std::string_view to_string(CoreType type);
// ARCHPMU_CORE_TYPE_* (CPUID.1AH:EAX[31:24]) as a CoreType.
CoreType core_type_of(std::uint32_t raw);
// The core type an event is for (ARCHPMU_EVENT_CORE_TYPE in EventSpec::flags, perf's
// cpu_core/.../ and cpu_atom/.../), or nullopt: every CPU.
std::optional<CoreType> event_core_type(std::uint32_t event_flags);
// "off", "own-user" or "all", as the module parameter unprivileged says them.
std::string_view to_string(Privilege privilege);

// Name of architectural event n (bit n of CPUID.0AH:EBX), e.g. "cycles";
// empty for bits past the known events.
std::string_view arch_event_name(unsigned bit);
// Its encoding, event | umask << 8 (C0H/00H: 0x00c0); 0 for bits past the known events.
std::uint32_t arch_event_code(unsigned bit);
// Whether an event select image (its event and umask) encodes an architectural event.
bool is_arch_event_encoding(std::uint64_t config);
inline constexpr unsigned kArchEventCount = 13;

struct Info {
    std::uint32_t abi_version = 0;
    Backend backend = Backend::unknown;
    std::uint64_t capabilities = 0;
    std::uint32_t nr_cpu_ids = 0;
    std::uint32_t nr_cpus_online = 0;
    std::uint32_t nr_cpus_enumerated = 0;
    std::uint32_t max_gp_counters = 0;
    std::uint32_t max_fixed_counters = 0;
    // What the caller may open (ARCHPMU_PRIVILEGE_*): everything, or without
    // CAP_PERFMON what the module's parameter unprivileged allows.
    Privilege privilege = Privilege::all;
};

struct CpuInfo {
    std::uint32_t cpu = 0;
    std::uint32_t version = 0;
    std::uint32_t pmu_flags = 0;
    CoreType core_type = CoreType::none;
    std::uint32_t native_model_id = 0;
    std::uint32_t gp_counters = 0;
    std::uint32_t gp_width = 0;
    std::uint32_t fixed_width = 0;
    std::uint32_t events_len = 0;
    std::uint64_t gp_mask = 0;
    std::uint64_t fixed_mask = 0;
    std::uint64_t events_mask = 0;
    std::uint64_t perf_capabilities = 0;
    std::array<std::uint32_t, 4> cpuid_0a{};
    std::uint32_t cpuid_01_eax = 0;  // the signature (family, model, stepping); 0: not told

    // The family and model of cpuid_01_eax as the SDM displays them (family 0FH adds the
    // extended family; families 06H and 0FH and up the extended model).
    [[nodiscard]] unsigned family() const;
    [[nodiscard]] unsigned model() const;

    [[nodiscard]] bool anythread_deprecated() const;
    [[nodiscard]] bool full_width_write() const;
    // IA32_PERF_METRICS: the top-down metric events (uapi) count here.
    [[nodiscard]] bool perf_metrics() const;
    [[nodiscard]] bool hybrid() const;
    // TSX_FORCE_ABORT microcode: GP counter 3 serves TSX and sessions never get it.
    [[nodiscard]] bool tsx_force_abort() const;
    // Indices of the fixed counters that exist, ascending.
    [[nodiscard]] std::vector<unsigned> fixed_counters() const;
    // Names of the available architectural events, in bit order.
    [[nodiscard]] std::vector<std::string> events() const;
    // The same PMU description, whatever the CPU number.
    [[nodiscard]] bool same_pmu(const CpuInfo& other) const;
};

// CPUs with identical PMU descriptions, in order of their first CPU.
struct PmuGroup {
    CpuInfo pmu;
    std::vector<std::uint32_t> cpus;
};
std::vector<PmuGroup> group_by_pmu(const std::vector<CpuInfo>& cpus);

// "0-3,6" for {0,1,2,3,6}.
std::string format_cpu_list(const std::vector<std::uint32_t>& cpus);
// The highest CPU number a CPU list may name (Linux's largest NR_CPUS is 8192).
inline constexpr std::uint32_t kMaxCpuNumber = 8191;
// {0,1,2,3,6} for "0-3,6": ascending, no repeats. An empty list or item, a number
// above kMaxCpuNumber, a backwards range or a repeat throws archpmu::Error (EINVAL)
// with a message naming the bad text.
std::vector<std::uint32_t> parse_cpu_list(std::string_view text);

}  // namespace archpmu
