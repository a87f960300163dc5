// SPDX-License-Identifier: MIT
// A bounded, seeded ioctl fuzzer (perf_fuzzer in spirit): random commands,
// sizes, flags, event configs, CPU lists and pointers on several open files,
// interleaved with start/stop/reset/read/close and injections. Every open
// makes a session file (half of them asking with ARCHPMU_COUNT_OPEN_FD, which
// is implied), a quarter of them sampling (random periods, frequencies, ring
// sizes and group reads, rings mapped and polled at random while injections
// raise PMIs); the later commands go to those files, which are closed, dup'd
// and outlive the device's files at random, and to the device's files, which
// take none of them. It must never crash or warn
// (scripts/vm fails the run on any kernel warning), every session file must
// come back close-on-exec, and once every file is closed each CPU's PMU MSRs
// must be exactly as they were.
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstring>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "archpmu.h"
#include "archpmu/device.hpp"
#include "archpmu/error.hpp"
#include "archpmu_test.h"
#include "harness.hpp"

using namespace archpmu::itest;

namespace {

class Fuzzer {
public:
    explicit Fuzzer(uint32_t seed) : rng_(seed) {}

    void step()
    {
        switch (pick(11)) {
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
            case 7:
                churn_sessions();
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
    // Where the session commands go: a session file half the time there is one
    // (the device's files answer ENOTTY).
    int target()
    {
        if (!sessions_.empty() && pick(2))
            return sessions_[pick(sessions_.size())].get();
        return fd();
    }

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

    // Keep a new session file; a full pool closes one of the others for it.
    void keep(int session)
    {
        archpmu::UniqueFd f(session);
        const int flags = ::fcntl(session, F_GETFD);
        if (flags < 0 || (flags & FD_CLOEXEC) == 0)
            ++bad_session_fds;
        if (sessions_.size() < kMaxSessions)
            sessions_.push_back(std::move(f));
        else
            sessions_[pick(sessions_.size())] = std::move(f);
    }

    // Close a session file, or keep a dup of one (its session lives until both close).
    void churn_sessions()
    {
        if (sessions_.empty())
            return;
        const std::size_t i = pick(sessions_.size());
        if (pick(4) == 0 && sessions_.size() < kMaxSessions) {
            archpmu::UniqueFd copy(::dup(sessions_[i].get()));
            if (copy.valid())
                sessions_.push_back(std::move(copy));
        } else {
            sessions_.erase(sessions_.begin() + static_cast<std::ptrdiff_t>(i));
        }
    }

    void count_open()
    {
        std::vector<archpmu_event> ev(1 + (pick(4) ? pick(4) : pick(ARCHPMU_MAX_EVENTS + 2)));
        for (auto& e : ev) {
            e.config = random_config();
            e.flags = pick(4) == 0 ? pick(32) : 0;  // groups and NO_ROTATE too
            e.counter = pick(2) ? pick(9) : (ARCHPMU_COUNTER_FIXED | pick(8));
        }
        std::vector<uint32_t> cpus(pick(3));
        for (std::size_t i = 0; i < cpus.size(); ++i)
            cpus[i] = pick(8) == 0 ? pick(6) : static_cast<uint32_t>(i);
        archpmu_count_open cmd{};
        cmd.size = pick(20) == 0 ? pick(128) : sizeof(cmd);
        cmd.flags = pick(2) ? ARCHPMU_COUNT_OPEN_FD : 0;
        if (pick(4) == 0)
            cmd.flags |= ARCHPMU_COUNT_OPEN_START;
        if (pick(3) == 0)
            cmd.flags |= ARCHPMU_COUNT_OPEN_MULTIPLEX;
        if (pick(20) == 0)
            cmd.flags |= 1U << (4 + pick(28));  // an unknown flag: refused
        if (pick(6) == 0) {
            // Task scope: this thread, this process, init, the parent, or anything.
            cmd.flags |= pick(8) ? ARCHPMU_COUNT_OPEN_TASK : 0;
            const uint32_t pids[] = {0, static_cast<uint32_t>(::getpid()), 1,
                                     static_cast<uint32_t>(::getppid()),
                                     static_cast<uint32_t>(bits())};
            cmd.task_pid = pids[pick(std::size(pids))];
            cmd.task_flags = pick(8) == 0 ? static_cast<uint32_t>(bits()) : pick(4);
        }
        cmd.nr_events = static_cast<uint32_t>(ev.size());
        cmd.nr_cpus = static_cast<uint32_t>(cpus.size());
        cmd.events = pick(30) == 0 ? 16 : reinterpret_cast<uintptr_t>(ev.data());
        cmd.cpus = pick(30) == 0 ? 8 : reinterpret_cast<uintptr_t>(cpus.data());
        std::vector<archpmu_sample_event> specs(ev.size());
        if (pick(4) == 0) {
            for (auto& sp : specs) {
                const uint64_t periods[] = {0, 1, 7, 1000, 0x7fffffff, 1ULL << 47, bits()};
                sp.period = periods[pick(std::size(periods))];
                sp.id = bits();
                sp.flags = pick(4) == 0 ? ARCHPMU_SAMPLE_FREQ : (pick(30) == 0 ? pick(8) : 0);
                if (sp.flags == ARCHPMU_SAMPLE_FREQ)
                    sp.period = pick(3) == 0 ? pick(200000) : pick(2000);
            }
            cmd.sample_events = pick(30) == 0 ? 32 : reinterpret_cast<uintptr_t>(specs.data());
            cmd.sample_flags = pick(3) == 0 ? ARCHPMU_SAMPLE_READ : (pick(30) == 0 ? pick(4) : 0);
            cmd.ring_pages = pick(3) == 0 ? 0 : 1u << pick(4);
            if (pick(30) == 0)
                cmd.ring_pages = pick(9000);
            cmd.wakeup_bytes = pick(2) ? 0 : pick(100000);
        }
        const int ret = ::ioctl(fd(), ARCHPMU_IOC_COUNT_OPEN, &cmd);
        if (ret < 0)
            return;
        if (cmd.sample_events && ret > 0)
            ++opened_sampling;
        ++opened;
        if (cmd.flags & ~(ARCHPMU_COUNT_OPEN_FD | ARCHPMU_COUNT_OPEN_START |
                          ARCHPMU_COUNT_OPEN_TASK | ARCHPMU_COUNT_OPEN_MULTIPLEX))
            ++bad_opens;  // an unknown flag was accepted
        if (ret == 0) {
            ++bad_opens;  // every open returns its session's file
            return;
        }
        if (cmd.sample_events && pick(2))
            map_and_poll(ret, cmd.ring_pages ? cmd.ring_pages : ARCHPMU_RING_DEFAULT_PAGES,
                         cmd.nr_cpus_opened);
        keep(ret);
    }

    // Map a ring (the right one, or a wrong offset or size), touch its
    // control page, poll, and unmap: the session's file may close first.
    void map_and_poll(int fd, uint32_t pages, uint32_t nr_cpus)
    {
        const size_t page = static_cast<size_t>(::getpagesize());
        size_t len = (1 + pages) * page;
        off_t off = static_cast<off_t>(pick(nr_cpus + 1) * len);
        if (pick(10) == 0)
            len += page;
        void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
        if (p != MAP_FAILED) {
            auto* rp = static_cast<archpmu_ring_page*>(p);
            rp->data_tail = pick(2) ? rp->data_head : bits();  // a reader's tail, or garbage
            ++mapped;
            if (pick(2))
                maps_.emplace_back(p, len);
            else
                ::munmap(p, len);
        }
        pollfd pfd{fd, POLLIN, 0};
        (void)::poll(&pfd, 1, 0);
    }

    void control(unsigned long request)
    {
        archpmu_count_ctl cmd{};
        cmd.size = sizeof(cmd);
        cmd.flags = pick(20) == 0 ? 2 : 0;
        (void)::ioctl(target(), request, &cmd);
    }

    void count_read()
    {
        std::vector<archpmu_count_value> vals(pick(200));
        archpmu_count_read cmd{};
        cmd.size = sizeof(cmd);
        cmd.nr_values = static_cast<uint32_t>(vals.size());
        if (pick(10) == 0) {
            // A count far above what is there: the module writes only what the
            // session has, so the buffer must hold the largest session.
            cmd.nr_values = 0xffffffffu;
            vals.resize(ARCHPMU_MAX_EVENTS * 64);
        }
        cmd.values = pick(30) == 0 ? 24 : reinterpret_cast<uintptr_t>(vals.data());
        if (pick(2) == 0)
            cmd.flags = ARCHPMU_COUNT_READ_SUM;
        if (::ioctl(target(), ARCHPMU_IOC_COUNT_READ, &cmd) == 0)
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
        const int ret = ::ioctl(target(), cmd, buf.data());
        if (cmd == ARCHPMU_IOC_COUNT_OPEN && ret > 0)
            keep(ret);  // a session file, however unlikely: closed with the rest
    }

    void inject()
    {
        archpmu_model_inject cmd{};
        cmd.size = sizeof(cmd);
        cmd.flags = 1 + pick(2);
        cmd.cpu = pick(4);
        cmd.event = static_cast<uint32_t>(random_config() & 0xffff);
        // At most 2^30 events at once: as many as a CPU could count between two
        // PMIs. (A counter that jumps further past its overflow than half its
        // range would look, on v1, not to have overflowed, as on hardware.)
        cmd.count = bits() >> (34 + pick(30));
        (void)::ioctl(fd(), ARCHPMU_IOC_MODEL_INJECT, &cmd);
    }

    void info()
    {
        archpmu_cpu_info cmd{};
        cmd.size = sizeof(cmd);
        cmd.cpu = pick(8);
        (void)::ioctl(fd(), ARCHPMU_IOC_CPU_INFO, &cmd);
    }

    static constexpr std::size_t kMaxSessions = 6;

    std::mt19937 rng_;
    std::array<archpmu::UniqueFd, 4> fds_{};
    std::vector<archpmu::UniqueFd> sessions_;     // session files, dups included
    std::vector<std::pair<void*, size_t>> maps_;  // rings still mapped

public:
    unsigned opened = 0;           // sessions the fuzzer got programmed
    unsigned read_ok = 0;          // snapshots it got back
    unsigned bad_opens = 0;        // opens that succeeded with an unknown flag or a bad return
    unsigned bad_session_fds = 0;  // session files without close-on-exec
    unsigned opened_sampling = 0;  // sampling sessions opened
    unsigned mapped = 0;           // rings mapped
    void open_all()
    {
        for (auto& f : fds_)
            f.reset(::open("/dev/archpmu", O_RDWR | O_CLOEXEC));
    }
    void close_all()
    {
        for (auto& f : fds_)
            f.reset();
        sessions_.clear();
        for (auto& [p, len] : maps_)
            ::munmap(p, len);
        maps_.clear();
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
        CHECK(fuzz.opened > 50);          // the fuzzer reached programmed sessions...
        CHECK(fuzz.read_ok > 50);         // ...and read them
        CHECK(fuzz.opened_sampling > 2);  // sampling sessions too, their rings mapped
        CHECK(fuzz.mapped > 0);
        CHECK(fuzz.bad_opens == 0);
        CHECK(fuzz.bad_session_fds == 0);
        report_figure("fuzzed-calls", 20000);
        report_figure("sessions-opened", fuzz.opened);
        report_figure("sampling-sessions-opened", fuzz.opened_sampling);

        // Every register back, GLOBAL_STATUS included (release acknowledges the
        // overflow bits of its own counters): every device and session file is closed.
        for (unsigned cpu : online_cpus()) {
            CAPTURE(cpu);
            CHECK(pmu_msr_snapshot(dev, cpu) == before[cpu]);
        }
    }
}
