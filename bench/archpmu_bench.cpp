// SPDX-License-Identifier: MIT
// archpmu_bench: what batching and parallel cross-call rounds buy, measured in one
// run (as root, module loaded, msr module loaded for the comparison):
//  (a) programming K counters on every CPU (open + start) in the module's three
//      cross-call modes (debugfs cross_call_mode): parallel, one round of cross-calls
//      for all CPUs per step; serial, one cross-call per CPU after another; naive,
//      one cross-call per MSR access, the wrmsr_on_cpu() way. Also parallel with
//      ARCHPMU_COUNT_OPEN_START, which folds the start into the programming.
//  (b) one snapshot of every counter on every CPU: COUNT_READ (parallel, serial) vs.
//      pread of the same registers through /dev/cpu/N/msr (LIKWID's and PCM's path)
//      vs. a null ioctl;
//  (c) the same for the local CPU only;
//  (d) archpmu::Counter on the calling thread: its start, stop and read, each beside
//      perf's PERF_EVENT_IOC_ENABLE, _DISABLE and read() of a group of the same
//      events on a perf_event fd (hardware events, else the task-clock software
//      event where perf has no PMU, as in the VM) and a null ioctl.
// Prints a Markdown table (medians over many runs) and each goal's ratio.
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "archpmu.h"
#include "archpmu/counter.hpp"
#include "archpmu/device.hpp"
#include "archpmu/error.hpp"
#include "archpmu/events.hpp"
#include "archpmu/session.hpp"
#include "archpmu/unique_fd.hpp"

namespace {

const char* kDebugfs = "/sys/kernel/debug/archpmu/";
constexpr int kRuns = 200;

// The median time of each operation, the operations done in turn `runs` times.
std::vector<double> median_each_us(int runs, const std::vector<std::function<void()>>& ops)
{
    std::vector<std::vector<double>> t(ops.size());
    for (int i = 0; i < runs; ++i)
        for (std::size_t k = 0; k < ops.size(); ++k) {
            const auto a = std::chrono::steady_clock::now();
            ops[k]();
            const auto b = std::chrono::steady_clock::now();
            t[k].push_back(std::chrono::duration<double, std::micro>(b - a).count());
        }
    std::vector<double> out;
    for (auto& v : t) {
        std::sort(v.begin(), v.end());
        out.push_back(v[v.size() / 2]);
    }
    return out;
}

double median_us(int runs, const std::function<void()>& fn)
{
    return median_each_us(runs, {fn})[0];
}

std::uint64_t debugfs_value(const char* name)
{
    std::ifstream in(std::string(kDebugfs) + name);
    std::uint64_t v = 0;
    in >> v;
    return v;
}

enum class Mode { parallel = 0, serial = 1, naive = 2 };

void set_mode(Mode mode)
{
    std::ofstream out(std::string(kDebugfs) + "cross_call_mode");
    out << static_cast<int>(mode);
}

// Cross-calls (CPUs reached) and rounds that fn made, and its median time.
struct Figure {
    double calls = 0;
    double rounds = 0;
    double us = 0;
};

Figure measure(int runs, const std::function<void()>& fn)
{
    Figure f;
    const std::uint64_t calls = debugfs_value("cross_calls");
    const std::uint64_t rounds = debugfs_value("cross_call_rounds");
    f.us = median_us(runs, fn);
    f.calls = static_cast<double>(debugfs_value("cross_calls") - calls) / runs;
    f.rounds = static_cast<double>(debugfs_value("cross_call_rounds") - rounds) / runs;
    return f;
}

void row(const std::string& what, const char* how, const Figure& f, bool counted = true)
{
    if (counted)
        std::printf("| %-42s | %-40s | %6.0f | %6.0f | %9.1f |\n", what.c_str(), how, f.calls,
                    f.rounds, f.us);
    else
        std::printf("| %-42s | %-40s | %6s | %6s | %9.1f |\n", what.c_str(), how, "-", "-", f.us);
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

// A perf_event group of the calling thread: instructions, cycles, branches where
// perf has the PMU, else task-clock three times. `what` says which.
std::vector<archpmu::UniqueFd> perf_group(std::string& what)
{
    const auto open_one = [](std::uint32_t type, std::uint64_t config, int group) {
        perf_event_attr a{};
        a.size = sizeof(a);
        a.type = type;
        a.config = config;
        a.disabled = group < 0 ? 1 : 0;
        a.exclude_kernel = 1;
        a.read_format = PERF_FORMAT_GROUP;
        return archpmu::UniqueFd(
            static_cast<int>(::syscall(SYS_perf_event_open, &a, 0, -1, group, 0)));
    };
    std::vector<archpmu::UniqueFd> fds;
    const std::uint64_t hw[] = {PERF_COUNT_HW_INSTRUCTIONS, PERF_COUNT_HW_CPU_CYCLES,
                                PERF_COUNT_HW_BRANCH_INSTRUCTIONS};
    for (std::uint64_t c : hw) {
        fds.push_back(open_one(PERF_TYPE_HARDWARE, c, fds.empty() ? -1 : fds[0].get()));
        if (!fds.back().valid()) {
            fds.clear();
            break;
        }
    }
    what = "perf_event, 3 hardware events";
    if (fds.empty()) {
        for (int i = 0; i < 3; ++i)
            fds.push_back(open_one(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK,
                                   fds.empty() ? -1 : fds[0].get()));
        what = "perf_event, 3 task-clocks (no PMU)";
    }
    return fds;
}

void goal(const char* what, double ratio, double target)
{
    std::printf("goal: %-58s %7.1fx (goal %.1fx%s)\n", what, ratio, target,
                ratio >= target ? ", met" : ", not met");
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
        std::printf("| %-42s | %-40s | %6s | %6s | %9s |\n", "operation", "method", "calls",
                    "rounds", "median us");
        std::printf("|%s|%s|%s|%s|%s|\n", std::string(44, '-').c_str(),
                    std::string(42, '-').c_str(), std::string(8, '-').c_str(),
                    std::string(8, '-').c_str(), std::string(11, '-').c_str());

        // (a) programming K counters on every CPU: open + start.
        struct ModeRow {
            Mode mode;
            bool start_now;
            const char* how;
        };
        const ModeRow modes[] = {
            {Mode::parallel, false, "parallel: one round per step"},
            {Mode::parallel, true, "parallel, started by the open"},
            {Mode::serial, false, "serial: one cross-call per CPU"},
            {Mode::naive, false, "naive: one cross-call per MSR"},
        };
        std::vector<std::pair<unsigned, double>> a_ratio;
        for (unsigned k : {1u, 4u, 7u}) {
            double parallel_us = 0, naive_us = 0;
            for (const auto& m : modes) {
                set_mode(m.mode);
                const Figure f = measure(kRuns / 4, [&] {
                    archpmu::SessionOptions so;
                    so.start_now = m.start_now;
                    archpmu::Session s(k_events(k), so);
                    if (!m.start_now)
                        s.start();
                    // The release at the end of the scope is timed too.
                });
                if (m.mode == Mode::parallel && !m.start_now)
                    parallel_us = f.us;
                if (m.mode == Mode::naive)
                    naive_us = f.us;
                row("(a) " + std::to_string(k) + " counters on all CPUs: open, start, close", m.how,
                    f);
            }
            a_ratio.emplace_back(k, naive_us / parallel_us);
        }
        set_mode(Mode::parallel);

        // (b) and (c): snapshots.
        const archpmu::UniqueFd null_fd(::open(archpmu::kDefaultDevicePath, O_RDWR));
        double b_ratio = 0, c_ratio = 0;
        for (bool local : {false, true}) {
            if (local) {
                cpu_set_t set;
                CPU_ZERO(&set);
                CPU_SET(0, &set);
                sched_setaffinity(0, sizeof(set), &set);
            }
            const std::vector<std::uint32_t> cpus = local ? std::vector<std::uint32_t>{0} : all;
            archpmu::SessionOptions so;
            so.cpus = local ? cpus : std::vector<std::uint32_t>{};
            so.start_now = true;
            archpmu::Session s(k_events(7), so);
            const std::string what = local ? "(c) snapshot of 7 counters, local CPU"
                                           : "(b) snapshot of 7 counters on all CPUs";
            double parallel_us = 0;
            for (Mode mode : {Mode::parallel, Mode::serial}) {
                if (local && mode == Mode::serial)
                    continue;  // one CPU: the same call
                set_mode(mode);
                const Figure f = measure(kRuns, [&] { (void)s.read(); });
                if (mode == Mode::parallel)
                    parallel_us = f.us;
                row(what, mode == Mode::parallel ? "COUNT_READ, parallel" : "COUNT_READ, serial",
                    f);
            }
            set_mode(Mode::parallel);
            const auto msrs = counter_msrs(s);
            const double msr_us = msr_driver_snapshot_us(cpus, msrs);
            Figure msr;
            msr.us = msr_us;
            msr.calls = static_cast<double>(cpus.size() * msrs.size());
            msr.rounds = msr.calls;
            if (msr_us >= 0)
                row(what, "/dev/cpu/N/msr, one pread per MSR", msr);
            else
                row(what, "/dev/cpu/N/msr (modprobe msr first)", msr, false);
            Figure null;
            null.us = null_ioctl_us(null_fd.get());
            row(what, "null ioctl (the syscall floor)", null);
            if (local)
                c_ratio = parallel_us / null.us;
            else if (msr_us > 0)
                b_ratio = msr_us / parallel_us;
        }
        // (d) a Counter on the calling thread, beside perf's own. perf first, then
        // closed: archpmu and perf do not share the PMU.
        {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(0, &set);
            sched_setaffinity(0, sizeof(set), &set);
        }
        const double null_us = null_ioctl_us(null_fd.get());
        std::string perf_what;
        std::vector<double> perf_us;
        {
            auto group = perf_group(perf_what);
            if (!group.empty() && group[0].valid()) {
                const int lead = group[0].get();
                std::uint64_t buf[8];
                perf_us = median_each_us(
                    kRuns * 5,
                    {
                        [&] { (void)::ioctl(lead, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP); },
                        [&] { (void)::ioctl(lead, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP); },
                        [&] { (void)::read(lead, buf, sizeof(buf)); },
                    });
            }
        }
        archpmu::Counter counter{"instructions,cycles,branches"};
        std::uint64_t sink = 0;
        const auto ours =
            median_each_us(kRuns * 5, {
                                          [&] { counter.start(); },
                                          [&] { counter.stop(); },
                                          [&] { sink += counter.read().get("instructions"); },
                                      });
        const char* ops[] = {"start", "stop", "read"};
        double worst = 0;
        for (std::size_t i = 0; i < 3; ++i) {
            Figure f;
            f.us = ours[i];
            row(std::string("(d) 3 events of this thread: ") + ops[i], "archpmu::Counter", f,
                false);
            worst = std::max(worst, ours[i] / null_us);
            if (!perf_us.empty()) {
                f.us = perf_us[i];
                row(std::string("(d) 3 events of this thread: ") + ops[i], perf_what.c_str(), f,
                    false);
            }
        }
        Figure null;
        null.us = null_us;
        row("(d) 3 events of this thread", "null ioctl (the syscall floor)", null, false);
        (void)sink;

        std::printf("\n");
        for (const auto& [k, ratio] : a_ratio) {
            const std::string what =
                "(a) " + std::to_string(k) + " counters: naive time / parallel";
            goal(what.c_str(), ratio, k);
        }
        goal("(b) /dev/cpu/N/msr time / COUNT_READ", b_ratio, 20);
        std::printf("goal: %-58s %7.1fx (goal: within 1.5x on hardware)\n",
                    "(c) local COUNT_READ / null ioctl", c_ratio);
        std::printf("goal: %-58s %7.1fx (goal: at most 2x%s)\n",
                    "(d) Counter's slowest of start, stop, read / null ioctl", worst,
                    worst <= 2 ? ", met" : ", not met");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "archpmu_bench: %s\n", e.what());
        return 1;
    }
    return 0;
}
