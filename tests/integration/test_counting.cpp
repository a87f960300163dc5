// SPDX-License-Identifier: MIT
// Counting sessions on the model: time-driven counts, exact injected counts,
// USR/OS filters, wraps, v1 EN-bit control, refusals, sharing, release and
// hotplug.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "archpmu.h"
#include "archpmu/device.hpp"
#include "archpmu/error.hpp"
#include "archpmu/events.hpp"
#include "archpmu/session.hpp"
#include "archpmu_test.h"
#include "harness.hpp"

using namespace archpmu::itest;
using archpmu::Session;
using json = nlohmann::json;

namespace {

constexpr const char* kDev = "/dev/archpmu";
// Only injected events count: every value below is exact.
constexpr const char* kExact = "backend=model model_rate_percent=0 ";

void inject(unsigned cpu, uint32_t code, uint64_t count, bool user = true)
{
    REQUIRE_NOTHROW(inject_events(cpu, code, count, user));
}

std::vector<archpmu::EventSpec> events(const std::string& list)
{
    return archpmu::parse_event_list(list);
}

// value[cpu][event]
std::map<uint32_t, std::vector<uint64_t>> values(const Session& s)
{
    std::map<uint32_t, std::vector<uint64_t>> out;
    for (const auto& v : s.read().values)
        out[v.cpu].push_back(v.value);
    return out;
}

int open_errno(const std::string& params_events, const std::vector<uint32_t>& cpus = {})
{
    try {
        Session s(events(params_events), on_cpus(cpus));
        return 0;
    } catch (const archpmu::Error& e) {
        return e.code().value();
    }
}

void busy_user_loop_on(unsigned cpu, std::chrono::milliseconds how_long)
{
    const pid_t child = spinner_on(cpu, how_long);
    int status = 0;
    ::waitpid(child, &status, 0);
}

}  // namespace

TEST_CASE("model counts are monotonic and proportional to time", "[counting]")
{
    LoadedModule module("backend=model");
    Session s(events("cycles,instructions,branches"));
    CHECK(archpmu::counter_name(s.counters()[0]) == "fixed1");
    CHECK(archpmu::counter_name(s.counters()[1]) == "fixed0");
    CHECK(archpmu::counter_name(s.counters()[2]) == "gp0");
    s.start();
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    const auto first = s.read();
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    const auto second = s.read();
    s.stop();
    REQUIRE(first.values.size() == second.values.size());
    for (std::size_t i = 0; i < first.values.size(); ++i) {
        const auto& a = first.values[i];
        const auto& b = second.values[i];
        CAPTURE(a.cpu, a.event);
        CHECK(b.value > a.value);
        CHECK(b.time_enabled_ns > a.time_enabled_ns);
        CHECK(b.time_running_ns == b.time_enabled_ns);
        // 3000 cycles, 2000 instructions, 400 branches per microsecond.
        const uint64_t per_us[] = {3000, 2000, 400};
        const double rate =
            static_cast<double>(b.value) / (static_cast<double>(b.time_enabled_ns) / 1000.0);
        CHECK(rate == Approx(per_us[a.event]).epsilon(0.1));
    }
    // Stopped: the counts stay.
    const auto stopped = s.read();
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    const auto later = s.read();
    for (std::size_t i = 0; i < later.values.size(); ++i)
        CHECK(later.values[i].value == stopped.values[i].value);
}

TEST_CASE("USR and OS filters split the counts by the interrupted mode", "[counting]")
{
    LoadedModule module("backend=model");
    Session s(events("instructions:u,instructions:k,instructions@gp"), on_cpus({1}));
    s.start();
    busy_user_loop_on(1, std::chrono::milliseconds(300));
    s.stop();
    const auto v = values(s)[1];
    CHECK(v[0] > 0);  // user time from the busy loop
    CHECK(v[1] > 0);  // kernel time: the tick also lands in the kernel
    CHECK(static_cast<double>(v[0] + v[1]) == Approx(static_cast<double>(v[2])).epsilon(0.02));
}

TEST_CASE("injected events count exactly, on fixed and GP counters alike", "[counting]")
{
    LoadedModule module(std::string(kExact) + "model_version=4");
    // Experiment 15-11: fixed counter 0 and a GP counter with C0H/00H agree.
    Session s(events("instructions,instructions@gp,r00c0,instructions:k"), on_cpus({0, 1}));
    CHECK(archpmu::counter_name(s.counters()[0]) == "fixed0");
    s.start();
    inject(0, 0x00c0, 1000);
    inject(1, 0x00c0, 7, false);
    inject(0, 0x00c4, 5);  // another event: counted by none of them
    s.stop();
    auto v = values(s);
    CHECK(v[0] == std::vector<uint64_t>{1000, 1000, 1000, 0});
    CHECK(v[1] == std::vector<uint64_t>{7, 7, 7, 7});

    inject(0, 0x00c0, 50);  // stopped: nothing counts
    CHECK(values(s)[0][0] == 1000);
    s.reset();
    CHECK(values(s)[0] == std::vector<uint64_t>{0, 0, 0, 0});
}

TEST_CASE("CMASK, INV and edge filter each cycle as the SDM defines", "[counting]")
{
    LoadedModule module(std::string(kExact) + "model_version=4");
    Session s(events("cpu/event=0xc0,cmask=2/,cpu/event=0xc0,cmask=2,inv/,"
                     "cpu/event=0xc0,edge/"),
              on_cpus({0}));
    s.start();
    inject(0, 0x00c0, 1);  // below CMASK: only INV counts; edge sees an assertion
    inject(0, 0x00c0, 3);  // reaches CMASK: the cycle counts once
    inject(0, 0x00c0, 2);
    s.stop();
    CHECK(values(s)[0] == std::vector<uint64_t>{2, 1, 3});
}

TEST_CASE("EQ compares with CMASK for equality where leaf 23H enumerates it", "[counting]")
{
    // Arrow Lake's P-cores (CPU 0) enumerate UMASK2 and EQ: CPUID.(23H,0):EBX = 3.
    LoadedModule module(std::string(kExact) + dump_params("GenuineIntel00C0662_ArrowLake_07.txt"));
    // A second unit mask makes another event: not instructions retired, and never
    // on the fixed counter of instructions.
    Session s(events("cpu/event=0xc0,cmask=2,eq/,cpu/event=0xc0,cmask=2,eq,inv/,"
                     "cpu/event=0xc0,cmask=2/,cpu/event=0xc0,umask2=1/,instructions"),
              on_cpus({0}));
    s.start();
    inject(0, 0x00c0, 1);  // neither equal nor reaching: only EQ+INV counts
    inject(0, 0x00c0, 3);  // reaches CMASK without equalling it
    inject(0, 0x00c0, 2);  // equals it: counted by EQ and by the plain CMASK
    s.stop();
    CHECK(values(s)[0] == std::vector<uint64_t>{1, 2, 2, 0, 6});
    for (const auto& v : s.read().values)
        if (v.event == 3)
            CHECK((v.counter & ARCHPMU_COUNTER_FIXED) == 0);
    CHECK(open_errno("cpu/event=0xc0,eq/") == EDOM);  // nothing to compare with
    CHECK(open_errno("cpu/event=0xc0,umask2=1/@fixed0") == EMEDIUMTYPE);
}

TEST_CASE("all 10 GP counters of an Arrow Lake P-core count, and are put back as found",
          "[counting][v6]")
{
    LoadedModule module(std::string(kExact) + dump_params("GenuineIntel00C0662_ArrowLake_07.txt"));
    archpmu::Device dev;
    const auto sel = [](uint32_t n) { return n < 8 ? 0x186 + n : 0x1901 + 4 * n; };
    const auto ctr = [](uint32_t n) { return n < 8 ? 0xc1 + n : 0x1900 + 4 * n; };
    // What perf leaves behind: event selects with EN cleared, and counts.
    for (uint32_t n = 0; n < 10; ++n) {
        model_write_msr(dev, 0, sel(n), 0x1300c4 + n);
        model_write_msr(dev, 0, ctr(n), 1000 + n);
    }
    const auto before = pmu_msr_snapshot(dev, 0);
    REQUIRE(before.at(0x1925) == 0x1300cd);  // GP 9's event select: the v6 range exists
    std::string list;
    for (uint32_t n = 0; n < 10; ++n)
        list += (n ? "," : "") + std::string(n % 2 ? "branches" : "instructions") + "@gp" +
                std::to_string(n);
    {
        Session s(events(list + ",instructions"), on_cpus({0}));
        s.start();
        CHECK((model_read_msr(dev, 0, 0x1921) & ARCHPMU_EVTSEL_EN) != 0);
        CHECK((model_read_msr(dev, 0, 0x1925) & 0xffff) == 0x00c4);
        inject(0, 0x00c0, 7);
        inject(0, 0x00c4, 3);
        s.stop();
        CHECK(values(s)[0] == std::vector<uint64_t>{7, 3, 7, 3, 7, 3, 7, 3, 7, 3, 7});
        const auto snap = s.read();
        for (const auto& v : snap.values)
            if (v.event < 10)
                CHECK(v.counter == v.event);
        // Ten GP events and a fixed one: nothing is left for an eleventh.
        CHECK(open_errno("branches", {0}) == EBUSY);
    }
    CHECK(pmu_msr_snapshot(dev, 0) == before);
    // The E-cores (CPU 1) have no GP counter 8.
    CHECK(open_errno("branches@gp8", {1}) == ECHRNG);
}

TEST_CASE("64-bit totals stay exact through wraps of a narrow counter", "[counting]")
{
    LoadedModule module(std::string(kExact) +
                        "model_version=4 model_gp_width=16 model_fixed_width=16");
    archpmu::Device dev;
    Session s(events("instructions,instructions@gp"), on_cpus({0}));
    s.start();
    uint64_t expected = 0;
    for (int i = 0; i < 5; ++i) {
        inject(0, 0x00c0, 40000);
        expected += 40000;
        const auto v = values(s)[0];
        CHECK(v[0] == expected);
        CHECK(v[1] == expected);
    }
    CHECK(expected > 0xffff * 3);
    // The hardware wrapped and flagged it; archpmu acknowledged the bits it owns.
    CHECK((model_read_msr(dev, 0, 0x38e) & (0x1 | 1ULL << 32)) == 0);
    s.stop();
}

TEST_CASE("v1 starts and stops through the EN bits, v2+ through GLOBAL_CTRL", "[counting]")
{
    SECTION("v1")
    {
        LoadedModule module(std::string(kExact) + "model_version=1 model_gp=2 model_fixed=0");
        archpmu::Device dev;
        Session s(events("instructions,branches"), on_cpus({0}));
        CHECK(archpmu::counter_name(s.counters()[0]) == "gp0");
        CHECK((model_read_msr(dev, 0, 0x186) & ARCHPMU_EVTSEL_EN) == 0);
        s.start();
        CHECK((model_read_msr(dev, 0, 0x186) & ARCHPMU_EVTSEL_EN) != 0);
        CHECK((model_read_msr(dev, 0, 0x187) & ARCHPMU_EVTSEL_EN) != 0);
        inject(0, 0x00c0, 11);
        s.stop();
        CHECK((model_read_msr(dev, 0, 0x186) & ARCHPMU_EVTSEL_EN) == 0);
        inject(0, 0x00c0, 5);
        CHECK(values(s)[0] == std::vector<uint64_t>{11, 0});
    }
    SECTION("v4")
    {
        LoadedModule module(std::string(kExact) + "model_version=4");
        archpmu::Device dev;
        Session s(events("instructions,branches"), on_cpus({0}));
        const uint64_t ours = 1ULL << 32 | 0x1;  // fixed0, gp0
        CHECK((model_read_msr(dev, 0, 0x38f) & ours) == 0);
        s.start();
        CHECK((model_read_msr(dev, 0, 0x38f) & ours) == ours);
        CHECK(model_read_msr(dev, 0, 0x38d) == 0x3);  // fixed0: OS and USR
        s.stop();
        CHECK((model_read_msr(dev, 0, 0x38f) & ours) == 0);
    }
}

// SDM 18.2.1.1: a counter is stopped before IA32_PMCx is written. The model
// counts every write to a counter that counts (model_live_writes).
TEST_CASE("counters are written only while stopped: start, reset, turns", "[counting][order]")
{
    for (const char* config :
         {"model_version=1 model_gp=2 model_fixed=0", "model_version=4 model_gp=2"}) {
        DYNAMIC_SECTION(config)
        {
            LoadedModule module(std::string(kExact) + config + " mux_interval_ms=4");
            {
                Session s(events("instructions,branches"), on_cpus({0}));
                s.start();
                inject(0, 0x00c0, 11);
                s.reset();
                inject(0, 0x00c0, 7);
                CHECK(values(s)[0][0] == 7);
            }
            // Three events on two GP counters: the turns reprogram running neighbours.
            Session m(events("instructions,branches,r003c"), on_cpus({0}, Mux::on, StartAt::start));
            m.start();
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            m.reset();
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            m.stop();
            CHECK(read_file("/sys/kernel/debug/archpmu/model_live_writes") == "0");
        }
    }
}

TEST_CASE("each refusal has its errno and programs nothing", "[counting][errors]")
{
    LoadedModule module(std::string(kExact) +
                        "model_version=5 model_gp=4 model_fixed=3 model_events_len=8 "
                        "model_events_unavail=0x80 model_anythread_deprecated=1");
    archpmu::Device dev;
    const auto before0 = pmu_msr_snapshot(dev, 0);
    const auto before1 = pmu_msr_snapshot(dev, 1);
    struct Case {
        const char* events;
        int err;
    };
    const Case cases[] = {
        {"r1400c0", EINVAL},                     // INT
        {"r4000c0", EINVAL},                     // EN
        {"r800c0", EINVAL},                      // PC
        {"r1000000c0", EINVAL},                  // bit 32: reserved here
        {"cpu/event=0xc0,inv/", EDOM},           // INV without CMASK
        {"cpu/event=0xc0,cmask=1,eq/", EINVAL},  // EQ: v6 with leaf 23H only
        {"cpu/event=0xc0,umask2=1/", EINVAL},    // UMASK2 too
        {"cpu/event=0xc0,any/", EOPNOTSUPP},     // AnyThread deprecated
        {"slots", ENOENT},                       // CPUID marks it unavailable
        {"r0500", ENOENT},                       // fixed counter 4 does not exist
        {"instructions@gp7", ECHRNG},            // no GP counter 7
        {"cycles@fixed0", ECHRNG},               // fixed 0 counts instructions
        {"r0300@gp1", ECHRNG},                   // a fixed-only event on a GP counter
        {"cpu/event=0xc0,cmask=1/@fixed0", EMEDIUMTYPE},
        {"branches,branches,branches,branches,branches", ENOSPC},
        {"instructions@gp1,branches@gp1", EINVAL},  // one counter pinned twice
    };
    for (const auto& c : cases) {
        CAPTURE(c.events);
        CHECK(open_errno(c.events) == c.err);
    }
    CHECK(open_errno("instructions", {0, 0}) == EINVAL);
    CHECK(open_errno("instructions", {4096}) == ENXIO);
    // A raw encoding counts an unavailable event anyway.
    CHECK(open_errno("r01a4") == 0);

    CHECK(pmu_msr_snapshot(dev, 0) == before0);
    CHECK(pmu_msr_snapshot(dev, 1) == before1);
}

TEST_CASE("the offending event and CPU come back with a refusal", "[counting][errors]")
{
    LoadedModule module(std::string(kExact) +
                        "model_version=5 model_gp=4 model_hybrid_gp=2 "
                        "model_hybrid_cpus=1");
    archpmu::UniqueFd fd(::open(kDev, O_RDWR | O_CLOEXEC));
    archpmu_event ev[2] = {{0x00c0, 0, 0}, {0x00c4, ARCHPMU_EVENT_PIN, 3}};
    archpmu_count_open cmd{};
    cmd.size = sizeof(cmd);
    cmd.nr_events = 2;
    cmd.events = reinterpret_cast<uintptr_t>(ev);
    REQUIRE(::ioctl(fd.get(), ARCHPMU_IOC_COUNT_OPEN, &cmd) != 0);
    CHECK(errno == ECHRNG);  // the E-core has GP counters 0-1 only
    CHECK(cmd.bad_event == 1);
    CHECK(cmd.bad_cpu == 1);

    // No session, and the device file takes no session command (ABI 2).
    archpmu_count_ctl ctl{};
    ctl.size = sizeof(ctl);
    CHECK(::ioctl(fd.get(), ARCHPMU_IOC_COUNT_START, &ctl) != 0);
    CHECK(errno == ENOTTY);
    cmd.nr_events = 0;
    CHECK(::ioctl(fd.get(), ARCHPMU_IOC_COUNT_OPEN, &cmd) != 0);
    CHECK(errno == EINVAL);
    cmd.nr_events = ARCHPMU_MAX_EVENTS + 1;
    CHECK(::ioctl(fd.get(), ARCHPMU_IOC_COUNT_OPEN, &cmd) != 0);
    CHECK(errno == E2BIG);

    cmd.nr_events = 1;
    const archpmu::UniqueFd session(::ioctl(fd.get(), ARCHPMU_IOC_COUNT_OPEN, &cmd));
    REQUIRE(session.valid());

    archpmu_count_value vals[1];
    archpmu_count_read rd{};
    rd.size = sizeof(rd);
    rd.nr_values = 1;  // one event on every online CPU needs one entry per CPU
    rd.values = reinterpret_cast<uintptr_t>(vals);
    CHECK(::ioctl(session.get(), ARCHPMU_IOC_COUNT_READ, &rd) != 0);
    CHECK(errno == ENOSPC);
    CHECK(rd.nr_values == online_cpus().size());
}

TEST_CASE("sessions on two files share the PMU on disjoint counters", "[counting][sharing]")
{
    LoadedModule module(std::string(kExact) + "model_version=4 model_gp=4");
    Session a(events("instructions@gp0"), on_cpus({0}));
    Session b(events("instructions@gp"), on_cpus({0}));
    CHECK(archpmu::counter_name(b.counters()[0]) == "gp1");
    CHECK(open_errno("branches@gp0") == EBUSY);
    Session c(events("branches,branches"), on_cpus({0}));  // gp2, gp3
    KernelLog log;
    CHECK(open_errno("branches") == EBUSY);  // the rest are held
    const auto held = log.grep("held by the archpmu session of pid " + std::to_string(::getpid()));
    CHECK(held.size() == 1);
    a.start();
    b.start();
    inject(0, 0x00c0, 9);
    CHECK(values(a)[0][0] == 9);
    CHECK(values(b)[0][0] == 9);
}

TEST_CASE("counting needs CAP_PERFMON or CAP_SYS_ADMIN", "[counting][errors]")
{
    LoadedModule module("backend=model");
    archpmu::UniqueFd fd(::open(kDev, O_RDWR | O_CLOEXEC));
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        if (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0)
            ::_exit(100);
        archpmu_event ev = {0x00c0, 0, 0};
        archpmu_count_open cmd{};
        cmd.size = sizeof(cmd);
        cmd.nr_events = 1;
        cmd.events = reinterpret_cast<uintptr_t>(&ev);
        const int err = ::ioctl(fd.get(), ARCHPMU_IOC_COUNT_OPEN, &cmd) >= 0 ? 0 : errno;
        ::_exit(err == EPERM ? 0 : 101);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("a counter held through the perf reservation is refused with EBUSY",
          "[counting][sharing]")
{
    LoadedModule module(std::string(kExact) + "model_version=4");
    REQUIRE(load_hog(2) == 0);
    KernelLog log;
    CHECK(open_errno("branches@gp2") == EBUSY);
    const auto lines = log.grep("GP counter 2 is held by perf");
    REQUIRE(lines.size() == 1);
    CHECK_THAT(lines[0], Catch::Contains("nmi_watchdog=0"));
    CHECK(open_errno("branches@gp1") == 0);
    CHECK(unload_hog() == 0);
    CHECK(open_errno("branches@gp2") == 0);
}

TEST_CASE("a counter another agent programmed is refused with EBUSY", "[counting][sharing]")
{
    LoadedModule module(std::string(kExact) + "model_version=4");
    archpmu::Device dev;
    KernelLog log;
    model_write_msr(dev, 0, 0x186 + 3, 0x4300c4);  // EN set on GP 3
    CHECK(open_errno("branches@gp3", {0}) == EBUSY);
    CHECK(log.grep("GP counter 3 is in use by another agent").size() == 1);
    model_write_msr(dev, 0, 0x186 + 3, 0);
    model_write_msr(dev, 0, 0x38d, 0x20);  // fixed counter 1 enabled for USR
    CHECK(open_errno("cycles", {0}) == EBUSY);
    CHECK(open_errno("cycles", {1}) == 0);
}

// A hypervisor may report PMU v4 and not emulate IA32_PERF_GLOBAL_INUSE: a
// read of it raises #GP. Sessions never read it; regs and who leave it out.
TEST_CASE("a v4 PMU whose GLOBAL_INUSE raises #GP counts, and regs leaves it out",
          "[counting][sharing]")
{
    LoadedModule module(std::string(kExact) + "model_version=4 model_quirks=1");
    archpmu::Device dev;
    CHECK_THROWS_AS(model_read_msr(dev, 0, 0x392), archpmu::Error);
    {
        Session s(events("branches,instructions"), on_cpus({0}));
        s.start();
        inject(0, 0x00c4, 10);
        inject(0, 0x00c0, 20);
        s.stop();
        CHECK(values(s)[0] == std::vector<uint64_t>{10, 20});
    }
    const auto regs = run_tool("regs -C 0 --json");
    CHECK(regs.status == 0);
    CHECK(regs.out.find("IA32_PERF_GLOBAL_CTRL") != std::string::npos);
    CHECK(regs.out.find("IA32_PERF_GLOBAL_INUSE") == std::string::npos);
    CHECK(run_tool("who --json").status == 0);
}

// Skylake to Comet Lake client microcode with TSX_FORCE_ABORT (CPUID.07H:
// EDX[13]) uses GP counter 3 for TSX unless MSR 10FH[0] is set, which only perf
// may write; microcode with RTM_ALWAYS_ABORT (EDX[11]) gives it back.
TEST_CASE("TSX_FORCE_ABORT parts never get GP counter 3", "[counting][tsx]")
{
    // A Skylake client: v4, 4 GP and 3 fixed counters of 48 bits.
    const std::string skylake =
        std::string(kExact) +
        "model_cpuid=01.0=000506e3:00000800:7ffafbbf:bfebfbff,"
        "0a.0=07300404:00000000:00000000:00000603,07.0=00000000:029c6fbf:00000000:";
    const std::string four_gp = "instructions@gp,cycles@gp,branches,branch-misses";
    SECTION("force abort: GP 3 is left alone")
    {
        LoadedModule module(skylake + "9c002400");
        archpmu::Device dev;
        CHECK(dev.cpu_info(0).tsx_force_abort());
        CHECK(dev.cpu_info(0).gp_counters == 4);
        CHECK(open_errno("branches@gp3", {0}) == ECHRNG);
        CHECK(open_errno(four_gp, {0}) == ENOSPC);
        Session s(events("instructions@gp,cycles@gp,branches"), on_cpus({0}));
        s.start();
        inject(0, 0x00c4, 9);
        s.stop();
        CHECK(values(s)[0][2] == 9);
        CHECK(model_read_msr(dev, 0, 0x186 + 3) == 0);
        CHECK(run_tool("info").out.find("GP counter 3 is left to TSX") != std::string::npos);
    }
    SECTION("RTM always aborts: GP 3 is free")
    {
        LoadedModule module(skylake + "9c002c00");
        archpmu::Device dev;
        CHECK_FALSE(dev.cpu_info(0).tsx_force_abort());
        CHECK(open_errno(four_gp, {0}) == 0);
        CHECK(open_errno("branches@gp3", {0}) == 0);
    }
}

// KVM's vPMU counts for guests through perf events, which cannot reserve the
// PMU while archpmu holds it: the first session says so in dmesg, who too.
TEST_CASE("with kvm loaded, the first session and who say guests' counters read 0",
          "[counting][sharing][kvm]")
{
    if (run_command("modprobe kvm").status != 0) {
        SUCCEED("no kvm module for this kernel under the host root: not tested here");
        return;
    }
    {
        LoadedModule module(kExact);
        KernelLog log;
        {
            Session a(events("branches@gp"), on_cpus({0}));
            Session b(events("branch-misses@gp"), on_cpus({0}));
            CHECK(log.grep("kvm is loaded").size() == 1);
            const auto text = run_tool("who");
            CHECK(text.out.find("guests' hardware counters read 0") != std::string::npos);
            CHECK(json::parse(run_tool("who --json").out).at("kvm_guests_count_nothing") == true);
        }
        CHECK(json::parse(run_tool("who --json").out).at("kvm_guests_count_nothing") == false);
        Session again(events("branches@gp"), on_cpus({0}));
        CHECK(log.grep("kvm is loaded").size() == 2);  // again as archpmu takes the PMU again
    }
    CHECK(run_command("rmmod kvm").status == 0);
}

// 2,982 refused opens once wrote 2,982 lines and wrapped the kernel log, boot
// log and all. Refusal lines are rate-limited together (10 every 5 s), and
// the kernel says how many it left out once lines are let through again.
TEST_CASE("a flood of refusals leaves the kernel log readable", "[counting][sharing]")
{
    LoadedModule module(std::string(kExact) + "model_version=4");
    archpmu::Device dev;
    model_write_msr(dev, 0, 0x186 + 3, 0x4300c4);  // EN set on GP 3
    KernelLog log;
    // A line just before the flood: 3,000 unlimited lines (~400 KB) would wrap it away.
    write_file("/dev/kmsg", "archpmu-itest: before the flood");
    int refused = 0;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 3000; i++)
        refused += open_errno("branches@gp3", {0}) == EBUSY;
    const auto took = std::chrono::steady_clock::now() - start;
    CHECK(refused == 3000);
    // 10 lines in each 5 s window the flood touched (the debug kernel takes ~30 s).
    const auto windows = static_cast<std::size_t>(took / std::chrono::seconds(5)) + 2;
    const auto flood = log.grep("in use by another agent");
    CHECK(!flood.empty());
    CHECK(flood.size() <= 10 * windows);
    std::this_thread::sleep_for(std::chrono::milliseconds(5500));
    CHECK(open_errno("branches@gp3", {0}) == EBUSY);
    // (KernelLog::grep sees every line since the log was opened.)
    CHECK(log.grep("in use by another agent").size() == flood.size() + 1);
    CHECK(!log.grep("callbacks suppressed").empty());
    CHECK(run_command("dmesg | grep -c 'archpmu-itest: before the flood'").out == "1\n");
    model_write_msr(dev, 0, 0x186 + 3, 0);
}

// perf's x86_pmu_disable_event clears EN alone: event, umask, USR, OS and INT
// stay in the event select for good, and GLOBAL_INUSE reports the counter.
// Such a counter is idle: a session takes it, counts exactly, and puts the
// leftovers back as they were.
TEST_CASE("counters perf used before are taken and put back as found", "[counting][sharing]")
{
    LoadedModule module(std::string(kExact) + "model_version=4");
    archpmu::Device dev;
    constexpr uint64_t kPerfLeftover = 0x1300c4;  // BR_INST_RETIRED, USR, OS, INT; EN clear
    model_write_msr(dev, 0, 0x186 + 3, kPerfLeftover);
    model_write_msr(dev, 0, 0x38d, 0x8 << 4);  // fixed counter 1: its PMI bit, no ring bit
    CHECK((model_read_msr(dev, 0, 0x392) & 0x8) == 0x8);  // INUSE shows GP 3
    const auto before = pmu_msr_snapshot(dev, 0);
    KernelLog log;
    {
        Session s(events("branches@gp3,cycles"), on_cpus({0}));
        s.start();
        inject(0, 0x00c4, 100);
        inject(0, 0x003c, 7);
        s.stop();
        CHECK(values(s)[0] == std::vector<uint64_t>{100, 7});
    }
    CHECK(log.grep("in use by another agent").empty());
    CHECK(pmu_msr_snapshot(dev, 0) == before);
    CHECK(model_read_msr(dev, 0, 0x186 + 3) == kPerfLeftover);
}

TEST_CASE("closing, killing and unloading leave the PMU as it was", "[counting][release]")
{
    LoadedModule module(std::string(kExact) + "model_version=4 model_full_width=1");
    archpmu::Device dev;
    // Leftovers of some earlier user: counter values, an idle event select.
    model_write_msr(dev, 0, 0xc1, 0x1234);
    model_write_msr(dev, 0, 0x4c1 + 1, 0xabcdef012345ULL);
    model_write_msr(dev, 0, 0x309 + 1, 0x77);
    model_write_msr(dev, 0, 0x38f, 0xf | 0x2ULL << 32);
    const auto before = pmu_msr_snapshot(dev, 0);

    SECTION("close")
    {
        {
            Session s(events("instructions,cycles,branches,branch-misses"), on_cpus({0}));
            s.start();
            inject(0, 0x00c0, 100);
            CHECK(pmu_msr_snapshot(dev, 0) != before);
        }
        CHECK(pmu_msr_snapshot(dev, 0) == before);
    }
    SECTION("the process dies")
    {
        const pid_t child = ::fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            Session s(events("instructions,cycles,branches,branch-misses"), on_cpus({0}));
            s.start();
            ::kill(::getpid(), SIGKILL);
        }
        int status = 0;
        REQUIRE(::waitpid(child, &status, 0) == child);
        CHECK(WIFSIGNALED(status));
        CHECK(pmu_msr_snapshot(dev, 0) == before);
    }
    SECTION("unload waits for the session's file")
    {
        Session s(events("instructions"), on_cpus({0}));
        CHECK(unload_module() == EWOULDBLOCK);
    }
}

TEST_CASE("a CPU going offline keeps its counts and resumes when back", "[counting][hotplug]")
{
    const std::string online = "/sys/devices/system/cpu/cpu1/online";
    REQUIRE(path_exists(online));
    LoadedModule module(std::string(kExact) + "model_version=4");
    Session s(events("instructions,branches@gp"), on_cpus({0, 1}));
    s.start();
    inject(1, 0x00c0, 100);
    write_file(online, "0");
    auto snap = s.read();
    CHECK(snap.values[2].cpu == 1);
    CHECK(snap.values[2].offline);
    CHECK(snap.values[2].value == 100);
    CHECK(snap.values[2].time_running_ns < snap.values[2].time_enabled_ns);

    write_file(online, "1");
    inject(1, 0x00c0, 50);
    snap = s.read();
    CHECK_FALSE(snap.values[2].offline);
    CHECK(snap.values[2].value == 150);
}

TEST_CASE("a session keeps its counts and keeps counting across a suspend", "[counting][suspend]")
{
    // pm_test "freezer": the PM notifiers run, the machine does not sleep. (The deeper
    // pm_test levels hang QEMU/TCG.)
    REQUIRE(path_exists("/sys/power/pm_test"));
    LoadedModule module(std::string(kExact) + "model_version=4");
    archpmu::Device dev;
    Session s(events("instructions,branches@gp"), on_cpus({0}));
    s.start();
    inject(0, 0x00c0, 100);
    write_file("/sys/module/suspend/parameters/pm_test_delay", "0");
    write_file("/sys/power/pm_test", "freezer");
    write_file("/sys/power/state", "freeze");
    write_file("/sys/power/pm_test", "none");
    CHECK(values(s)[0][0] == 100);
    CHECK((model_read_msr(dev, 0, 0x38f) & (1ULL << 32 | 0x1)) == (1ULL << 32 | 0x1));
    inject(0, 0x00c0, 23);
    CHECK(values(s)[0] == std::vector<uint64_t>{123, 0});
}

TEST_CASE("the counting and injection ioctls' remaining bad inputs", "[counting][errors]")
{
    LoadedModule module(std::string(kExact) + "model_version=4");
    archpmu::UniqueFd fd(::open(kDev, O_RDWR | O_CLOEXEC));
    archpmu::UniqueFd session;
    // On the device file, or on the session's once there is one; an opened
    // session's file is kept (the one before it closes).
    const auto call = [&](unsigned long request, void* arg) {
        const int ret = ::ioctl(session.valid() ? session.get() : fd.get(), request, arg);
        if (ret > 0)
            session.reset(ret);
        return ret >= 0 ? 0 : errno;
    };

    SECTION("MODEL_INJECT")
    {
        archpmu_model_inject inj{};
        inj.size = sizeof(inj);
        inj.cpu = 0;
        inj.event = 0xc0;
        inj.count = 1;
        inj.flags = 0;
        CHECK(call(ARCHPMU_IOC_MODEL_INJECT, &inj) == EINVAL);
        inj.flags = ARCHPMU_INJECT_USR | ARCHPMU_INJECT_OS;
        CHECK(call(ARCHPMU_IOC_MODEL_INJECT, &inj) == EINVAL);
        inj.flags = ARCHPMU_INJECT_OS;
        inj.event = 0x10000;
        CHECK(call(ARCHPMU_IOC_MODEL_INJECT, &inj) == EINVAL);
        inj.event = 0xc0;
        inj.cpu = 4096;
        CHECK(call(ARCHPMU_IOC_MODEL_INJECT, &inj) == ENXIO);
        inj.cpu = 0;
        CHECK(call(ARCHPMU_IOC_MODEL_INJECT, &inj) == 0);
        // More events in the same cross-call: a bounded list of valid ones.
        std::vector<archpmu_model_inject_more> more(ARCHPMU_INJECT_MORE_MAX + 1, {0xc4, 0, 1});
        inj.more = reinterpret_cast<std::uintptr_t>(more.data());
        inj.nr_more = ARCHPMU_INJECT_MORE_MAX + 1;
        CHECK(call(ARCHPMU_IOC_MODEL_INJECT, &inj) == EINVAL);
        inj.nr_more = 2;
        more[1].__reserved = 1;
        CHECK(call(ARCHPMU_IOC_MODEL_INJECT, &inj) == EINVAL);
        more[1] = {0x10000, 0, 1};
        CHECK(call(ARCHPMU_IOC_MODEL_INJECT, &inj) == EINVAL);
        inj.more = 8;
        CHECK(call(ARCHPMU_IOC_MODEL_INJECT, &inj) == EFAULT);
        inj.more = 0;
        inj.nr_more = 0;
        inj.__reserved = 1;
        CHECK(call(ARCHPMU_IOC_MODEL_INJECT, &inj) == EINVAL);
        inj.__reserved = 0;

        const pid_t child = ::fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            if (::setresuid(65534, 65534, 65534) != 0)
                ::_exit(100);
            ::_exit(::ioctl(fd.get(), ARCHPMU_IOC_MODEL_INJECT, &inj) != 0 && errno == EPERM ? 0
                                                                                             : 101);
        }
        int status = 0;
        REQUIRE(::waitpid(child, &status, 0) == child);
        CHECK(WEXITSTATUS(status) == 0);
    }
    SECTION("READ and the controls")
    {
        archpmu_count_value vals[8];
        archpmu_count_read rd{};
        rd.size = sizeof(rd);
        rd.nr_values = 8;
        rd.values = reinterpret_cast<uintptr_t>(vals);
        // The device file has none of them (ABI 2): a session's file has.
        CHECK(call(ARCHPMU_IOC_COUNT_READ, &rd) == ENOTTY);
        archpmu_count_ctl ctl{};
        ctl.size = sizeof(ctl);
        for (unsigned long request :
             {ARCHPMU_IOC_COUNT_START, ARCHPMU_IOC_COUNT_STOP, ARCHPMU_IOC_COUNT_RESET})
            CHECK(call(request, &ctl) == ENOTTY);

        archpmu_event ev = {0x00c0, 0, 0};
        archpmu_count_open op{};
        op.size = sizeof(op);
        op.nr_events = 1;
        op.events = reinterpret_cast<uintptr_t>(&ev);
        REQUIRE(call(ARCHPMU_IOC_COUNT_OPEN, &op) == 0);
        rd.flags = 2;  // an unknown flag (1 is ARCHPMU_COUNT_READ_SUM)
        CHECK(call(ARCHPMU_IOC_COUNT_READ, &rd) == EINVAL);
        rd.flags = 0x80000000U;
        CHECK(call(ARCHPMU_IOC_COUNT_READ, &rd) == EINVAL);
        rd.flags = 0;
        rd.__reserved0 = 1;
        CHECK(call(ARCHPMU_IOC_COUNT_READ, &rd) == EINVAL);
        rd.__reserved0 = 0;
        rd.values = 16;
        CHECK(call(ARCHPMU_IOC_COUNT_READ, &rd) == EFAULT);
        rd.values = reinterpret_cast<uintptr_t>(vals);
        CHECK(call(ARCHPMU_IOC_COUNT_READ, &rd) == 0);
        ctl.flags = 1;
        for (unsigned long request :
             {ARCHPMU_IOC_COUNT_START, ARCHPMU_IOC_COUNT_STOP, ARCHPMU_IOC_COUNT_RESET})
            CHECK(call(request, &ctl) == EINVAL);
        ctl.size = 4;
        ctl.flags = 0;
        CHECK(call(ARCHPMU_IOC_COUNT_START, &ctl) == EINVAL);
    }
    SECTION("COUNT_OPEN: reserved fields, bad pointers, an offline CPU")
    {
        archpmu_event ev = {0x00c0, 0, 0};
        archpmu_count_open op{};
        op.size = sizeof(op);
        op.nr_events = 1;
        op.events = reinterpret_cast<uintptr_t>(&ev);
        op.flags = 0x80000000U;  // an unknown flag
        CHECK(call(ARCHPMU_IOC_COUNT_OPEN, &op) == EINVAL);
        op.flags = 0;
        op.__reserved0 = 1;
        CHECK(call(ARCHPMU_IOC_COUNT_OPEN, &op) == EINVAL);
        op.__reserved0 = 0;
        op.__reserved[1] = 1;
        CHECK(call(ARCHPMU_IOC_COUNT_OPEN, &op) == EINVAL);
        op.__reserved[1] = 0;
        op.events = 8;
        CHECK(call(ARCHPMU_IOC_COUNT_OPEN, &op) == EFAULT);
        op.events = reinterpret_cast<uintptr_t>(&ev);
        op.nr_cpus = 1;
        op.cpus = 8;
        CHECK(call(ARCHPMU_IOC_COUNT_OPEN, &op) == EFAULT);

        const std::string online = "/sys/devices/system/cpu/cpu1/online";
        uint32_t cpu1 = 1;
        op.cpus = reinterpret_cast<uintptr_t>(&cpu1);
        write_file(online, "0");
        CHECK(call(ARCHPMU_IOC_COUNT_OPEN, &op) == ENODEV);
        CHECK(op.bad_cpu == 1);
        write_file(online, "1");
        CHECK(call(ARCHPMU_IOC_COUNT_OPEN, &op) == 0);
    }
}
