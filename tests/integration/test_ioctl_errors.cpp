// SPDX-License-Identifier: MIT
// Every bad ioctl input gets its own exact errno; output-only fields are
// poisoned with 0xcc beforehand so an unwritten field shows.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <vector>

#include "archpmu.h"
#include "archpmu/unique_fd.hpp"
#include "archpmu_test.h"
#include "harness.hpp"

using namespace archpmu::itest;

namespace {

int do_ioctl(int fd, unsigned long cmd, void* arg)
{
    return ::ioctl(fd, cmd, arg) == 0 ? 0 : errno;
}

archpmu_info poisoned_info()
{
    archpmu_info i;
    std::memset(&i, 0xcc, sizeof(i));
    i.size = sizeof(i);
    i.flags = 0;
    std::memset(i.__reserved, 0, sizeof(i.__reserved));
    return i;
}

archpmu_cpu_info poisoned_cpu_info(uint32_t cpu)
{
    archpmu_cpu_info c;
    std::memset(&c, 0xcc, sizeof(c));
    c.size = sizeof(c);
    c.flags = 0;
    c.cpu = cpu;
    c.__reserved0 = 0;
    std::memset(c.__reserved, 0, sizeof(c.__reserved));
    return c;
}

archpmu::UniqueFd open_device()
{
    archpmu::UniqueFd fd(::open("/dev/archpmu", O_RDWR | O_CLOEXEC));
    REQUIRE(fd.valid());
    return fd;
}

}  // namespace

TEST_CASE("ARCHPMU_IOC_INFO: good input fills every field", "[ioctl]")
{
    LoadedModule module("backend=model");
    const auto fd = open_device();
    auto i = poisoned_info();
    REQUIRE(do_ioctl(fd.get(), ARCHPMU_IOC_INFO, &i) == 0);
    CHECK(i.size == sizeof(i));
    CHECK(i.abi_version == ARCHPMU_ABI_VERSION);
    CHECK(i.backend == ARCHPMU_BACKEND_MODEL);
    CHECK(i.capabilities ==
          (ARCHPMU_CAP_INFO | ARCHPMU_CAP_CPU_INFO | ARCHPMU_CAP_MODEL_MSR | ARCHPMU_CAP_COUNT |
           ARCHPMU_CAP_MODEL_INJECT | ARCHPMU_CAP_SESSION_FD | ARCHPMU_CAP_OPEN_START |
           ARCHPMU_CAP_SAMPLE | ARCHPMU_CAP_REGS | ARCHPMU_CAP_NETLINK | ARCHPMU_CAP_TASK |
           ARCHPMU_CAP_ENABLE_ON_EXEC | ARCHPMU_CAP_MULTIPLEX | ARCHPMU_CAP_COUNTER_MASK |
           ARCHPMU_CAP_UNPRIVILEGED | ARCHPMU_CAP_TASK_SAMPLE | ARCHPMU_CAP_CALLCHAIN |
           ARCHPMU_CAP_USER_STACK | ARCHPMU_CAP_PERF_METRICS | ARCHPMU_CAP_CORE_TYPE |
           ARCHPMU_CAP_CORE_TYPE_SAMPLE | ARCHPMU_CAP_READ_SUM));
    CHECK(i.nr_cpu_ids >= online_cpus().size());
    CHECK(i.nr_cpus_online == online_cpus().size());
    CHECK(i.nr_cpus_enumerated == online_cpus().size());
    CHECK(i.max_gp_counters == 16);
    CHECK(i.max_fixed_counters == 7);
    CHECK(i.privilege == ARCHPMU_PRIVILEGE_ALL);  // root; the poison is overwritten
    for (auto r : i.__reserved)
        CHECK(r == 0);
}

TEST_CASE("ARCHPMU_IOC_INFO: each bad input has its errno", "[ioctl]")
{
    LoadedModule module("backend=model");
    const auto fd = open_device();

    SECTION("size 0")
    {
        auto i = poisoned_info();
        i.size = 0;
        CHECK(do_ioctl(fd.get(), ARCHPMU_IOC_INFO, &i) == EINVAL);
    }
    SECTION("size one byte short")
    {
        auto i = poisoned_info();
        i.size = sizeof(i) - 1;
        CHECK(do_ioctl(fd.get(), ARCHPMU_IOC_INFO, &i) == EINVAL);
    }
    SECTION("oversized with a zero tail is accepted, the tail left alone")
    {
        std::vector<unsigned char> buf(sizeof(archpmu_info) + 64, 0);
        auto i = poisoned_info();
        i.size = static_cast<uint32_t>(buf.size());
        std::memcpy(buf.data(), &i, sizeof(i));
        REQUIRE(do_ioctl(fd.get(), ARCHPMU_IOC_INFO, buf.data()) == 0);
        std::memcpy(&i, buf.data(), sizeof(i));
        CHECK(i.abi_version == ARCHPMU_ABI_VERSION);
        for (std::size_t k = sizeof(i); k < buf.size(); ++k)
            CHECK(buf[k] == 0);
    }
    SECTION("oversized with a non-zero tail")
    {
        std::vector<unsigned char> buf(sizeof(archpmu_info) + 64, 0);
        auto i = poisoned_info();
        i.size = static_cast<uint32_t>(buf.size());
        std::memcpy(buf.data(), &i, sizeof(i));
        buf.back() = 1;
        CHECK(do_ioctl(fd.get(), ARCHPMU_IOC_INFO, buf.data()) == E2BIG);
    }
    SECTION("larger than a page")
    {
        std::vector<unsigned char> buf(8192, 0);
        auto i = poisoned_info();
        i.size = static_cast<uint32_t>(buf.size());
        std::memcpy(buf.data(), &i, sizeof(i));
        CHECK(do_ioctl(fd.get(), ARCHPMU_IOC_INFO, buf.data()) == E2BIG);
    }
    SECTION("non-zero flags")
    {
        auto i = poisoned_info();
        i.flags = 1;
        CHECK(do_ioctl(fd.get(), ARCHPMU_IOC_INFO, &i) == EINVAL);
    }
    SECTION("non-zero reserved array")
    {
        auto i = poisoned_info();
        i.__reserved[3] = 1ULL << 63;
        CHECK(do_ioctl(fd.get(), ARCHPMU_IOC_INFO, &i) == EINVAL);
    }
    SECTION("bad pointer")
    {
        CHECK(do_ioctl(fd.get(), ARCHPMU_IOC_INFO, nullptr) == EFAULT);
    }
}

TEST_CASE("unknown commands return ENOTTY", "[ioctl]")
{
    LoadedModule module("backend=model");
    const auto fd = open_device();
    auto i = poisoned_info();
    CHECK(do_ioctl(fd.get(), _IO(ARCHPMU_IOC_TYPE, 0x03), &i) == ENOTTY);
    CHECK(do_ioctl(fd.get(), _IO(ARCHPMU_IOC_TYPE, 0x7f), &i) == ENOTTY);
    CHECK(do_ioctl(fd.get(), _IO('X', 0x00), &i) == ENOTTY);
    CHECK(do_ioctl(fd.get(), _IOWR(ARCHPMU_IOC_TYPE, 0x00, archpmu_info), &i) == ENOTTY);
}

TEST_CASE("ARCHPMU_IOC_CPU_INFO: each bad input has its errno", "[ioctl]")
{
    LoadedModule module("backend=model");
    const auto fd = open_device();
    archpmu_info info = poisoned_info();
    REQUIRE(do_ioctl(fd.get(), ARCHPMU_IOC_INFO, &info) == 0);

    SECTION("good input fills every field")
    {
        auto c = poisoned_cpu_info(0);
        REQUIRE(do_ioctl(fd.get(), ARCHPMU_IOC_CPU_INFO, &c) == 0);
        CHECK(c.cpu == 0);
        CHECK(c.version == 4);
        CHECK(c.nr_gp == 4);
        CHECK(c.gp_width == 48);
        CHECK(c.nr_fixed == 3);
        CHECK(c.fixed_width == 48);
        CHECK(c.events_len == 7);
        CHECK(c.gp_mask == 0xf);
        CHECK(c.fixed_mask == 0x7);
        CHECK(c.events_mask == 0x7f);
        CHECK(c.pmu_flags == 0);
        CHECK(c.core_type == 0);
        CHECK(c.native_model_id == 0);
        CHECK(c.perf_capabilities == 0);
        CHECK(c.cpuid_0a[0] == 0x07300404);
        CHECK(c.cpuid_0a[1] == 0);
        CHECK(c.cpuid_0a[2] == 0);
        CHECK(c.cpuid_0a[3] == 0x603);
        CHECK(c.cpuid_01_eax == 0x506e3);  // the model's Skylake
    }
    SECTION("CPU number equal to nr_cpu_ids")
    {
        auto c = poisoned_cpu_info(info.nr_cpu_ids);
        CHECK(do_ioctl(fd.get(), ARCHPMU_IOC_CPU_INFO, &c) == ENXIO);
    }
    SECTION("CPU number 0xffffffff")
    {
        auto c = poisoned_cpu_info(0xffffffffu);
        CHECK(do_ioctl(fd.get(), ARCHPMU_IOC_CPU_INFO, &c) == ENXIO);
    }
    SECTION("non-zero flags")
    {
        auto c = poisoned_cpu_info(0);
        c.flags = 0x80000000u;
        CHECK(do_ioctl(fd.get(), ARCHPMU_IOC_CPU_INFO, &c) == EINVAL);
    }
    SECTION("non-zero reserved")
    {
        auto c = poisoned_cpu_info(0);
        c.__reserved[0] = 1;
        CHECK(do_ioctl(fd.get(), ARCHPMU_IOC_CPU_INFO, &c) == EINVAL);
    }
    SECTION("size short of the first layout")
    {
        auto c = poisoned_cpu_info(0);
        c.size = offsetof(archpmu_cpu_info, __reserved);
        CHECK(do_ioctl(fd.get(), ARCHPMU_IOC_CPU_INFO, &c) == EINVAL);
    }
}

TEST_CASE("ARCHPMU_IOC_MODEL_MSR: each bad input has its errno", "[ioctl][model-msr]")
{
    LoadedModule module("backend=model");
    const auto fd = open_device();
    auto msr = [](uint32_t flags, uint32_t cpu, uint32_t index, uint64_t value) {
        archpmu_model_msr m{};
        m.size = sizeof(m);
        m.flags = flags;
        m.cpu = cpu;
        m.msr = index;
        m.value = value;
        return m;
    };

    auto read_ok = msr(0, 0, 0x38f, 0xcccccccc);
    REQUIRE(do_ioctl(fd.get(), ARCHPMU_IOC_MODEL_MSR, &read_ok) == 0);
    CHECK(read_ok.value == 0xf);

    auto bad_flags = msr(2, 0, 0x38f, 0);
    CHECK(do_ioctl(fd.get(), ARCHPMU_IOC_MODEL_MSR, &bad_flags) == EINVAL);
    auto bad_cpu = msr(0, 0xffffffffu, 0x38f, 0);
    CHECK(do_ioctl(fd.get(), ARCHPMU_IOC_MODEL_MSR, &bad_cpu) == ENXIO);
    auto not_pmu = msr(ARCHPMU_MODEL_MSR_WRITE, 0, 0x10, 0);  // IA32_TIME_STAMP_COUNTER
    CHECK(do_ioctl(fd.get(), ARCHPMU_IOC_MODEL_MSR, &not_pmu) == EACCES);
    auto misc_enable = msr(ARCHPMU_MODEL_MSR_WRITE, 0, 0x1a0, 0);
    CHECK(do_ioctl(fd.get(), ARCHPMU_IOC_MODEL_MSR, &misc_enable) == EACCES);
    auto gp = msr(ARCHPMU_MODEL_MSR_WRITE, 0, 0x38e, 1);  // GLOBAL_STATUS is read-only
    CHECK(do_ioctl(fd.get(), ARCHPMU_IOC_MODEL_MSR, &gp) == EIO);

    SECTION("without CAP_SYS_ADMIN")
    {
        const pid_t child = ::fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            // Drop to nobody: every capability goes with uid 0.
            if (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0)
                ::_exit(100);
            auto m = msr(0, 0, 0x38f, 0);
            const int err = ::ioctl(fd.get(), ARCHPMU_IOC_MODEL_MSR, &m) == 0 ? 0 : errno;
            archpmu_info i{};
            i.size = sizeof(i);
            const int info_err = ::ioctl(fd.get(), ARCHPMU_IOC_INFO, &i) == 0 ? 0 : errno;
            ::_exit(err == EPERM && info_err == 0 ? 0 : 101);
        }
        int status = 0;
        REQUIRE(::waitpid(child, &status, 0) == child);
        REQUIRE(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);  // EPERM for the MSR, enumeration still open
    }
}

TEST_CASE("the device node is root-only by default", "[ioctl]")
{
    LoadedModule module("backend=model");
    CHECK(read_file("/sys/class/misc/archpmu/dev").find(':') != std::string::npos);
    struct stat st {};
    REQUIRE(::stat("/dev/archpmu", &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
}
