// SPDX-License-Identifier: MIT
// Cross-call rounds: an operation on a session reaches all of its CPUs in one
// round (the module's debugfs counters say how many CPUs and rounds), in each
// of the three modes the benchmark compares the counts stay exact, opening
// takes two rounds and ARCHPMU_COUNT_OPEN_START folds the start into them.
#include <fcntl.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "archpmu.h"
#include "archpmu/device.hpp"
#include "archpmu/error.hpp"
#include "archpmu/session.hpp"
#include "harness.hpp"

using namespace archpmu::itest;
using archpmu::UniqueFd;

namespace {

constexpr const char* kExact = "backend=model model_rate_percent=0 model_version=4";
constexpr const char* kDebugfs = "/sys/kernel/debug/archpmu/";
constexpr uint32_t kInstructions = 0x00c0;
constexpr uint32_t kBranches = 0x00c4;

uint64_t debugfs_value(const std::string& name)
{
    std::ifstream in(kDebugfs + name);
    uint64_t v = 0;
    REQUIRE(in >> v);
    return v;
}

// Writing a mode: true when the module took it.
bool set_mode(const std::string& mode)
{
    std::ofstream out(std::string(kDebugfs) + "cross_call_mode");
    out << mode;
    out.flush();
    return static_cast<bool>(out);
}

struct Calls {
    uint64_t cpus = 0;
    uint64_t rounds = 0;
};

// CPUs reached and rounds made by fn, in the parallel mode. A started session
// also folds once a second, a round of its own over every CPU (these tests'
// sessions are on every CPU): those are not fn's.
template <typename Fn>
Calls calls_of(Fn fn)
{
    const uint64_t nr_cpus = online_cpus().size();
    const uint64_t cpus = debugfs_value("cross_calls");
    const uint64_t rounds = debugfs_value("cross_call_rounds");
    const uint64_t folds = debugfs_value("fold_rounds");
    fn();
    const uint64_t fold = debugfs_value("fold_rounds") - folds;
    return {debugfs_value("cross_calls") - cpus - fold * nr_cpus,
            debugfs_value("cross_call_rounds") - rounds - fold};
}

UniqueFd open_device()
{
    UniqueFd fd(::open("/dev/archpmu", O_RDWR | O_CLOEXEC));
    REQUIRE(fd.valid());
    return fd;
}

// COUNT_OPEN of instructions and branches on every online CPU, as a session file.
int open_session(int dev, uint32_t extra_flags = 0, archpmu_count_open* out = nullptr)
{
    std::vector<archpmu_event> evs = {{kInstructions, 0, 0}, {kBranches, 0, 0}};
    archpmu_count_open op{};
    op.size = sizeof(op);
    op.flags = ARCHPMU_COUNT_OPEN_FD | extra_flags;
    op.nr_events = static_cast<uint32_t>(evs.size());
    op.events = reinterpret_cast<uintptr_t>(evs.data());
    const int fd = ::ioctl(dev, ARCHPMU_IOC_COUNT_OPEN, &op);
    if (out)
        *out = op;
    return fd;
}

int control(int fd, unsigned long request)
{
    archpmu_count_ctl ctl{};
    ctl.size = sizeof(ctl);
    return ::ioctl(fd, request, &ctl) == 0 ? 0 : errno;
}

std::vector<archpmu_count_value> read_all(int fd)
{
    std::vector<archpmu_count_value> vals(256);
    archpmu_count_read rd{};
    rd.size = sizeof(rd);
    rd.nr_values = static_cast<uint32_t>(vals.size());
    rd.values = reinterpret_cast<uintptr_t>(vals.data());
    REQUIRE(::ioctl(fd, ARCHPMU_IOC_COUNT_READ, &rd) == 0);
    vals.resize(rd.nr_values);
    return vals;
}

// The count of event e on cpu in a snapshot.
uint64_t value_of(const std::vector<archpmu_count_value>& vals, uint32_t cpu, uint32_t e)
{
    for (const auto& v : vals)
        if (v.cpu == cpu && v.event == e)
            return v.value;
    FAIL("no value for CPU " << cpu << " event " << e);
    return 0;
}

}  // namespace

TEST_CASE("an operation on every CPU is one round of cross-calls", "[rounds]")
{
    const LoadedModule mod(kExact);
    const auto cpus = online_cpus();
    REQUIRE(cpus.size() >= 2);
    REQUIRE(set_mode("0"));
    const UniqueFd dev = open_device();

    int fd = -1;
    const Calls open = calls_of([&] { fd = open_session(dev.get()); });
    REQUIRE(fd >= 0);
    UniqueFd session(fd);
    // Read every CPU's PMU, then program every CPU: two rounds.
    CHECK(open.rounds == 2);
    CHECK(open.cpus == 2 * cpus.size());

    const Calls read = calls_of([&] { (void)read_all(session.get()); });
    CHECK(read.rounds == 1);
    CHECK(read.cpus == cpus.size());
    const Calls reset =
        calls_of([&] { CHECK(control(session.get(), ARCHPMU_IOC_COUNT_RESET) == 0); });
    CHECK(reset.rounds == 1);
    CHECK(reset.cpus == cpus.size());

    const Calls start =
        calls_of([&] { CHECK(control(session.get(), ARCHPMU_IOC_COUNT_START) == 0); });
    const Calls stop =
        calls_of([&] { CHECK(control(session.get(), ARCHPMU_IOC_COUNT_STOP) == 0); });
    CHECK(start.rounds == 1);
    CHECK(start.cpus == cpus.size());
    CHECK(stop.rounds == 1);

    // Putting every CPU's PMU back is one round too.
    const Calls close = calls_of([&] { session.reset(); });
    CHECK(close.rounds == 1);
    CHECK(close.cpus == cpus.size());
}

TEST_CASE("ARCHPMU_COUNT_OPEN_START opens a started session in two rounds", "[rounds]")
{
    const LoadedModule mod(kExact);
    const auto cpus = online_cpus();
    REQUIRE(set_mode("0"));
    const UniqueFd dev = open_device();
    REQUIRE((archpmu::Device().info().capabilities & ARCHPMU_CAP_OPEN_START) != 0);

    int fd = -1;
    const Calls open = calls_of([&] { fd = open_session(dev.get(), ARCHPMU_COUNT_OPEN_START); });
    REQUIRE(fd >= 0);
    UniqueFd session(fd);
    // Already started: START changes nothing and makes no cross-call.
    const Calls start =
        calls_of([&] { CHECK(control(session.get(), ARCHPMU_IOC_COUNT_START) == 0); });
    CHECK(open.rounds == 2);
    CHECK(start.rounds == 0);

    // Counting without COUNT_START, with time enabled running.
    inject_events(cpus.back(), kBranches, 4321);
    ::usleep(2000);
    const auto vals = read_all(session.get());
    CHECK(value_of(vals, cpus.back(), 1) == 4321);
    for (const auto& v : vals) {
        CHECK(v.time_enabled > 0);
        CHECK(v.time_running == v.time_enabled);
    }
    CHECK(control(session.get(), ARCHPMU_IOC_COUNT_STOP) == 0);
    inject_events(cpus.back(), kBranches, 5);
    CHECK(value_of(read_all(session.get()), cpus.back(), 1) == 4321);

    // The library opens started too.
    archpmu::SessionOptions started;
    started.start_now = true;
    archpmu::Session lib({archpmu::EventSpec{"branches", kBranches, 0, 0, {}, {}}}, started);
    inject_events(cpus.front(), kBranches, 77);
    bool seen = false;
    for (const auto& v : lib.read().values)
        if (v.cpu == cpus.front()) {
            CHECK(v.value == 77);
            seen = true;
        }
    CHECK(seen);
}

TEST_CASE("counts are exact in the parallel, serial and naive modes", "[rounds]")
{
    const LoadedModule mod(kExact);
    const auto cpus = online_cpus();
    const archpmu::Device device;
    std::vector<std::map<uint32_t, uint64_t>> before;
    for (unsigned cpu : cpus)
        before.push_back(pmu_msr_snapshot(device, cpu));

    for (const char* mode : {"0", "1", "2"}) {
        INFO("cross_call_mode " << mode);
        REQUIRE(set_mode(mode));
        const UniqueFd dev = open_device();
        const int fd = open_session(dev.get());
        REQUIRE(fd >= 0);
        UniqueFd session(fd);
        REQUIRE(control(session.get(), ARCHPMU_IOC_COUNT_START) == 0);
        for (unsigned cpu : cpus) {
            inject_events(cpu, kInstructions, 10 + cpu);
            inject_events(cpu, kBranches, 20 + cpu);
        }
        auto vals = read_all(session.get());
        for (unsigned cpu : cpus) {
            CHECK(value_of(vals, cpu, 0) == 10 + cpu);
            CHECK(value_of(vals, cpu, 1) == 20 + cpu);
        }
        REQUIRE(control(session.get(), ARCHPMU_IOC_COUNT_STOP) == 0);
        const Calls read = calls_of([&] { vals = read_all(session.get()); });
        CHECK(value_of(vals, cpus.back(), 1) == 20 + cpus.back());
        if (std::string(mode) == "0")
            CHECK(read.rounds == 1);
        else if (std::string(mode) == "1")
            CHECK(read.rounds == cpus.size());
        else  // one cross-call per MSR access: two counters and an ack per CPU
            CHECK(read.rounds >= 3 * cpus.size());
        CHECK(read.cpus == read.rounds * (std::string(mode) == "0" ? cpus.size() : 1));
    }
    REQUIRE(set_mode("0"));
    for (std::size_t i = 0; i < cpus.size(); ++i)
        CHECK(pmu_msr_snapshot(device, cpus[i]) == before[i]);
}

TEST_CASE("cross_call_mode takes 0, 1 or 2 only", "[rounds]")
{
    const LoadedModule mod(kExact);
    CHECK_FALSE(set_mode("3"));
    CHECK_FALSE(set_mode("-1"));
    CHECK(debugfs_value("cross_call_mode") == 0);
    REQUIRE(set_mode("1"));
    CHECK(debugfs_value("cross_call_mode") == 1);
    REQUIRE(set_mode("0"));
}

TEST_CASE("a refusal on one CPU of a parallel round programs no CPU", "[rounds]")
{
    const LoadedModule mod(kExact);
    const auto cpus = online_cpus();
    REQUIRE(cpus.size() >= 2);
    REQUIRE(set_mode("0"));
    const archpmu::Device device;
    // Another agent's counter on the last CPU: EN set in IA32_PERFEVTSEL0.
    const unsigned busy = cpus.back();
    model_write_msr(device, busy, 0x186, ARCHPMU_EVTSEL_EN | kInstructions);
    std::vector<std::map<uint32_t, uint64_t>> before;
    for (unsigned cpu : cpus)
        before.push_back(pmu_msr_snapshot(device, cpu));

    const UniqueFd dev = open_device();
    std::vector<archpmu_event> evs = {{kInstructions, ARCHPMU_EVENT_GP_ONLY, 0}};
    archpmu_count_open op{};
    op.size = sizeof(op);
    op.flags = ARCHPMU_COUNT_OPEN_FD;
    op.nr_events = 1;
    op.events = reinterpret_cast<uintptr_t>(evs.data());
    CHECK(::ioctl(dev.get(), ARCHPMU_IOC_COUNT_OPEN, &op) == -1);
    CHECK(errno == EBUSY);
    CHECK(op.bad_cpu == busy);
    CHECK(op.busy_holder == ARCHPMU_HOLDER_AGENT);
    for (std::size_t i = 0; i < cpus.size(); ++i)
        CHECK(pmu_msr_snapshot(device, cpus[i]) == before[i]);
    model_write_msr(device, busy, 0x186, 0);
}

TEST_CASE("a round reaches a sparse CPU list and skips an offline CPU", "[rounds][hotplug]")
{
    const LoadedModule mod(kExact);
    const auto cpus = online_cpus();
    REQUIRE(cpus.size() >= 2);
    REQUIRE(set_mode("0"));
    const UniqueFd dev = open_device();

    // Only the last CPU, read from CPU 0: the calling CPU is not in the round.
    cpu_set_t was;
    REQUIRE(::sched_getaffinity(0, sizeof(was), &was) == 0);
    cpu_set_t on0;
    CPU_ZERO(&on0);
    CPU_SET(0, &on0);
    REQUIRE(::sched_setaffinity(0, sizeof(on0), &on0) == 0);
    std::vector<archpmu_event> evs = {{kBranches, 0, 0}};
    uint32_t last = cpus.back();
    archpmu_count_open op{};
    op.size = sizeof(op);
    op.flags = ARCHPMU_COUNT_OPEN_FD;
    op.nr_events = 1;
    op.events = reinterpret_cast<uintptr_t>(evs.data());
    op.nr_cpus = 1;
    op.cpus = reinterpret_cast<uintptr_t>(&last);
    const int fd = ::ioctl(dev.get(), ARCHPMU_IOC_COUNT_OPEN, &op);
    REQUIRE(fd >= 0);
    {
        UniqueFd session(fd);
        REQUIRE(control(session.get(), ARCHPMU_IOC_COUNT_START) == 0);
        inject_events(last, kBranches, 99);
        inject_events(0, kBranches, 5);  // not the session's CPU
        REQUIRE(control(session.get(), ARCHPMU_IOC_COUNT_STOP) == 0);
        std::vector<archpmu_count_value> vals;
        const Calls read = calls_of([&] { vals = read_all(session.get()); });
        CHECK(read.rounds == 1);
        CHECK(read.cpus == 1);
        REQUIRE(vals.size() == 1);
        CHECK(vals[0].cpu == last);
        CHECK(vals[0].value == 99);
    }
    REQUIRE(::sched_setaffinity(0, sizeof(was), &was) == 0);

    // Every CPU, then CPU 1 offline: the round reaches the others only.
    const std::string online = "/sys/devices/system/cpu/cpu1/online";
    REQUIRE(path_exists(online));
    const int all = open_session(dev.get());
    REQUIRE(all >= 0);
    UniqueFd session(all);
    write_file(online, "0");
    std::vector<archpmu_count_value> vals;
    const Calls read = calls_of([&] { vals = read_all(session.get()); });
    write_file(online, "1");
    CHECK(read.rounds == 1);
    CHECK(read.cpus == cpus.size() - 1);
    for (const auto& v : vals)
        CHECK(((v.flags & ARCHPMU_VALUE_OFFLINE) != 0) == (v.cpu == 1));
}

TEST_CASE("a #GP part-way through a programming round leaves every CPU as found", "[rounds]")
{
    const LoadedModule mod(kExact);
    const auto cpus = online_cpus();
    REQUIRE(set_mode("0"));
    const archpmu::Device device;
    std::vector<std::map<uint32_t, uint64_t>> before;
    for (unsigned cpu : cpus)
        before.push_back(pmu_msr_snapshot(device, cpu));
    const UniqueFd dev = open_device();

    // The n-th model WRMSR raises #GP, for n = 1, 2, ... until an open makes
    // fewer writes than n: every write of the programming round fails once,
    // on whichever CPU makes it, while the other CPUs program in parallel.
    unsigned failed = 0;
    for (unsigned n = 1; n < 200; ++n) {
        INFO("the write that fails: " << n);
        {
            std::ofstream out(std::string(kDebugfs) + "fail_model_wrmsr_nth");
            out << n;
        }
        archpmu_count_open op{};
        const int fd = open_session(dev.get(), 0, &op);
        const int err = fd < 0 ? errno : 0;
        if (fd >= 0) {
            // Fewer writes than n: the countdown is still running. Stopped
            // before the close, whose writes must all succeed.
            CHECK(debugfs_value("fail_model_wrmsr_nth") > 0);
            std::ofstream(std::string(kDebugfs) + "fail_model_wrmsr_nth") << 0;
            ::close(fd);
            break;
        }
        ++failed;
        CHECK(err == EIO);
        CHECK(std::find(cpus.begin(), cpus.end(), op.bad_cpu) != cpus.end());
        CHECK(op.nr_cpus_opened == 0);
        for (std::size_t i = 0; i < cpus.size(); ++i)
            CHECK(pmu_msr_snapshot(device, cpus[i]) == before[i]);
    }
    CHECK(debugfs_value("fail_model_wrmsr_nth") == 0);
    CHECK(failed >= 3 * cpus.size());
    report_figure("programming-writes-failed", failed);

    // Nothing is left claimed: the same events open, count exactly and go.
    const int fd = open_session(dev.get());
    REQUIRE(fd >= 0);
    UniqueFd session(fd);
    REQUIRE(control(session.get(), ARCHPMU_IOC_COUNT_START) == 0);
    inject_events(cpus.back(), kInstructions, 31);
    CHECK(value_of(read_all(session.get()), cpus.back(), 0) == 31);
    session.reset();
    for (std::size_t i = 0; i < cpus.size(); ++i)
        CHECK(pmu_msr_snapshot(device, cpus[i]) == before[i]);
}
