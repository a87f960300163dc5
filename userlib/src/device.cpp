// SPDX-License-Identifier: MIT
#include "archpmu/device.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "archpmu.h"

#include <cerrno>

#include "archpmu/error.hpp"
#include "ioctl_cmd.hpp"

namespace archpmu {

void detail::checked_ioctl(int fd, unsigned long request, void* arg, std::string_view what,
                           const char* (*hint)(int err))
{
    if (::ioctl(fd, request, arg) != 0) {
        const int err = errno;
        std::string message(what);
        if (hint)
            message += hint(err);
        throw Error(err, message);
    }
}

namespace {

using detail::checked_ioctl;
using detail::zeroed_cmd;

std::string open_hint(int err)
{
    switch (err) {
        case ENOENT:
        case ENXIO:
        case ENODEV:
            return " (is the module loaded? insmod module/archpmu.ko, or backend=model without an "
                   "Intel PMU)";
        case EACCES:
        case EPERM:
            return " (the device is root-only by default: run as root, or install "
                   "udev/99-archpmu.rules and join the archpmu group)";
        default:
            return {};
    }
}

const char* info_hint(int err)
{
    return err == ENOTTY ? " (not an archpmu device?)" : "";
}

const char* cpu_hint(int err)
{
    return err == ENXIO ? " (no such CPU number)" : err == ENODEV ? " (the CPU is offline)" : "";
}

}  // namespace

UniqueFd open_device_file(const std::string& path)
{
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
    if (!fd.valid()) {
        const int err = errno;
        throw Error(err, "cannot open " + path + open_hint(err));
    }
    return fd;
}

Device::Device(const std::string& path) : path_(path), fd_(open_device_file(path)) {}

Info Device::info() const
{
    auto cmd = zeroed_cmd<archpmu_info>();
    checked_ioctl(fd_.get(), ARCHPMU_IOC_INFO, &cmd, "ARCHPMU_IOC_INFO on " + path_, info_hint);
    Info out;
    out.abi_version = cmd.abi_version;
    out.backend = cmd.backend == ARCHPMU_BACKEND_HW      ? Backend::hw
                  : cmd.backend == ARCHPMU_BACKEND_MODEL ? Backend::model
                                                         : Backend::unknown;
    out.capabilities = cmd.capabilities;
    out.nr_cpu_ids = cmd.nr_cpu_ids;
    out.nr_cpus_online = cmd.nr_cpus_online;
    out.nr_cpus_enumerated = cmd.nr_cpus_enumerated;
    out.max_gp_counters = cmd.max_gp_counters;
    out.max_fixed_counters = cmd.max_fixed_counters;
    // Modules before ARCHPMU_CAP_UNPRIVILEGED asked CAP_PERFMON for everything.
    if (cmd.capabilities & ARCHPMU_CAP_UNPRIVILEGED)
        out.privilege = cmd.privilege == ARCHPMU_PRIVILEGE_NONE       ? Privilege::none
                        : cmd.privilege == ARCHPMU_PRIVILEGE_OWN_USER ? Privilege::own_user
                                                                      : Privilege::all;
    return out;
}

CpuInfo detail::cpu_info(int fd, std::uint32_t cpu)
{
    auto cmd = zeroed_cmd<archpmu_cpu_info>();
    cmd.cpu = cpu;
    checked_ioctl(fd, ARCHPMU_IOC_CPU_INFO, &cmd,
                  "ARCHPMU_IOC_CPU_INFO for CPU " + std::to_string(cpu), cpu_hint);
    CpuInfo out;
    out.cpu = cmd.cpu;
    out.version = cmd.version;
    out.pmu_flags = cmd.pmu_flags;
    out.core_type = core_type_of(cmd.core_type);
    out.native_model_id = cmd.native_model_id;
    out.gp_counters = cmd.nr_gp;
    out.gp_width = cmd.gp_width;
    out.fixed_width = cmd.fixed_width;
    out.events_len = cmd.events_len;
    out.gp_mask = cmd.gp_mask;
    out.fixed_mask = cmd.fixed_mask;
    out.events_mask = cmd.events_mask;
    out.perf_capabilities = cmd.perf_capabilities;
    for (std::size_t i = 0; i < out.cpuid_0a.size(); ++i)
        out.cpuid_0a[i] = cmd.cpuid_0a[i];
    out.cpuid_01_eax = cmd.cpuid_01_eax;
    return out;
}

CpuInfo Device::cpu_info(std::uint32_t cpu) const
{
    return detail::cpu_info(fd_.get(), cpu);
}

std::vector<CpuInfo> Device::all_cpu_info() const
{
    const Info i = info();
    std::vector<CpuInfo> out;
    for (std::uint32_t cpu = 0; cpu < i.nr_cpu_ids; ++cpu) {
        try {
            out.push_back(cpu_info(cpu));
        } catch (const Error& e) {
            if (e.code().value() != ENODEV)
                throw;
        }
    }
    return out;
}

std::vector<Register> Device::registers(std::uint32_t cpu) const
{
    std::vector<archpmu_reg> raw(ARCHPMU_REGS_MAX);
    auto cmd = zeroed_cmd<archpmu_regs_read>();
    cmd.cpu = cpu;
    cmd.nr_regs = static_cast<std::uint32_t>(raw.size());
    cmd.regs = reinterpret_cast<std::uintptr_t>(raw.data());
    checked_ioctl(fd_.get(), ARCHPMU_IOC_REGS, &cmd,
                  "ARCHPMU_IOC_REGS for CPU " + std::to_string(cpu), cpu_hint);
    std::vector<Register> out;
    for (std::uint32_t i = 0; i < cmd.nr_regs && i < raw.size(); ++i)
        out.push_back({raw[i].msr, raw[i].value});
    return out;
}

bool module_unloading()
{
    const UniqueFd fd(::open("/sys/class/misc/archpmu/unloading", O_RDONLY | O_CLOEXEC));
    char c = '0';
    return fd.valid() && ::read(fd.get(), &c, 1) == 1 && c == '1';
}

}  // namespace archpmu
