// SPDX-License-Identifier: MIT
// Regression tests for the defects adversarial testing found on the open path:
// counter indexes past 63, a failed write-back leaving a live session, user
// memory touched under the global locks, allocation blind to perf's
// reservations, START/STOP on an already started/stopped session, and
// sharing the PMU with perf (its GLOBAL_CTRL rewrites, its reservations).
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <future>
#include <map>
#include <thread>

#include "archpmu.h"
#include "archpmu/device.hpp"
#include "archpmu/error.hpp"
#include "archpmu/events.hpp"
#include "archpmu/session.hpp"
#include "harness.hpp"

using namespace archpmu::itest;
using archpmu::Session;

namespace {

constexpr const char* kDev = "/dev/archpmu";
constexpr const char* kExact = "backend=model model_rate_percent=0 ";

using Snapshots = std::map<unsigned, std::map<uint32_t, uint64_t>>;

Snapshots snapshot_all(const archpmu::Device& dev)
{
    Snapshots all;
    for (unsigned cpu : online_cpus())
        all[cpu] = pmu_msr_snapshot(dev, cpu);
    return all;
}

// 0 or the errno; the session file a COUNT_OPEN returns is closed at once.
int ioctl_errno(int fd, unsigned long request, void* arg)
{
    const int ret = ::ioctl(fd, request, arg);
    if (ret > 0 && request == ARCHPMU_IOC_COUNT_OPEN)
        ::close(ret);
    return ret >= 0 ? 0 : errno;
}

archpmu_count_open open_cmd(archpmu_event* evs, uint32_t nr_events, uint32_t* cpus = nullptr,
                            uint32_t nr_cpus = 0)
{
    archpmu_count_open op{};
    op.size = sizeof(op);
    op.nr_events = nr_events;
    op.events = reinterpret_cast<uintptr_t>(evs);
    op.nr_cpus = nr_cpus;
    op.cpus = reinterpret_cast<uintptr_t>(cpus);
    return op;
}

archpmu::UniqueFd open_dev()
{
    archpmu::UniqueFd fd(::open(kDev, O_RDWR | O_CLOEXEC));
    REQUIRE(fd.valid());
    return fd;
}

// Nothing of the refused opens holds counters: a new open on the file works.
void check_no_session(int fd)
{
    archpmu_event ev = {0x00c4, 0, 0};
    auto op = open_cmd(&ev, 1);
    CHECK(ioctl_errno(fd, ARCHPMU_IOC_COUNT_OPEN, &op) == 0);
}

std::string open_message(const std::string& list, const std::vector<uint32_t>& cpus = {})
{
    try {
        Session s(archpmu::parse_event_list(list), on_cpus(cpus));
        return "";
    } catch (const archpmu::Error& e) {
        return e.what();
    }
}

// One page whose first touch blocks in userfaultfd until resolve() fills it.
class FaultingPage {
public:
    FaultingPage()
    {
        uffd_ = static_cast<int>(::syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK));
        REQUIRE(uffd_ >= 0);
        uffdio_api api{};
        api.api = UFFD_API;
        REQUIRE(::ioctl(uffd_, UFFDIO_API, &api) == 0);
        page_ = ::mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        REQUIRE(page_ != MAP_FAILED);
        uffdio_register reg{};
        reg.range.start = reinterpret_cast<uintptr_t>(page_);
        reg.range.len = kPage;
        reg.mode = UFFDIO_REGISTER_MODE_MISSING;
        REQUIRE(::ioctl(uffd_, UFFDIO_REGISTER, &reg) == 0);
    }
    FaultingPage(const FaultingPage&) = delete;
    FaultingPage& operator=(const FaultingPage&) = delete;
    ~FaultingPage()
    {
        resolve({});
        ::munmap(page_, kPage);
        ::close(uffd_);
    }

    [[nodiscard]] void* addr() const { return page_; }

    // Whether a fault on the page is pending within `ms`.
    bool fault_pending(int ms) const
    {
        pollfd p{uffd_, POLLIN, 0};
        return ::poll(&p, 1, ms) == 1;
    }

    // Fill the page with `words` (then zeros) and wake the faulting thread.
    void resolve(const std::vector<uint32_t>& words)
    {
        if (resolved_)
            return;
        std::vector<uint32_t> src(kPage / sizeof(uint32_t));
        std::copy(words.begin(), words.end(), src.begin());
        uffdio_copy copy{};
        copy.dst = reinterpret_cast<uintptr_t>(page_);
        copy.src = reinterpret_cast<uintptr_t>(src.data());
        copy.len = kPage;
        ::ioctl(uffd_, UFFDIO_COPY, &copy);
        resolved_ = true;
    }

private:
    static constexpr size_t kPage = 4096;
    int uffd_ = -1;
    void* page_ = nullptr;
    bool resolved_ = false;
};

}  // namespace

TEST_CASE("a pinned counter index past the CPU's counters is ECHRNG, nothing changed",
          "[hardening][counting]")
{
    LoadedModule module(std::string(kExact) + "model_version=4");
    archpmu::Device dev;
    const Snapshots before = snapshot_all(dev);
    auto fd = open_dev();
    KernelLog log;
    // 64 and 65 once aliased GP0 and GP1 through BIT_ULL(idx).
    for (uint32_t counter :
         {4U, 8U, 31U, 32U, 63U, 64U, 65U, 128U, 255U, ARCHPMU_COUNTER_FIXED | 3U,
          ARCHPMU_COUNTER_FIXED | 7U, ARCHPMU_COUNTER_FIXED | 32U, ARCHPMU_COUNTER_FIXED | 64U,
          ARCHPMU_COUNTER_FIXED | 255U}) {
        CAPTURE(counter);
        // instructions: fixed counter 0's event, so only the index can be wrong.
        archpmu_event ev = {0x00c0, ARCHPMU_EVENT_PIN, counter};
        auto op = open_cmd(&ev, 1);
        CHECK(ioctl_errno(fd.get(), ARCHPMU_IOC_COUNT_OPEN, &op) == ECHRNG);
        CHECK(op.bad_event == 0);
    }
    CHECK(snapshot_all(dev) == before);
    CHECK(log.grep("programming the counters failed").empty());
    check_no_session(fd.get());
}

TEST_CASE("a COUNT_OPEN whose write-back faults leaves no session and the PMU as found",
          "[hardening][counting]")
{
    LoadedModule module(std::string(kExact) + "model_version=4");
    archpmu::Device dev;
    const Snapshots before = snapshot_all(dev);
    const long page = ::sysconf(_SC_PAGESIZE);
    void* mem = ::mmap(nullptr, static_cast<size_t>(page), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(mem != MAP_FAILED);
    auto fd = open_dev();

    SECTION("the events array is read-only")
    {
        auto* evs = static_cast<archpmu_event*>(mem);
        evs[0] = {0x00c0, 0, 0};
        evs[1] = {0x00c4, 0, 0};
        REQUIRE(::mprotect(mem, static_cast<size_t>(page), PROT_READ) == 0);
        auto op = open_cmd(evs, 2);
        CHECK(ioctl_errno(fd.get(), ARCHPMU_IOC_COUNT_OPEN, &op) == EFAULT);
    }
    SECTION("the archpmu_count_open struct is read-only")
    {
        archpmu_event evs[2] = {{0x00c0, 0, 0}, {0x00c4, 0, 0}};
        auto* op = static_cast<archpmu_count_open*>(mem);
        *op = open_cmd(evs, 2);
        REQUIRE(::mprotect(mem, static_cast<size_t>(page), PROT_READ) == 0);
        CHECK(ioctl_errno(fd.get(), ARCHPMU_IOC_COUNT_OPEN, op) == EFAULT);
    }
    CHECK(snapshot_all(dev) == before);
    // No reservation is left either: the counters are free for the next session.
    CHECK(load_hog(0) == 0);
    CHECK(unload_hog() == 0);
    check_no_session(fd.get());
    ::munmap(mem, static_cast<size_t>(page));
}

TEST_CASE("a CPU list in slowly faulting memory blocks neither other sessions nor hotplug",
          "[hardening][counting][hotplug]")
{
    const auto cpus = online_cpus();
    REQUIRE(cpus.size() >= 2);
    LoadedModule module(std::string(kExact) + "model_version=4");
    FaultingPage slow;
    // The stalled open: its cpus[] faults until the test resolves it.
    auto stalled = std::async(std::launch::async, [&] {
        auto fd = open_dev();
        archpmu_event ev = {0x00c4, 0, 0};
        auto op = open_cmd(&ev, 1, static_cast<uint32_t*>(slow.addr()), 1);
        return ioctl_errno(fd.get(), ARCHPMU_IOC_COUNT_OPEN, &op);
    });
    REQUIRE(slow.fault_pending(5000));

    // Meanwhile another session opens and a CPU goes off and on line.
    auto others = std::async(std::launch::async, [&] {
        Session s(archpmu::parse_event_list("instructions,branches"));
        s.start();
        const std::string online =
            "/sys/devices/system/cpu/cpu" + std::to_string(cpus.back()) + "/online";
        write_file(online, "0");
        write_file(online, "1");
        s.stop();
        return true;
    });
    const bool done = others.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
    CHECK(done);
    slow.resolve({0});
    CHECK(stalled.get() == 0);
    CHECK(others.get());
}

TEST_CASE("allocation goes around counters perf holds, and says who holds them",
          "[hardening][sharing]")
{
    LoadedModule module(std::string(kExact) + "model_version=4 model_gp=4");
    SECTION("perf holds GP0: branches goes to GP1")
    {
        REQUIRE(load_hog(0) == 0);
        {
            Session s(archpmu::parse_event_list("branches"), on_cpus({0}));
            CHECK(archpmu::counter_name(s.counters()[0]) == "gp1");
        }
        CHECK(unload_hog() == 0);
    }
    SECTION("perf holds GP0-2: the second GP event names the event, the CPU and perf")
    {
        REQUIRE(load_hog(0, 3) == 0);
        KernelLog log;
        const std::string msg = open_message("branches,branch-misses", {0});
        CHECK_THAT(msg, Catch::Contains("'branch-misses'"));
        CHECK_THAT(msg, Catch::Contains("CPU 0"));
        CHECK_THAT(msg, Catch::Contains("perf"));
        CHECK(log.grep("CPU 0: event 1 does not fit: GP counters 0x7 are held by perf").size() ==
              1);
        CHECK(unload_hog() == 0);
    }
    SECTION("another session holds every GP counter: its pid is named")
    {
        Session holder(archpmu::parse_event_list("branches@gp,branches@gp,"
                                                 "branches@gp,branches@gp"),
                       on_cpus({0}));
        const std::string msg = open_message("branch-misses", {0});
        CHECK_THAT(msg, Catch::Contains("'branch-misses'"));
        CHECK_THAT(msg, Catch::Contains("pid " + std::to_string(::getpid())));
    }
}

TEST_CASE("GP 8 and up have no reservation of their own: perf is kept off them too",
          "[hardening][sharing][v6]")
{
    LoadedModule module(std::string(kExact) + dump_params("GenuineIntel00C0662_ArrowLake_07.txt"));
    // perf on a kernel that reads leaf 0AH holds GP 0-7 and rewrites GLOBAL_CTRL with
    // their bits, which stops GP 8 and 9: nothing opens, not even on them.
    REQUIRE(load_hog(0, 8) == 0);
    for (const char* spec : {"branches", "branches@gp8", "instructions"}) {
        CAPTURE(spec);
        CHECK_THAT(open_message(spec, {0}), Catch::Contains("perf"));
    }
    CHECK(unload_hog() == 0);
    // Holding one legacy counter, perf holds 8 and up too: the plan knows it before it
    // places anything (it placed GP 8 and reserved GP 0 before).
    REQUIRE(load_hog(3) == 0);
    CHECK_THAT(open_message("branches@gp8", {0}), Catch::Contains("perf"));
    {
        Session s(archpmu::parse_event_list("branches"), on_cpus({0}));
        CHECK(archpmu::counter_name(s.counters()[0]) == "gp0");
    }
    CHECK(unload_hog() == 0);
    {
        // A session on GP 8 alone holds a legacy counter's reservation: perf stays out.
        Session s(archpmu::parse_event_list("branches@gp8"), on_cpus({0}));
        CHECK(load_hog(0) != 0);
    }
    // A plan refused in its allocation (11 GP events on 10) gives back every reservation
    // it took, as the refusals above did: perf can hold all eight again.
    std::string eleven = "branches@gp";
    for (int i = 0; i < 10; ++i)
        eleven += ",branches@gp";
    CHECK_THAT(open_message(eleven, {0}), !Catch::Equals(""));
    CHECK(load_hog(0, 8) == 0);
    CHECK(unload_hog() == 0);
}

TEST_CASE("archpmu and perf never share the PMU", "[hardening][sharing]")
{
    LoadedModule module(std::string(kExact) + "model_version=4 model_gp=4");
    SECTION("perf holding every GP counter refuses even a fixed-counter session")
    {
        REQUIRE(load_hog(0, 4) == 0);
        KernelLog log;
        archpmu_event ev = {0x00c0, 0, 0};
        auto fd = open_dev();
        auto op = open_cmd(&ev, 1);
        CHECK(ioctl_errno(fd.get(), ARCHPMU_IOC_COUNT_OPEN, &op) == EBUSY);
        CHECK(op.busy_holder == ARCHPMU_HOLDER_PERF);
        CHECK(log.grep("perf holds every GP counter").size() == 1);
        CHECK_THAT(open_message("instructions"), Catch::Contains("perf"));
        CHECK(unload_hog() == 0);
        // The out fields need no clearing before a retry.
        CHECK(ioctl_errno(fd.get(), ARCHPMU_IOC_COUNT_OPEN, &op) == 0);
        CHECK(op.busy_holder == ARCHPMU_HOLDER_UNKNOWN);
    }
    SECTION("a caller of the first, 64-byte layout gets its layout's refusal, nothing beyond it")
    {
        REQUIRE(load_hog(0, 4) == 0);
        archpmu_event ev = {0x00c0, 0, 0};
        auto fd = open_dev();
        auto op = open_cmd(&ev, 1);
        op.size = offsetof(archpmu_count_open, busy_holder);
        op.busy_holder = 0x5a5a5a5a;  // beyond its size: never read, never written
        op.busy_pid = 0x5a5a5a5a;
        CHECK(ioctl_errno(fd.get(), ARCHPMU_IOC_COUNT_OPEN, &op) == EBUSY);
        CHECK(op.busy_holder == 0x5a5a5a5a);
        CHECK(op.busy_pid == 0x5a5a5a5a);
        CHECK(op.bad_event == ~0U);
        CHECK(unload_hog() == 0);
    }
    SECTION("while a session of fixed counters only exists, perf cannot reserve")
    {
        {
            Session s(archpmu::parse_event_list("instructions,cycles"));
            CHECK(load_hog(0, 4) == EBUSY);
        }
        CHECK(load_hog(0, 4) == 0);
        CHECK(unload_hog() == 0);
    }
}

TEST_CASE("perf's wholesale GLOBAL_CTRL rewrites change neither counts nor started state",
          "[hardening][sharing]")
{
    LoadedModule module(std::string(kExact) + "model_version=4");
    archpmu::Device dev;
    Session s(archpmu::parse_event_list("instructions,branches"), on_cpus({0}));
    // What x86_pmu_disable_all() and intel_pmu_enable_all() write.
    const uint64_t every_counter = 0xfULL | 0x7ULL << 32;
    const auto perf_disable_enable = [&] {
        model_write_msr(dev, 0, 0x38f, 0);
        model_write_msr(dev, 0, 0x38f, every_counter);
    };
    const auto counts = [&] {
        std::vector<uint64_t> v;
        for (const auto& c : s.read().values)
            v.push_back(c.value);
        return v;
    };
    perf_disable_enable();
    inject_events(0, 0x00c0, 10);
    inject_events(0, 0x00c4, 10);
    CHECK(counts() == std::vector<uint64_t>{0, 0});  // still stopped
    s.start();
    perf_disable_enable();
    inject_events(0, 0x00c0, 20);
    inject_events(0, 0x00c4, 20);
    CHECK(counts() == std::vector<uint64_t>{20, 20});  // still started
    s.stop();
    perf_disable_enable();
    inject_events(0, 0x00c0, 30);
    inject_events(0, 0x00c4, 30);
    CHECK(counts() == std::vector<uint64_t>{20, 20});  // stopped again
}

TEST_CASE("START on a started session and STOP on a stopped one succeed and change nothing",
          "[hardening][counting]")
{
    LoadedModule module(std::string(kExact) + "model_version=4");
    auto dev = open_dev();
    archpmu_event ev = {0x00c0, 0, 0};
    auto op = open_cmd(&ev, 1);
    const archpmu::UniqueFd fd(::ioctl(dev.get(), ARCHPMU_IOC_COUNT_OPEN, &op));
    REQUIRE(fd.valid());
    archpmu_count_ctl ctl{};
    ctl.size = sizeof(ctl);
    CHECK(ioctl_errno(fd.get(), ARCHPMU_IOC_COUNT_STOP, &ctl) == 0);
    CHECK(ioctl_errno(fd.get(), ARCHPMU_IOC_COUNT_START, &ctl) == 0);
    CHECK(ioctl_errno(fd.get(), ARCHPMU_IOC_COUNT_START, &ctl) == 0);
    inject_events(0, 0x00c0, 5);
    CHECK(ioctl_errno(fd.get(), ARCHPMU_IOC_COUNT_STOP, &ctl) == 0);
    CHECK(ioctl_errno(fd.get(), ARCHPMU_IOC_COUNT_STOP, &ctl) == 0);
    archpmu_count_value vals[16]{};
    archpmu_count_read rd{};
    rd.size = sizeof(rd);
    rd.nr_values = 16;
    rd.values = reinterpret_cast<uintptr_t>(vals);
    REQUIRE(ioctl_errno(fd.get(), ARCHPMU_IOC_COUNT_READ, &rd) == 0);
    CHECK(vals[0].cpu == 0);
    CHECK(vals[0].value == 5);
}

TEST_CASE("kill -9 mid-count and hotplug during counting, repeated, leave the PMU as found",
          "[hardening][release][hotplug]")
{
    const auto cpus = online_cpus();
    REQUIRE(cpus.size() >= 2);
    LoadedModule module(std::string(kExact) + "model_version=4 model_full_width=1");
    archpmu::Device dev;
    const Snapshots before = snapshot_all(dev);

    constexpr int kKills = 20;
    for (int i = 0; i < kKills; ++i) {
        CAPTURE(i);
        const pid_t child = ::fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            Session s(
                archpmu::parse_event_list("instructions,cycles,branches,"
                                          "branch-misses"));
            for (;;) {  // start, read, stop until killed, so the kill lands anywhere
                s.start();
                (void)s.read();
                s.stop();
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5 + 7 * i));
        ::kill(child, SIGKILL);
        int status = 0;
        REQUIRE(::waitpid(child, &status, 0) == child);
        CHECK(WIFSIGNALED(status));
    }
    CHECK(snapshot_all(dev) == before);
    report_figure("kills", kKills);

    // Exact counts through repeated hotplug of the last CPU.
    const unsigned last = cpus.back();
    const std::string online = "/sys/devices/system/cpu/cpu" + std::to_string(last) + "/online";
    constexpr int kCycles = 10;
    {
        Session s(archpmu::parse_event_list("instructions,branches@gp"), on_cpus({0, last}));
        s.start();
        for (int i = 0; i < kCycles; ++i) {
            inject_events(last, 0x00c0, 10);
            write_file(online, "0");
            write_file(online, "1");
        }
        inject_events(last, 0x00c0, 10);
        s.stop();
        const auto snap = s.read();
        REQUIRE(snap.values.size() == 4);
        CHECK(snap.values[2].cpu == last);
        CHECK(snap.values[2].value == 10 * (kCycles + 1));
        CHECK(snap.values[3].value == 0);
    }
    CHECK(snapshot_all(dev) == before);
    report_figure("hotplug-transitions", 2 * kCycles);
}
