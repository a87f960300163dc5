// SPDX-License-Identifier: MIT
// Fault injection (debug kernel only: CONFIG_FAILSLAB, /proc/thread-self/fail-nth):
// the n-th slab allocation of this thread fails, for every n on the COUNT_OPEN
// and module-load paths; the CPU-online path, which runs in the cpuhp/N thread,
// through the module's own fault attribute. Each failure must return ENOMEM
// cleanly, program nothing and leave nothing behind; the VM runner's kmemleak
// scan after the suite catches any leak.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "archpmu.h"
#include "archpmu/device.hpp"
#include "archpmu/events.hpp"
#include "archpmu/session.hpp"
#include "archpmu/unique_fd.hpp"
#include "harness.hpp"

using namespace archpmu::itest;

namespace {

constexpr const char* kDev = "/dev/archpmu";
constexpr const char* kFailNth = "/proc/thread-self/fail-nth";
constexpr const char* kFailslab = "/sys/kernel/debug/failslab";

bool fault_injection_available()
{
    return path_exists(kFailNth) && path_exists(kFailslab);
}

// failslab skips sleeping allocations by default: GFP_KERNEL is what the module uses.
void arm_failslab()
{
    write_file(std::string(kFailslab) + "/ignore-gfp-wait", "N");
    write_file(std::string(kFailslab) + "/verbose", "0");
}

// This thread's fail-nth, opened once: opening a file allocates, so the
// count is set and read through an fd that is already open.
class FailNth {
public:
    FailNth() : fd_(::open(kFailNth, O_RDWR | O_CLOEXEC)) { REQUIRE(fd_.valid()); }

    void set(unsigned n) const
    {
        const std::string text = std::to_string(n);
        REQUIRE(::pwrite(fd_.get(), text.data(), text.size(), 0) ==
                static_cast<ssize_t>(text.size()));
    }

    // What is left of the count: 0 once the failure was injected.
    [[nodiscard]] unsigned left() const
    {
        char buf[32] = {};
        REQUIRE(::pread(fd_.get(), buf, sizeof(buf) - 1, 0) > 0);
        return static_cast<unsigned>(std::strtoul(buf, nullptr, 10));
    }

private:
    archpmu::UniqueFd fd_;
};

// The module's image in memory: init_module() then reads no file, so no
// injected failure lands in the 9p client that serves the guest's root.
std::vector<char> module_image()
{
    const char* env = std::getenv("ARCHPMU_KO");
    std::ifstream in(env ? env : ARCHPMU_KO_DEFAULT, std::ios::binary);
    REQUIRE(in);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int init_module_image(const std::vector<char>& image, const std::string& params)
{
    return ::syscall(SYS_init_module, image.data(), image.size(), params.c_str()) == 0 ? 0 : errno;
}

std::map<unsigned, std::map<uint32_t, uint64_t>> snapshot_all()
{
    archpmu::Device dev;
    std::map<unsigned, std::map<uint32_t, uint64_t>> all;
    for (unsigned cpu : online_cpus())
        all[cpu] = pmu_msr_snapshot(dev, cpu);
    return all;
}

}  // namespace

TEST_CASE("every allocation of COUNT_OPEN fails once: ENOMEM, nothing programmed or kept",
          "[fault-injection][counting]")
{
    // tests/vm_suite.sh runs these on the debug kernel only.
    REQUIRE(fault_injection_available());
    LoadedModule module("backend=model model_rate_percent=0");
    arm_failslab();
    const FailNth fail_nth;
    const auto before = snapshot_all();
    const auto cpus_online = online_cpus();
    archpmu_event evs[2] = {{0x00c0, 0, 0}, {0x00c4, 0, 0}};
    uint32_t cpus[2] = {cpus_online.front(), cpus_online.back()};
    const auto open_op = [&] {
        archpmu_count_open op{};
        op.size = sizeof(op);
        op.nr_events = 2;
        op.events = reinterpret_cast<uintptr_t>(evs);
        op.nr_cpus = 2;
        op.cpus = reinterpret_cast<uintptr_t>(cpus);
        return op;
    };
    // One sweep over n = 1, 2, ... until an open makes fewer than n allocations.
    // The debug kernel's own bookkeeping also allocates in between: kmemleak
    // after each of ours (absorbed: it falls back on its pool), and the
    // debug-objects pool now and then, as frees of earlier tests drain it.
    // When such a refill comes in at n+1 but not at n, the sweep steps over
    // one of ours. An open without injection just before each injected one
    // tops the pools up, and up to eight sweeps run until one fails each of ours.
    const auto sweep = [&](bool& clean_run) {
        unsigned enomem = 0;
        clean_run = false;
        for (unsigned n = 1; n < 400; ++n) {
            CAPTURE(n);
            {
                archpmu::UniqueFd warm(::open(kDev, O_RDWR | O_CLOEXEC));
                archpmu_count_open op = open_op();
                const archpmu::UniqueFd session(::ioctl(warm.get(), ARCHPMU_IOC_COUNT_OPEN, &op));
                REQUIRE(session.valid());
            }
            archpmu::UniqueFd fd(::open(kDev, O_RDWR | O_CLOEXEC));
            REQUIRE(fd.valid());
            archpmu_count_open op = open_op();
            const auto lowest_free_fd = [&] { return archpmu::UniqueFd(::dup(fd.get())).get(); };
            const int free_before = lowest_free_fd();
            fail_nth.set(n);
            const int ret = ::ioctl(fd.get(), ARCHPMU_IOC_COUNT_OPEN, &op);
            const int err = ret >= 0 ? 0 : errno;
            const unsigned left = fail_nth.left();
            fail_nth.set(0);
            const archpmu::UniqueFd session(ret);
            if (left != 0) {  // fewer allocations than n: nothing was failed
                clean_run = true;
                CHECK(err == 0);
                break;
            }
            // A failure in the kernel's own bookkeeping is absorbed: the open succeeds.
            CHECK((err == 0 || err == ENOMEM));
            if (err != ENOMEM)
                continue;
            ++enomem;
            CHECK(snapshot_all() == before);
            CHECK(lowest_free_fd() == free_before);  // no session file either
        }
        return enomem;
    };
    unsigned enomem = 0;
    bool clean_run = false;
    for (int pass = 0; pass < 8 && enomem < 5; ++pass)
        enomem = std::max(enomem, sweep(clean_run));
    CHECK(clean_run);
    // The session, the CPU list copy, the values, the session fd's dentry and
    // file. (The per-CPU claims are kvcalloc'd: a failed kmalloc falls back on
    // vmalloc, so failslab alone never fails them.)
    CHECK(enomem >= 5);
    report_figure("fault-injected-failures", enomem);
    CHECK(snapshot_all() == before);
}

TEST_CASE("every allocation of the module's load fails once: ENOMEM, nothing left loaded",
          "[fault-injection][lifecycle]")
{
    // tests/vm_suite.sh runs these on the debug kernel only.
    REQUIRE(fault_injection_available());
    if (module_loaded())
        unload_module();
    arm_failslab();
    const FailNth fail_nth;
    const auto image = module_image();
    const std::string params = "backend=model model_rate_percent=0";
    // How many allocations a load makes, the loader's own included.
    constexpr unsigned kBig = 1000000;
    fail_nth.set(kBig);
    const int first = init_module_image(image, params);
    const unsigned total = kBig - fail_nth.left();
    fail_nth.set(0);
    REQUIRE(first == 0);
    REQUIRE(unload_module() == 0);
    // archpmu_init() and what follows it are the last allocations of a load.
    constexpr unsigned kWindow = 120;
    unsigned enomem = 0;
    for (unsigned n = total > kWindow ? total - kWindow : 1; n <= total; ++n) {
        CAPTURE(n, total);
        fail_nth.set(n);
        const int err = init_module_image(image, params);
        fail_nth.set(0);
        CHECK((err == 0 || err == ENOMEM));
        if (err == 0) {
            CHECK(unload_module() == 0);
        } else {
            ++enomem;
            CHECK_FALSE(module_loaded());
            CHECK_FALSE(path_exists("/dev/archpmu"));
        }
    }
    CHECK(enomem > 0);
    report_figure("fault-injected-failures", enomem);
    // And a load after all that works.
    LoadedModule module(params);
    CHECK(path_exists("/dev/archpmu"));
}

TEST_CASE("a failed CPU online leaves the CPU offline, the sessions intact and nothing behind",
          "[fault-injection][hotplug]")
{
    const std::string attr = "/sys/kernel/debug/archpmu/fail_cpu_online";
    const auto cpus = online_cpus();
    REQUIRE(cpus.size() >= 2);
    LoadedModule module("backend=model model_rate_percent=0 model_version=4");
    // The module's own fault attribute: fail-nth cannot reach the cpuhp/N thread.
    REQUIRE(path_exists(attr));
    const unsigned last = cpus.back();
    const std::string online = "/sys/devices/system/cpu/cpu" + std::to_string(last) + "/online";
    archpmu::Session s(archpmu::parse_event_list("instructions,branches@gp"), on_cpus({0, last}));
    s.start();
    inject_events(last, 0x00c0, 10);
    write_file(online, "0");
    constexpr int kFailures = 5;
    for (int i = 0; i < kFailures; ++i) {
        CAPTURE(i);
        write_file(attr + "/verbose", "0");
        write_file(attr + "/probability", "100");
        write_file(attr + "/times", "1");
        std::ofstream up(online);
        up << "1";
        up.close();
        CHECK_FALSE(up);                  // the online step failed...
        CHECK(read_file(online) == "0");  // ...and the CPU is still offline
        CHECK_FALSE(path_exists("/sys/devices/system/cpu/cpu" + std::to_string(last) + "/archpmu"));
    }
    write_file(attr + "/probability", "0");
    write_file(online, "1");
    inject_events(last, 0x00c0, 10);
    s.stop();
    const auto snap = s.read();
    REQUIRE(snap.values.size() == 4);
    CHECK(snap.values[2].value == 20);  // counts kept through the failures, counting resumed
    CHECK_FALSE(snap.values[2].offline);
    report_figure("fault-injected-failures", kFailures);
}
