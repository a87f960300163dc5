// SPDX-License-Identifier: MIT
// archpmu: an open /dev/archpmu.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "archpmu/pmu.hpp"
#include "archpmu/unique_fd.hpp"

namespace archpmu {

inline constexpr const char* kDefaultDevicePath = "/dev/archpmu";

// One architectural PMU register as a CPU holds it (ARCHPMU_IOC_REGS).
struct Register {
    std::uint32_t msr = 0;
    std::uint64_t value = 0;
};

// Opens the device read-write; throws archpmu::Error whose message says what to do.
UniqueFd open_device_file(const std::string& path);

// True while an unload of the module is asked for (/sys/class/misc/archpmu/unloading
// is 1): new sessions are refused, and a long-lived program should close its sessions
// and wait for the module to be back. False without the module.
bool module_unloading();

// Owns one open file of the device; move-only. Every method throws
// archpmu::Error on failure.
class Device {
public:
    explicit Device(const std::string& path = kDefaultDevicePath);

    [[nodiscard]] Info info() const;
    [[nodiscard]] CpuInfo cpu_info(std::uint32_t cpu) const;
    // Every online, enumerated CPU, ascending.
    [[nodiscard]] std::vector<CpuInfo> all_cpu_info() const;

    // Every architectural PMU register of `cpu`, read there (read-only; CAP_PERFMON).
    [[nodiscard]] std::vector<Register> registers(std::uint32_t cpu) const;

    [[nodiscard]] int fd() const noexcept { return fd_.get(); }
    [[nodiscard]] const std::string& path() const noexcept { return path_; }

private:
    std::string path_;
    UniqueFd fd_;
};

}  // namespace archpmu
