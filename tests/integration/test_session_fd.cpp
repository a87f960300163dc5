// SPDX-License-Identifier: MIT
// Sessions as files of their own: the descriptor COUNT_OPEN returns, with
// ARCHPMU_COUNT_OPEN_FD or without (implied since ABI 2), several sessions per
// device file, which takes no session command, release on the
// session file's last close whether /dev/archpmu is open or not, the session
// file's commands and refusals, and the library's Session on top of it.
#include <dirent.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdlib>
#include <set>
#include <vector>

#include "archpmu.h"
#include "archpmu/device.hpp"
#include "archpmu/error.hpp"
#include "archpmu/events.hpp"
#include "archpmu/session.hpp"
#include "archpmu_test.h"
#include "harness.hpp"

using namespace archpmu::itest;
using archpmu::Session;
using archpmu::UniqueFd;

namespace {

constexpr const char* kDev = "/dev/archpmu";
// Only injected events count; the model's default of 4 GP and 3 fixed counters.
constexpr const char* kExact = "backend=model model_rate_percent=0 model_version=4";
constexpr uint32_t kPerfEvtSel0 = 0x186;
constexpr uint32_t kBranches = 0x00c4;
constexpr uint32_t kInstructions = 0x00c0;

void inject(unsigned cpu, uint32_t code, uint64_t count)
{
    REQUIRE_NOTHROW(inject_events(cpu, code, count));
}

void require_session_fd()
{
    const archpmu::Device dev;
    REQUIRE((dev.info().capabilities & ARCHPMU_CAP_SESSION_FD) != 0);
}

UniqueFd open_dev()
{
    UniqueFd fd(::open(kDev, O_RDWR | O_CLOEXEC));
    REQUIRE(fd.valid());
    return fd;
}

int ioctl_errno(int fd, unsigned long request, void* arg)
{
    return ::ioctl(fd, request, arg) == 0 ? 0 : errno;
}

archpmu_event any_counter(uint32_t code)
{
    return {code, 0, 0};
}

archpmu_event on_gp(uint32_t code, uint32_t counter)
{
    return {code, ARCHPMU_EVENT_PIN, counter};
}

// COUNT_OPEN of `evs` on `cpus` (CPU 0) through the device file `dev`: the session's
// descriptor, or -errno on a refusal.
int count_open(int dev, std::vector<archpmu_event> evs, uint32_t flags = ARCHPMU_COUNT_OPEN_FD,
               archpmu_count_open* out = nullptr, std::vector<uint32_t> cpus = {0})
{
    archpmu_count_open op{};
    op.size = sizeof(op);
    op.flags = flags;
    op.nr_events = static_cast<uint32_t>(evs.size());
    op.events = reinterpret_cast<uintptr_t>(evs.data());
    op.nr_cpus = static_cast<uint32_t>(cpus.size());
    op.cpus = reinterpret_cast<uintptr_t>(cpus.data());
    const int ret = ::ioctl(dev, ARCHPMU_IOC_COUNT_OPEN, &op);
    const int err = errno;
    if (out)
        *out = op;
    return ret < 0 ? -err : ret;
}

// A session file from count_open(), REQUIREd to be one.
UniqueFd session_file(int dev, std::vector<archpmu_event> evs)
{
    const int fd = count_open(dev, std::move(evs));
    REQUIRE(fd >= 0);
    return UniqueFd(fd);
}

int control(int fd, unsigned long request, uint32_t flags = 0)
{
    archpmu_count_ctl ctl{};
    ctl.size = sizeof(ctl);
    ctl.flags = flags;
    return ioctl_errno(fd, request, &ctl);
}

// COUNT_READ with room for `room` values: 0 or the errno; *needed gets nr_values back.
int read_errno(int fd, uint32_t room, uint32_t* needed = nullptr)
{
    std::vector<archpmu_count_value> vals(room + 1);
    archpmu_count_read rd{};
    rd.size = sizeof(rd);
    rd.nr_values = room;
    rd.values = reinterpret_cast<uintptr_t>(vals.data());
    const int err = ioctl_errno(fd, ARCHPMU_IOC_COUNT_READ, &rd);
    if (needed)
        *needed = rd.nr_values;
    return err;
}

// Every count of the session on `fd`, CPU-major.
std::vector<uint64_t> counts(int fd)
{
    std::vector<archpmu_count_value> vals(64);
    archpmu_count_read rd{};
    rd.size = sizeof(rd);
    rd.nr_values = static_cast<uint32_t>(vals.size());
    rd.values = reinterpret_cast<uintptr_t>(vals.data());
    REQUIRE(ioctl_errno(fd, ARCHPMU_IOC_COUNT_READ, &rd) == 0);
    std::vector<uint64_t> out;
    for (uint32_t i = 0; i < rd.nr_values; ++i)
        out.push_back(vals[i].value);
    return out;
}

bool close_on_exec(int fd)
{
    const int flags = ::fcntl(fd, F_GETFD);
    return flags >= 0 && (flags & FD_CLOEXEC) != 0;
}

// IA32_PERFEVTSEL0 of CPU 0 as the model holds it, through a device file of its own.
uint64_t perfevtsel0()
{
    const archpmu::Device dev;
    return model_read_msr(dev, 0, kPerfEvtSel0);
}

// The descriptors this process has open.
std::set<int> open_fds()
{
    std::set<int> fds;
    DIR* dir = ::opendir("/proc/self/fd");
    REQUIRE(dir != nullptr);
    while (const dirent* e = ::readdir(dir))
        if (e->d_name[0] != '.' && std::atoi(e->d_name) != ::dirfd(dir))
            fds.insert(std::atoi(e->d_name));
    ::closedir(dir);
    return fds;
}

int open_errno(const std::string& list)
{
    try {
        Session s(archpmu::parse_event_list(list), on_cpus({0}));
        return 0;
    } catch (const archpmu::Error& e) {
        return e.code().value();
    }
}

}  // namespace

TEST_CASE("COUNT_OPEN returns a close-on-exec session file, with ARCHPMU_COUNT_OPEN_FD or without",
          "[session_fd][counting]")
{
    LoadedModule module(kExact);
    require_session_fd();
    const auto dev = open_dev();
    archpmu_count_open op{};
    const int fd = count_open(dev.get(), {any_counter(kInstructions), any_counter(kBranches)},
                              ARCHPMU_COUNT_OPEN_FD, &op);
    REQUIRE(fd >= 0);
    const UniqueFd session(fd);
    CHECK(fd != dev.get());
    CHECK(close_on_exec(fd));
    CHECK(op.nr_cpus_opened == 1);

    // The device's file takes no session command (ABI 2).
    for (unsigned long request :
         {ARCHPMU_IOC_COUNT_START, ARCHPMU_IOC_COUNT_STOP, ARCHPMU_IOC_COUNT_RESET})
        CHECK(control(dev.get(), request) == ENOTTY);
    CHECK(read_errno(dev.get(), 16) == ENOTTY);

    // The session file is the session.
    CHECK(control(fd, ARCHPMU_IOC_COUNT_START) == 0);
    inject(0, kInstructions, 42);
    inject(0, kBranches, 7);
    CHECK(control(fd, ARCHPMU_IOC_COUNT_STOP) == 0);
    inject(0, kInstructions, 5);  // stopped: nothing counts
    CHECK(counts(fd) == std::vector<uint64_t>{42, 7});
    CHECK(control(fd, ARCHPMU_IOC_COUNT_RESET) == 0);
    CHECK(counts(fd) == std::vector<uint64_t>{0, 0});

    // Without the flag (ABI 1's sessions of the device file) the same: a file of its own.
    const int plain = count_open(dev.get(), {any_counter(kBranches)}, 0);
    REQUIRE(plain > 0);
    const UniqueFd second(plain);
    CHECK(close_on_exec(plain));
    CHECK(control(plain, ARCHPMU_IOC_COUNT_START) == 0);
    inject(0, kBranches, 3);
    CHECK(counts(plain) == std::vector<uint64_t>{3});
    CHECK(counts(fd) == std::vector<uint64_t>{0, 0});
    CHECK(read_errno(dev.get(), 16) == ENOTTY);
}

TEST_CASE("one device file opens several session files, on disjoint counters",
          "[session_fd][sharing]")
{
    LoadedModule module(kExact);
    require_session_fd();
    const auto dev = open_dev();
    const auto a = session_file(dev.get(), {on_gp(kBranches, 0)});
    const auto b = session_file(dev.get(), {on_gp(kBranches, 1)});
    CHECK(a.get() != b.get());
    // Without the flag as well (ABI 1 allowed one such session per file).
    const int plain = count_open(dev.get(), {on_gp(kBranches, 2)}, 0);
    REQUIRE(plain > 0);
    const UniqueFd c(plain);
    const UniqueFd d(count_open(dev.get(), {on_gp(kBranches, 3)}, 0));
    CHECK(d.valid());

    // GP0 is a's.
    archpmu_count_open op{};
    CHECK(count_open(dev.get(), {on_gp(kBranches, 0)}, ARCHPMU_COUNT_OPEN_FD, &op) == -EBUSY);
    CHECK(op.busy_holder == ARCHPMU_HOLDER_SESSION);
    CHECK(op.busy_pid == static_cast<uint32_t>(::getpid()));

    // Each counts on its own.
    CHECK(control(a.get(), ARCHPMU_IOC_COUNT_START) == 0);
    inject(0, kBranches, 5);
    CHECK(control(b.get(), ARCHPMU_IOC_COUNT_START) == 0);
    inject(0, kBranches, 3);
    CHECK(counts(a.get()) == std::vector<uint64_t>{8});
    CHECK(counts(b.get()) == std::vector<uint64_t>{3});
    CHECK(counts(c.get()) == std::vector<uint64_t>{0});
    CHECK(counts(d.get()) == std::vector<uint64_t>{0});
}

TEST_CASE("closing a session file releases its counters while the device stays open",
          "[session_fd][release]")
{
    LoadedModule module(kExact);
    require_session_fd();
    const archpmu::Device msr;
    const auto before = pmu_msr_snapshot(msr, 0);
    REQUIRE(before.at(kPerfEvtSel0) == 0);
    const auto dev = open_dev();

    auto session = session_file(dev.get(), {on_gp(kBranches, 0)});
    CHECK(model_read_msr(msr, 0, kPerfEvtSel0) != 0);  // programmed
    CHECK(control(session.get(), ARCHPMU_IOC_COUNT_START) == 0);
    inject(0, kBranches, 1);
    CHECK(count_open(dev.get(), {on_gp(kBranches, 0)}) == -EBUSY);
    CHECK(count_open(dev.get(), {on_gp(kBranches, 0)}, 0) == -EBUSY);
    CHECK(load_hog(0, 4) == EBUSY);  // a session holds a GP counter's perf reservation

    session.reset();
    CHECK(model_read_msr(msr, 0, kPerfEvtSel0) == 0);
    CHECK(pmu_msr_snapshot(msr, 0) == before);
    CHECK(load_hog(0, 4) == 0);  // the reservation went with it
    CHECK(unload_hog() == 0);
    const auto again = session_file(dev.get(), {on_gp(kBranches, 0)});
    CHECK(again.valid());
}

TEST_CASE("a session file outlives the device file it was opened on", "[session_fd][release]")
{
    LoadedModule module(kExact);
    require_session_fd();
    auto dev = open_dev();
    auto session = session_file(dev.get(), {any_counter(kInstructions), on_gp(kBranches, 0)});
    // Opened without the flag: ABI 1 gave it to the device file; now a file of its own, GP1.
    auto second = UniqueFd(count_open(dev.get(), {on_gp(kBranches, 1)}, 0));
    REQUIRE(second.valid());
    dev.reset();  // no file of /dev/archpmu is open now

    CHECK(control(session.get(), ARCHPMU_IOC_COUNT_START) == 0);
    inject(0, kInstructions, 10);
    inject(0, kBranches, 4);
    CHECK(counts(session.get()) == std::vector<uint64_t>{10, 4});
    // The session file keeps the module, with no file of the device open.
    CHECK(unload_module() == EWOULDBLOCK);
    {
        // Both outlived the device file; closing the second releases GP1 only.
        const auto dev2 = open_dev();
        CHECK(count_open(dev2.get(), {on_gp(kBranches, 1)}) == -EBUSY);
        second.reset();
        CHECK(count_open(dev2.get(), {on_gp(kBranches, 0)}) == -EBUSY);
        const auto gp1 = session_file(dev2.get(), {on_gp(kBranches, 1)});
        CHECK(gp1.valid());
    }
    inject(0, kBranches, 2);
    CHECK(counts(session.get()) == std::vector<uint64_t>{10, 6});
    session.reset();
    CHECK(perfevtsel0() == 0);
}

TEST_CASE("a session file answers only COUNT_START, STOP, RESET and READ", "[session_fd][errors]")
{
    LoadedModule module(kExact);
    require_session_fd();
    const auto dev = open_dev();
    const auto session =
        session_file(dev.get(), {any_counter(kInstructions), any_counter(kBranches)});
    const int fd = session.get();

    SECTION("every other command is ENOTTY")
    {
        archpmu_info info{};
        info.size = sizeof(info);
        CHECK(ioctl_errno(fd, ARCHPMU_IOC_INFO, &info) == ENOTTY);
        archpmu_cpu_info cpu{};
        cpu.size = sizeof(cpu);
        CHECK(ioctl_errno(fd, ARCHPMU_IOC_CPU_INFO, &cpu) == ENOTTY);
        archpmu_model_msr msr{};
        msr.size = sizeof(msr);
        msr.msr = kPerfEvtSel0;
        CHECK(ioctl_errno(fd, ARCHPMU_IOC_MODEL_MSR, &msr) == ENOTTY);
        archpmu_model_inject inj{};
        inj.size = sizeof(inj);
        inj.flags = ARCHPMU_INJECT_USR;
        inj.event = kInstructions;
        inj.count = 1;
        CHECK(ioctl_errno(fd, ARCHPMU_IOC_MODEL_INJECT, &inj) == ENOTTY);
        // A COUNT_OPEN that the device's file takes.
        archpmu_event ev = any_counter(kBranches);
        uint32_t cpu0 = 0;
        archpmu_count_open op{};
        op.size = sizeof(op);
        op.nr_events = 1;
        op.events = reinterpret_cast<uintptr_t>(&ev);
        op.nr_cpus = 1;
        op.cpus = reinterpret_cast<uintptr_t>(&cpu0);
        CHECK(ioctl_errno(fd, ARCHPMU_IOC_COUNT_OPEN, &op) == ENOTTY);
        op.flags = ARCHPMU_COUNT_OPEN_FD;
        CHECK(ioctl_errno(fd, ARCHPMU_IOC_COUNT_OPEN, &op) == ENOTTY);
        CHECK(::ioctl(fd, _IO(ARCHPMU_IOC_TYPE, 0x7f), nullptr) != 0);
        CHECK(errno == ENOTTY);
        CHECK(::ioctl(fd, _IO(ARCHPMU_IOC_TYPE, 0x16), &op) != 0);
        CHECK(errno == ENOTTY);
        // None of them touched the session.
        CHECK(counts(fd) == std::vector<uint64_t>{0, 0});
    }
    SECTION("a short COUNT_READ is ENOSPC with the room needed")
    {
        // Two events on CPU 0 in a session opened without the flag too (GP1 and GP2).
        const UniqueFd plain(
            count_open(dev.get(), {any_counter(kBranches), any_counter(kBranches)}, 0));
        REQUIRE(plain.valid());
        for (int target : {fd, plain.get()}) {
            CAPTURE(target == fd ? "with ARCHPMU_COUNT_OPEN_FD" : "without");
            uint32_t needed = 0;
            CHECK(read_errno(target, 1, &needed) == ENOSPC);
            CHECK(needed == 2);
            needed = 0;
            CHECK(read_errno(target, 0, &needed) == ENOSPC);
            CHECK(needed == 2);
            CHECK(read_errno(target, 2, &needed) == 0);
            CHECK(needed == 2);
        }
    }
    SECTION("unknown flags are EINVAL")
    {
        for (unsigned long request :
             {ARCHPMU_IOC_COUNT_START, ARCHPMU_IOC_COUNT_STOP, ARCHPMU_IOC_COUNT_RESET})
            CHECK(control(fd, request, 1) == EINVAL);
        std::vector<archpmu_count_value> vals(2);
        archpmu_count_read rd{};
        rd.size = sizeof(rd);
        rd.flags = ~ARCHPMU_COUNT_READ_SUM;
        rd.nr_values = 2;
        rd.values = reinterpret_cast<uintptr_t>(vals.data());
        CHECK(ioctl_errno(fd, ARCHPMU_IOC_COUNT_READ, &rd) == EINVAL);
        CHECK(control(fd, ARCHPMU_IOC_COUNT_START) == 0);
    }
}

TEST_CASE("COUNT_READ_SUM: one row per event, the sums of its CPUs' rows", "[session_fd]")
{
    LoadedModule module(kExact);
    REQUIRE((archpmu::Device().info().capabilities & ARCHPMU_CAP_READ_SUM) != 0);
    const auto dev = open_dev();
    // GP0 held on CPU 0 only: the session's branches gets GP1 there and GP0 on CPU 1.
    const UniqueFd holder = session_file(dev.get(), {on_gp(kBranches, 0)});
    const int ret = count_open(dev.get(), {any_counter(kBranches), any_counter(kInstructions)},
                               ARCHPMU_COUNT_OPEN_FD, nullptr, {0, 1});
    REQUIRE(ret >= 0);
    const UniqueFd fd(ret);
    REQUIRE(control(fd.get(), ARCHPMU_IOC_COUNT_START) == 0);
    inject(0, kBranches, 300);
    inject(1, kBranches, 20);
    inject(0, kInstructions, 5);
    inject(1, kInstructions, 7);
    REQUIRE(control(fd.get(), ARCHPMU_IOC_COUNT_STOP) == 0);  // the times stand still

    // COUNT_READ with `flags` and room for `room`: the errno; `vals` the entries written
    // (or, on ENOSPC, as many as needed).
    const auto read = [&](uint32_t flags, uint32_t room, std::vector<archpmu_count_value>& vals) {
        vals.assign(room + 1, archpmu_count_value{});
        archpmu_count_read rd{};
        rd.size = sizeof(rd);
        rd.flags = flags;
        rd.nr_values = room;
        rd.values = reinterpret_cast<uintptr_t>(vals.data());
        const int err = ioctl_errno(fd.get(), ARCHPMU_IOC_COUNT_READ, &rd);
        vals.resize(rd.nr_values);
        return err;
    };
    std::vector<archpmu_count_value> rows, sums;
    REQUIRE(read(0, 4, rows) == 0);
    REQUIRE(rows.size() == 4);  // CPU-major: CPU 0's two events, then CPU 1's
    REQUIRE(read(ARCHPMU_COUNT_READ_SUM, 4, sums) == 0);
    REQUIRE(sums.size() == 2);
    for (uint32_t e = 0; e < 2; ++e) {
        INFO("event " << e);
        const auto& a = rows[e];
        const auto& b = rows[2 + e];
        CHECK(sums[e].cpu == ARCHPMU_ALL_CPUS);
        CHECK(sums[e].event == e);
        CHECK(sums[e].value == a.value + b.value);
        CHECK(sums[e].time_enabled == a.time_enabled + b.time_enabled);
        CHECK(sums[e].time_running == a.time_running + b.time_running);
        CHECK(sums[e].time_running > 0);
        CHECK(sums[e].flags == (a.flags | b.flags));
    }
    CHECK(sums[0].value == 320);
    CHECK(rows[0].counter != rows[2].counter);
    CHECK(sums[0].counter == ARCHPMU_NO_COUNTER);  // not the same counter everywhere
    CHECK(sums[1].value == 12);
    CHECK(rows[1].counter == rows[3].counter);
    CHECK(sums[1].counter == rows[1].counter);
    // Room for the events is enough; less is ENOSPC with that room.
    CHECK(read(ARCHPMU_COUNT_READ_SUM, 1, sums) == ENOSPC);
    CHECK(sums.size() == 2);
    CHECK(read(ARCHPMU_COUNT_READ_SUM, 2, sums) == 0);
    CHECK(read(ARCHPMU_COUNT_READ_SUM | 2, 4, sums) == EINVAL);
}

TEST_CASE("a dup of a session file keeps the session until both are closed",
          "[session_fd][release]")
{
    LoadedModule module(kExact);
    require_session_fd();
    const auto dev = open_dev();
    auto session = session_file(dev.get(), {on_gp(kBranches, 0)});
    UniqueFd copy(::dup(session.get()));
    REQUIRE(copy.valid());

    CHECK(control(session.get(), ARCHPMU_IOC_COUNT_START) == 0);
    inject(0, kBranches, 6);
    session.reset();
    CHECK(counts(copy.get()) == std::vector<uint64_t>{6});  // the same session, still counting
    inject(0, kBranches, 1);
    CHECK(counts(copy.get()) == std::vector<uint64_t>{7});
    CHECK(count_open(dev.get(), {on_gp(kBranches, 0)}) == -EBUSY);
    CHECK(perfevtsel0() != 0);

    copy.reset();
    CHECK(perfevtsel0() == 0);
    const auto again = session_file(dev.get(), {on_gp(kBranches, 0)});
    CHECK(again.valid());
}

TEST_CASE("the library's Session counts through a session file and frees it when destroyed",
          "[session_fd][counting]")
{
    LoadedModule module(kExact);
    require_session_fd();
    const auto before = open_fds();
    {
        Session s(archpmu::parse_event_list("branches@gp0,instructions"), on_cpus({0}));
        CHECK(archpmu::counter_name(s.counters()[0]) == "gp0");
        CHECK(s.cpu_count() == 1);

        // The session keeps one descriptor: its own file, not the device's.
        std::vector<int> added;
        for (int fd : open_fds())
            if (before.count(fd) == 0)
                added.push_back(fd);
        REQUIRE(added.size() == 1);
        CHECK(close_on_exec(added[0]));
        archpmu_info info{};
        info.size = sizeof(info);
        CHECK(ioctl_errno(added[0], ARCHPMU_IOC_INFO, &info) == ENOTTY);

        s.start();
        inject(0, kBranches, 1234);
        inject(0, kInstructions, 99);
        s.stop();
        inject(0, kBranches, 1);  // stopped: nothing counts
        const auto snap = s.read();
        REQUIRE(snap.values.size() == 2);
        CHECK(snap.values[0].value == 1234);
        CHECK(snap.values[1].value == 99);
        CHECK(open_errno("branches@gp0") == EBUSY);
        s.reset();
        CHECK(s.read().values[0].value == 0);
    }
    CHECK(open_fds() == before);
    CHECK(perfevtsel0() == 0);
    CHECK(open_errno("branches@gp0") == 0);
}
