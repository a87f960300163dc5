// SPDX-License-Identifier: MIT
// archpmu_bench: what batching buys, measured in one run (as root, module loaded,
// msr module loaded for the comparison):
//  (a) cross-calls and wall time to program K counters on all CPUs: archpmu's one
//      cross-call per CPU vs. the naive one cross-call per register (the module's
//      debugfs switch, the wrmsr_on_cpu() way);
//  (b) one snapshot of all counters on all CPUs: ARCHPMU_IOC_COUNT_READ vs. pread
//      of the same registers through /dev/cpu/N/msr (LIKWID's and PCM's path) vs. a
//      null ioctl;
//  (c) the same for the local CPU only.
// Prints a table; the figures are medians over many runs.
#include <fcntl.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "archpmu.h"
#include "archpmu/device.hpp"
#include "archpmu/error.hpp"
#include "archpmu/events.hpp"
#include "archpmu/session.hpp"
#include "archpmu/unique_fd.hpp"

namespace {

const char* kDebugfs = "/sys/kernel/debug/archpmu/";
constexpr int kRuns = 200;

double median_us(int runs, const std::function<void()>& fn)
{
    std::vector<double> t;
    t.reserve(static_cast<std::size_t>(runs));
    for (int i = 0; i < runs; ++i) {
        const auto a = std::chrono::steady_clock::now();
        fn();
        const auto b = std::chrono::steady_clock::now();
        t.push_back(std::chrono::duration<double, std::micro>(b - a).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

std::uint64_t cross_calls()
{
    std::ifstream in(std::string(kDebugfs) + "cross_calls");
    std::uint64_t v = 0;
    in >> v;
    return v;
}

void set_naive(bool on)
{
    std::ofstream out(std::string(kDebugfs) + "naive_cross_calls");
    out << (on ? "1" : "0");
}

void row(const char* what, const char* how, double calls, double us)
{
    if (calls < 0)
        std::printf("| %-44s | %-34s | %11s | %10.1f |\n", what, how, "-", us);
    else
        std::printf("| %-44s | %-34s | %11.0f | %10.1f |\n", what, how, calls, us);
}

// The K counters' events: fixed counters first, then GP counters.
std::vector<archpmu::EventSpec> k_events(unsigned k)
{
    const char* names[] = {"instructions",  "cycles",           "ref-cycles",  "branches",
                           "branch-misses", "cache-references", "cache-misses"};
    std::vector<archpmu::EventSpec> out;
    for (unsigned i = 0; i < k && i < 7; ++i)
        out.push_back(archpmu::parse_event(names[i]));
    return out;
}

// The MSRs a snapshot of the session's counters reads on one CPU.
std::vector<std::uint32_t> counter_msrs(const archpmu::Session& s)
{
    std::vector<std::uint32_t> msrs;
    for (std::uint32_t c : s.counters())
        msrs.push_back((c & ARCHPMU_COUNTER_FIXED) ? 0x309 + (c & 0xff) : 0xc1 + c);
    return msrs;
}

double msr_driver_snapshot_us(const std::vector<std::uint32_t>& cpus,
                              const std::vector<std::uint32_t>& msrs)
{
    std::vector<archpmu::UniqueFd> fds;
    for (std::uint32_t cpu : cpus) {
        fds.emplace_back(::open(("/dev/cpu/" + std::to_string(cpu) + "/msr").c_str(), O_RDONLY));
        if (!fds.back().valid())
            return -1;
    }
    return median_us(kRuns, [&] {
        for (const auto& fd : fds)
            for (std::uint32_t m : msrs) {
                std::uint64_t v = 0;
                (void)::pread(fd.get(), &v, sizeof(v), m);
            }
    });
}

double null_ioctl_us(int fd)
{
    return median_us(kRuns * 10, [&] { (void)::ioctl(fd, _IO(ARCHPMU_IOC_TYPE, 0x7f), nullptr); });
}

}  // namespace

int main()
{
    try {
        const archpmu::Device dev;
        const auto cpus_info = dev.all_cpu_info();
        std::vector<std::uint32_t> all;
        for (const auto& c : cpus_info)
            all.push_back(c.cpu);
        std::printf("archpmu_bench: %zu CPUs, backend %s\n\n", all.size(),
                    dev.info().backend == archpmu::Backend::hw ? "hw" : "model");
        std::printf("| %-44s | %-34s | %11s | %10s |\n", "operation", "method", "cross-calls",
                    "median us");
        std::printf("|%s|%s|%s|%s|\n", std::string(46, '-').c_str(), std::string(36, '-').c_str(),
                    std::string(13, '-').c_str(), std::string(12, '-').c_str());

        // (a) programming K counters on every CPU: open + start.
        for (unsigned k : {1u, 4u, 7u}) {
            for (bool naive : {false, true}) {
                set_naive(naive);
                std::uint64_t calls = 0;
                const double us = median_us(kRuns / 4, [&] {
                    const std::uint64_t before = cross_calls();
                    archpmu::Session s(archpmu::kDefaultDevicePath, k_events(k));
                    s.start();
                    calls = cross_calls() - before;
                });
                const std::string what =
                    "(a) program " + std::to_string(k) + " counters on all CPUs";
                row(what.c_str(),
                    naive ? "one cross-call per MSR (naive)" : "archpmu: one cross-call per CPU",
                    static_cast<double>(calls), us);
            }
        }
        set_naive(false);

        // (b) and (c): snapshots.
        const archpmu::UniqueFd null_fd(::open(archpmu::kDefaultDevicePath, O_RDWR));
        for (bool local : {false, true}) {
            if (local) {
                cpu_set_t set;
                CPU_ZERO(&set);
                CPU_SET(0, &set);
                sched_setaffinity(0, sizeof(set), &set);
            }
            const std::vector<std::uint32_t> cpus = local ? std::vector<std::uint32_t>{0} : all;
            archpmu::Session s(archpmu::kDefaultDevicePath, k_events(7),
                               local ? cpus : std::vector<std::uint32_t>{});
            s.start();
            const std::uint64_t before = cross_calls();
            const double read_us = median_us(kRuns, [&] { (void)s.read(); });
            const double calls =
                static_cast<double>(cross_calls() - before) / static_cast<double>(kRuns);
            const char* what = local ? "(c) snapshot of 7 counters, local CPU"
                                     : "(b) snapshot of 7 counters on all CPUs";
            row(what, "archpmu: one COUNT_READ ioctl", calls, read_us);
            const double msr_us = msr_driver_snapshot_us(cpus, counter_msrs(s));
            if (msr_us >= 0)
                row(what, "/dev/cpu/N/msr, one pread per MSR",
                    static_cast<double>(cpus.size() * counter_msrs(s).size()), msr_us);
            else
                row(what, "/dev/cpu/N/msr (modprobe msr first)", -1, 0);
            row(what, "null ioctl (the syscall floor)", 0, null_ioctl_us(null_fd.get()));
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "archpmu_bench: %s\n", e.what());
        return 1;
    }
    return 0;
}
