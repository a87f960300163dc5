// SPDX-License-Identifier: MIT
// Loading, refusing and unloading: backend selection, bad parameters,
// repeated load/unload cycles, CPU hotplug.
#include <fcntl.h>
#include <linux/capability.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <cerrno>
#include <functional>

#include "archpmu.h"
#include "archpmu/device.hpp"
#include "archpmu/error.hpp"
#include "harness.hpp"

using namespace archpmu::itest;

TEST_CASE("backend=auto and backend=hw refuse a CPU without a PMU, saying why", "[lifecycle]")
{
    if (module_loaded())
        unload_module();
    for (const char* backend : {"", "backend=auto", "backend=hw"}) {
        CAPTURE(backend);
        KernelLog log;
        CHECK(load_module(backend) == ENODEV);
        CHECK_FALSE(module_loaded());
        const auto lines = log.grep("no usable architectural PMU");
        REQUIRE(lines.size() == 1);
        CHECK_THAT(lines[0], Catch::Contains("CPUID.0AH reports PMU version 0"));
        CHECK_THAT(lines[0], Catch::Contains("backend=model"));
    }
}

TEST_CASE("bad parameters are refused with EINVAL and a line naming the parameter", "[lifecycle]")
{
    if (module_loaded())
        unload_module();
    struct Case {
        const char* params;
        const char* says;
    };
    const Case cases[] = {
        {"backend=magic", "backend=magic is not valid"},
        {"backend=model model_version=7", "model_version=7 is out of range"},
        {"backend=model model_version=0", "model_version=0 is out of range"},
        {"backend=model model_gp=17", "model_gp=17 is out of range"},
        {"backend=model model_gp=9", "more than 8 GP counters need model_version 6"},
        {"backend=model model_version=5 model_hybrid_cpus=1 model_hybrid_gp=10",
         "more than 8 GP counters need model_version 6"},
        {"backend=model model_gp=0", "model_gp=0 is out of range"},
        {"backend=model model_gp_width=65", "model_gp_width=65 is out of range"},
        {"backend=model model_fixed=8", "model_fixed=8 is out of range"},
        {"backend=model model_fixed_mask=0x80 model_version=5",
         "model_fixed_mask=0x80 is out of range (allowed: 0-127)"},
        {"backend=model model_fixed_mask=0x5 model_version=4", "needs model_version 5"},
        {"backend=model model_events_len=14", "model_events_len=14 is out of range"},
        {"backend=model model_hybrid_cpus=x", "is not a CPU list"},
        // Values past the parameter's type once failed with ERANGE and no line of ours.
        {"backend=model model_hybrid_cpus=99", "model_hybrid_cpus=99 names a CPU out of range"},
        {"backend=model model_version=4294967297",
         "model_version=4294967297 is out of range (allowed: 1-6)"},
        {"backend=model model_events_unavail=4294967296",
         "model_events_unavail=4294967296 is out of range (allowed: 0-4294967295)"},
        {"backend=model model_perf_caps=18446744073709551616",
         "model_perf_caps=18446744073709551616 is out of range"},
        {"backend=model model_gp=four", "model_gp='four' is not a number (allowed: 1-16)"},
        {"backend=model model_rate_percent=1001",
         "model_rate_percent=1001 is out of range (allowed: 0-1000)"},
        {"backend=model model_cpuid=garbage", "is not LEAF.SUB=EAX:EBX:ECX:EDX"},
        {"backend=model model_cpuid=b.0=1:2:3:4", "leaf b.0 is not modelled"},
        {"backend=model model_cpuid=a.0=7300404:0:0:603 model_cpuid_hybrid=a.0=1:0:0:0",
         "model_cpuid_hybrid needs model_hybrid_cpus"},
        {"backend=model model_hybrid_perf_caps=0",
         "model_hybrid_perf_caps needs model_hybrid_cpus"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.params);
        KernelLog log;
        CHECK(load_module(c.params) == EINVAL);
        CHECK_FALSE(module_loaded());
        CHECK(log.grep(c.says).size() == 1);
    }
}

TEST_CASE("50 load/unload cycles, each used", "[lifecycle]")
{
    if (module_loaded())
        unload_module();
    for (int i = 0; i < 50; ++i) {
        CAPTURE(i);
        const std::string params = i % 2 ? "backend=model model_version=5 model_fixed_mask=0x5"
                                         : "backend=model model_hybrid_cpus=1 model_hybrid_gp=2";
        REQUIRE(load_module(params) == 0);
        {
            const archpmu::Device dev;
            CHECK(dev.info().nr_cpus_enumerated == online_cpus().size());
            CHECK(dev.cpu_info(1).gp_counters == (i % 2 ? 4u : 2u));
        }
        REQUIRE(unload_module() == 0);
    }
    report_figure("load-unload-cycles", 50);
    CHECK_FALSE(path_exists("/dev/archpmu"));
    CHECK_FALSE(path_exists("/sys/devices/system/cpu/cpu0/archpmu"));
}

TEST_CASE("unloading prints one line; an open device keeps the module", "[lifecycle]")
{
    if (module_loaded())
        unload_module();
    KernelLog log;
    REQUIRE(load_module("backend=model") == 0);
    {
        const archpmu::Device dev;
        CHECK(unload_module() == EWOULDBLOCK);
        CHECK(module_loaded());
    }
    REQUIRE(unload_module() == 0);
    CHECK(log.grep("archpmu: unloaded").size() == 1);
}

TEST_CASE("unloading=1 refuses new sessions, keeps open ones, and is root's to set", "[lifecycle]")
{
    LoadedModule module("backend=model");
    const std::string unloading = "/sys/class/misc/archpmu/unloading";
    KernelLog log;
    CHECK(read_file(unloading) == "0");
    CHECK_FALSE(archpmu::module_unloading());
    archpmu::Session open_before("instructions", on_cpus({0}));
    write_file(unloading, "1");
    CHECK(read_file(unloading) == "1");
    CHECK(archpmu::module_unloading());
    std::string why;
    CHECK(open_errno("instructions", on_cpus({0}), &why) == ENODEV);
    CHECK_THAT(why, Catch::Contains("the archpmu module is being unloaded"));
    CHECK(log.grep("refused: the module is being unloaded").size() == 1);
    open_before.stop();  // the sessions already open are theirs to close
    {
        const archpmu::UniqueFd fd(::open(unloading.c_str(), O_WRONLY | O_CLOEXEC));
        REQUIRE(fd.valid());
        CHECK(::write(fd.get(), "maybe", 5) == -1);
        CHECK(errno == EINVAL);
    }
    CHECK(read_file(unloading) == "1");
    write_file(unloading, "0");
    CHECK(open_errno("instructions", on_cpus({1})) == 0);
    // CAP_SYS_ADMIN's alone: not a user with CAP_PERFMON (the file's mode), nor root
    // without CAP_SYS_ADMIN (the module's check).
    const auto child_status = [](const std::function<int()>& body) {
        const pid_t child = ::fork();
        if (child == 0)
            ::_exit(body());
        int status = -1;
        ::waitpid(child, &status, 0);
        return status;
    };
    CHECK(child_status([&] {
              if (!become_nobody_with_perfmon())
                  return 2;
              return ::open(unloading.c_str(), O_WRONLY) == -1 && errno == EACCES ? 0 : 1;
          }) == 0);
    CHECK(child_status([&] {
              __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
              std::array<__user_cap_data_struct, 2> caps{};
              if (::syscall(SYS_capget, &hdr, caps.data()) != 0)
                  return 2;
              caps[0].effective &= ~(1U << CAP_SYS_ADMIN);
              if (::syscall(SYS_capset, &hdr, caps.data()) != 0)
                  return 2;
              const int fd = ::open(unloading.c_str(), O_WRONLY);
              return fd >= 0 && ::write(fd, "1", 1) == -1 && errno == EPERM ? 0 : 1;
          }) == 0);
    CHECK(read_file(unloading) == "0");
}

TEST_CASE("a CPU going offline and back online is enumerated again", "[lifecycle][hotplug]")
{
    const std::string online = "/sys/devices/system/cpu/cpu1/online";
    REQUIRE(path_exists(online));
    LoadedModule module("backend=model model_hybrid_cpus=1 model_hybrid_gp=3");
    const archpmu::Device dev;
    CHECK(dev.cpu_info(1).gp_counters == 3);

    write_file(online, "0");
    CHECK_FALSE(path_exists("/sys/devices/system/cpu/cpu1/archpmu"));
    try {
        (void)dev.cpu_info(1);
        FAIL("CPU 1 is offline, yet CPU_INFO succeeded");
    } catch (const archpmu::Error& e) {
        CHECK(e.code().value() == ENODEV);
    }
    CHECK(dev.info().nr_cpus_enumerated == online_cpus().size());

    write_file(online, "1");
    CHECK(dev.cpu_info(1).gp_counters == 3);
    CHECK(cpu_sysfs(1, "gp_counters") == "3");
    CHECK(cpu_sysfs(1, "core_type") == "atom");
}

// Hidden (run only by tests/vm_runner_selftest.sh): a kernel warning during a
// test case must be reported against that test case.
TEST_CASE("the listener names the test case that made the kernel warn", "[.][kmsg-selftest]")
{
    write_file("/dev/kmsg", "WARNING: CPU: 0 PID: 1 at itest-selftest fake_warning\n");
    CHECK(true);
}
