// SPDX-License-Identifier: MIT
// Internal: how the library builds and issues archpmu ioctls.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include "archpmu/pmu.hpp"

// Not exported from libarchpmu.so: the library's insides.
#pragma GCC visibility push(hidden)
namespace archpmu::detail {

// An ABI struct, zeroed, with its size field set.
template <typename T>
T zeroed_cmd()
{
    T cmd;
    std::memset(&cmd, 0, sizeof(cmd));
    cmd.size = sizeof(cmd);
    return cmd;
}

// ioctl(fd, request, arg), or throw archpmu::Error with `what` and, when
// given, the hint for the errno. A string is made only for the error: start,
// stop and read call this on every use.
void checked_ioctl(int fd, unsigned long request, void* arg, std::string_view what,
                   const char* (*hint)(int err) = nullptr);

// ARCHPMU_IOC_CPU_INFO on the device file fd (Device::cpu_info's errors).
CpuInfo cpu_info(int fd, std::uint32_t cpu);

}  // namespace archpmu::detail
#pragma GCC visibility pop
