// SPDX-License-Identifier: MIT
// A bounded, seeded ioctl fuzzer (perf_fuzzer in spirit): random commands,
// sizes, flags, event configs, CPU lists and pointers on several open files,
// interleaved with start/stop/reset/read/close and injections. It must never
// crash or warn (scripts/vm fails the run on any kernel warning), and once
// every file is closed each CPU's PMU MSRs must be exactly as they were.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <cstring>
#include <map>
#include <random>
#include <vector>

#include "archpmu.h"
#include "archpmu/device.hpp"
#include "archpmu/error.hpp"
#include "harness.hpp"

using namespace archpmu::itest;

namespace {

class Fuzzer {
public:
    explicit Fuzzer(uint32_t seed) : rng_(seed) {}

    void step()
    {
        switch (pick(10)) {
            case 0:
                reopen();
                break;
            case 1:
            case 2:
                count_open();
                break;
            case 3:
                control(pick(3) == 0 ? ARCHPMU_IOC_COUNT_RESET
                        : pick(2)    ? ARCHPMU_IOC_COUNT_START
                                     : ARCHPMU_IOC_COUNT_STOP);
                break;
            case 4:
                count_read();
                break;
            case 5:
                random_command();
                break;
            case 6:
                inject();
                break;
            default:
                info();
                break;
        }
    }

private:
    uint32_t pick(uint32_t n) { return std::uniform_int_distribution<uint32_t>(0, n - 1)(rng_); }
    uint64_t bits() { return rng_() | static_cast<uint64_t>(rng_()) << 32; }
    int fd() { return fds_[pick(fds_.size())].get(); }

    uint64_t random_config()
    {
        static const uint32_t codes[] = {0x00c0, 0x003c, 0x0300, 0x01a4, 0x00c4, 0x00c5,
                                         0x412e, 0x0100, 0x0500, 0x00d1, 0x0000};
        uint64_t c = codes[pick(std::size(codes))];
        if (pick(4) == 0)
            c |= bits() & 0xffffff00ULL;  // random filters and enables
        else if (pick(2))
            c |= (1ULL + pick(3)) << 16;  // a valid USR/OS choice
        if (pick(16) == 0)
            c |= bits();  // anything at all
        return c;
    }

    void reopen() { fds_[pick(fds_.size())].reset(::open("/dev/archpmu", O_RDWR | O_CLOEXEC)); }

    void count_open()
    {
        std::vector<archpmu_event> ev(1 + (pick(4) ? pick(4) : pick(ARCHPMU_MAX_EVENTS + 2)));
        for (auto& e : ev) {
            e.config = random_config();
            e.flags = pick(4) == 0 ? pick(8) : 0;
            e.counter = pick(2) ? pick(9) : (ARCHPMU_COUNTER_FIXED | pick(8));
        }
        std::vector<uint32_t> cpus(pick(3));
        for (std::size_t i = 0; i < cpus.size(); ++i)
            cpus[i] = pick(8) == 0 ? pick(6) : static_cast<uint32_t>(i);
        archpmu_count_open cmd{};
        cmd.size = pick(20) == 0 ? pick(128) : sizeof(cmd);
        cmd.flags = pick(20) == 0 ? 1 : 0;
        cmd.nr_events = static_cast<uint32_t>(ev.size());
        cmd.nr_cpus = static_cast<uint32_t>(cpus.size());
        cmd.events = pick(30) == 0 ? 16 : reinterpret_cast<uintptr_t>(ev.data());
        cmd.cpus = pick(30) == 0 ? 8 : reinterpret_cast<uintptr_t>(cpus.data());
        if (::ioctl(fd(), ARCHPMU_IOC_COUNT_OPEN, &cmd) == 0)
            ++opened;
    }

    void control(unsigned long request)
    {
        archpmu_count_ctl cmd{};
        cmd.size = sizeof(cmd);
        cmd.flags = pick(20) == 0 ? 2 : 0;
        (void)::ioctl(fd(), request, &cmd);
    }

    void count_read()
    {
        std::vector<archpmu_count_value> vals(pick(200));
        archpmu_count_read cmd{};
        cmd.size = sizeof(cmd);
        cmd.nr_values = pick(10) == 0 ? 0xffffffffu : static_cast<uint32_t>(vals.size());
        cmd.values = pick(30) == 0 ? 24 : reinterpret_cast<uintptr_t>(vals.data());
        if (::ioctl(fd(), ARCHPMU_IOC_COUNT_READ, &cmd) == 0)
            ++read_ok;
    }

    void random_command()
    {
        std::array<unsigned char, 512> buf{};
        for (auto& b : buf)
            b = static_cast<unsigned char>(pick(3) == 0 ? rng_() : 0);
        const uint32_t size = pick(2) ? pick(600) : pick(64);
        std::memcpy(buf.data(), &size, sizeof(size));
        const unsigned long cmd = _IO(ARCHPMU_IOC_TYPE, pick(0x20));
        // MODEL_MSR writes could program counters behind the sessions' backs: keep
        // the fuzzer to what a user of the counting ABI can do.
        if (cmd == ARCHPMU_IOC_MODEL_MSR)
            return;
        (void)::ioctl(fd(), cmd, buf.data());
    }

    void inject()
    {
        archpmu_model_inject cmd{};
        cmd.size = sizeof(cmd);
        cmd.flags = 1 + pick(2);
        cmd.cpu = pick(4);
        cmd.event = static_cast<uint32_t>(random_config() & 0xffff);
        cmd.count = bits() >> pick(64);
        (void)::ioctl(fd(), ARCHPMU_IOC_MODEL_INJECT, &cmd);
    }

    void info()
    {
        archpmu_cpu_info cmd{};
        cmd.size = sizeof(cmd);
        cmd.cpu = pick(8);
        (void)::ioctl(fd(), ARCHPMU_IOC_CPU_INFO, &cmd);
    }

    std::mt19937 rng_;
    std::array<archpmu::UniqueFd, 4> fds_{};

public:
    unsigned opened = 0;   // sessions the fuzzer got programmed
    unsigned read_ok = 0;  // snapshots it got back
    void open_all()
    {
        for (auto& f : fds_)
            f.reset(::open("/dev/archpmu", O_RDWR | O_CLOEXEC));
    }
    void close_all()
    {
        for (auto& f : fds_)
            f.reset();
    }
};

}  // namespace

TEST_CASE("fuzzed ioctls neither crash nor leave the PMU changed", "[fuzz]")
{
    const char* configs[] = {
        "backend=model model_version=1 model_gp=2 model_fixed=0",
        "backend=model model_version=4 model_gp_width=16 model_fixed_width=16",
        "backend=model model_version=5 model_gp=8 model_fixed=1 model_fixed_mask=0x5 "
        "model_full_width=1 model_hybrid_cpus=1 model_hybrid_gp=2",
    };
    uint32_t seed = 20261121;
    for (const char* params : configs) {
        CAPTURE(params, seed);
        LoadedModule module(params);
        const archpmu::Device dev;
        std::map<uint32_t, std::map<uint32_t, uint64_t>> before;
        for (unsigned cpu : online_cpus())
            before[cpu] = pmu_msr_snapshot(dev, cpu);

        Fuzzer fuzz(seed++);
        fuzz.open_all();
        for (int i = 0; i < 20000; ++i)
            fuzz.step();
        fuzz.close_all();
        CHECK(fuzz.opened > 50);   // the fuzzer reached programmed sessions...
        CHECK(fuzz.read_ok > 50);  // ...and read them
        report_figure("fuzzed-calls", 20000);
        report_figure("sessions-opened", fuzz.opened);

        // Every register back, GLOBAL_STATUS included (release acknowledges the
        // overflow bits of its own counters).
        for (unsigned cpu : online_cpus()) {
            CAPTURE(cpu);
            CHECK(pmu_msr_snapshot(dev, cpu) == before[cpu]);
        }
    }
}
