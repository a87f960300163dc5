// SPDX-License-Identifier: MIT
// Sampling rings are bounded as perf bounds its rings: each user has
// ring_mlock_kb per online CPU, then RLIMIT_MEMLOCK on the user's locked_vm,
// which CAP_IPC_LOCK lifts. A refusal is ENOMEM, named in dmesg and in the
// library's message, after the refusals that name an input; closing a
// session gives its charge back. Ring pages are charged to the opener's
// memory cgroup, and a shortage is a refusal, never an OOM kill.
#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <fstream>
#include <string>
#include <vector>

#include "archpmu.h"
#include "archpmu/error.hpp"
#include "archpmu/events.hpp"
#include "archpmu/session.hpp"
#include "archpmu/unique_fd.hpp"
#include "harness.hpp"

using namespace archpmu::itest;
using archpmu::UniqueFd;

namespace {

constexpr uint32_t kRingPages = 4;  // and a control page: 5 pages a ring
constexpr long kPage = 4096;

// A sampling session of one event on `cpu` with rings of `ring_pages`, opened
// through the device file `dev`: its file, or -errno.
int open_sampling(int dev, uint32_t ring_pages, uint64_t period = 1000, uint32_t cpu = 0)
{
    archpmu_event ev = {0x00c4 | ARCHPMU_EVTSEL_USR, ARCHPMU_EVENT_GP_ONLY, 0};
    archpmu_sample_event spec{};
    spec.period = period;
    spec.id = 1;
    uint32_t cpu0 = cpu;
    archpmu_count_open op{};
    op.size = sizeof(op);
    op.nr_events = 1;
    op.events = reinterpret_cast<uintptr_t>(&ev);
    op.nr_cpus = 1;
    op.cpus = reinterpret_cast<uintptr_t>(&cpu0);
    op.sample_events = reinterpret_cast<uintptr_t>(&spec);
    op.ring_pages = ring_pages;
    const int fd = ::ioctl(dev, ARCHPMU_IOC_COUNT_OPEN, &op);
    return fd < 0 ? -errno : fd;
}

// In a forked child: RLIMIT_MEMLOCK `limit_pages`, then nobody with
// CAP_PERFMON only; exits 100 if it cannot.
void become_limited_nobody(long limit_pages)
{
    const rlimit lim{static_cast<rlim_t>(limit_pages * kPage),
                     static_cast<rlim_t>(limit_pages * kPage)};
    if (::setrlimit(RLIMIT_MEMLOCK, &lim) != 0 || !become_nobody_with_perfmon())
        ::_exit(100);
}

// Runs `body` as nobody with CAP_PERFMON only and RLIMIT_MEMLOCK `limit_pages`,
// with a file of /dev/archpmu (root's: the node is root-only); its exit status
// (0: every step as expected; otherwise the failed step).
int as_nobody(long limit_pages, int (*body)(int dev))
{
    const UniqueFd dev(::open("/dev/archpmu", O_RDWR | O_CLOEXEC));
    const pid_t child = ::fork();
    if (child == 0) {
        become_limited_nobody(limit_pages);
        ::_exit(body(dev.get()));
    }
    int status = 0;
    if (child < 0 || ::waitpid(child, &status, 0) != child || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

constexpr const char* kCgroupRoot = "/sys/fs/cgroup";

// The value after `name` in a file of "key value" lines (/proc/vmstat,
// memory.events), or 0.
uint64_t keyed_value(const std::string& file, const std::string& name)
{
    std::ifstream in(file);
    std::string key;
    uint64_t value = 0;
    while (in >> key >> value)
        if (key == name)
            return value;
    return 0;
}

// A cgroup v2 with the memory controller, where the kernel charges its own
// allocations (not booted with cgroup.memory=nokmem); what was changed to
// make it (the cgroup2 mount, +memory at the root) is undone with it.
class MemoryCgroup {
public:
    const std::string path = std::string(kCgroupRoot) + "/archpmu-ring-test";

    MemoryCgroup()
    {
        const std::string root = kCgroupRoot;
        if (!path_exists(root + "/cgroup.controllers"))
            mounted_ = ::mount("none", kCgroupRoot, "cgroup2", 0, nullptr) == 0;
        if (!path_exists(root + "/cgroup.controllers") ||
            read_file(root + "/cgroup.controllers").find("memory") == std::string::npos ||
            read_file("/proc/cmdline").find("cgroup.memory=nokmem") != std::string::npos)
            return;
        added_memory_ =
            read_file(root + "/cgroup.subtree_control").find("memory") == std::string::npos;
        if (added_memory_)
            write_file(root + "/cgroup.subtree_control", "+memory");
        ::rmdir(path.c_str());
        usable_ = ::mkdir(path.c_str(), 0755) == 0;
    }
    ~MemoryCgroup()
    {
        ::rmdir(path.c_str());
        if (added_memory_)
            std::ofstream(std::string(kCgroupRoot) + "/cgroup.subtree_control") << "-memory";
        if (mounted_)
            ::umount(kCgroupRoot);
    }
    MemoryCgroup(const MemoryCgroup&) = delete;
    MemoryCgroup& operator=(const MemoryCgroup&) = delete;

    [[nodiscard]] bool usable() const { return usable_; }
    // A counter of its memory.events ("max", "oom", "oom_kill").
    [[nodiscard]] uint64_t event(const std::string& name) const
    {
        return keyed_value(path + "/memory.events", name);
    }

private:
    bool mounted_ = false;
    bool added_memory_ = false;
    bool usable_ = false;
};

}  // namespace

TEST_CASE("sampling rings are charged to the user: ring_mlock_kb per CPU, then RLIMIT_MEMLOCK",
          "[sampling][ring-limits]")
{
    // Nobody may pin 7 pages: one ring of 5 (4 data pages and the control
    // page), neither two nor one of 9. ring_mlock_kb=4 gives a page per online
    // CPU, and RLIMIT_MEMLOCK the rest; past 6 CPUs the allowance is 0 and
    // RLIMIT_MEMLOCK all 7.
    const auto n = static_cast<long>(online_cpus().size());
    const long allowance_kb = n <= 6 ? 4 : 0;
    LoadedModule module("backend=model model_rate_percent=0 ring_mlock_kb=" +
                        std::to_string(allowance_kb));
    const long limit = 7 - (allowance_kb ? n : 0);
    KernelLog log;

    CHECK(as_nobody(limit, [](int dev) {
              UniqueFd first(open_sampling(dev, kRingPages));
              if (!first.valid())
                  return 1;
              if (open_sampling(dev, kRingPages) != -ENOMEM)
                  return 2;
              // A period no counter takes is refused by name first.
              if (open_sampling(dev, kRingPages, 1ULL << 60) != -ERANGE)
                  return 5;
              // The charge comes back with the session, every time.
              first.reset();
              for (int i = 0; i < 20; ++i) {
                  const UniqueFd again(open_sampling(dev, kRingPages));
                  if (!again.valid())
                      return 3;
              }
              // Larger rings than the limits allow, alone: refused.
              if (open_sampling(dev, 2 * kRingPages) != -ENOMEM)
                  return 4;
              return 0;
          }) == 0);
    CHECK(log.grep("sampling rings of 20 KiB refused: over the locked-memory limits "
                   "(ring_mlock_kb=" +
                   std::to_string(allowance_kb) + " per CPU for uid 65534")
              .size() >= 1);

    SECTION("the library names the limits")
    {
        // The library opens the device itself: the node open to all meanwhile.
        const OpenNode open_node;
        CHECK(as_nobody(limit, [](int) {
                  archpmu::EventSpec ev = archpmu::parse_event("branches:u");
                  ev.sample.period = 1000;
                  archpmu::SessionOptions options;
                  options.cpus = {0};
                  archpmu::SamplingOptions rings;
                  rings.ring_pages = 2 * kRingPages;
                  options.sampling = rings;
                  try {
                      archpmu::Session s({ev}, options);
                      return 1;
                  } catch (const archpmu::Error& e) {
                      const std::string what = e.what();
                      return e.code().value() == ENOMEM &&
                                     what.find("ring_mlock_kb") != std::string::npos &&
                                     what.find("ulimit -l") != std::string::npos
                                 ? 0
                                 : 2;
                  }
              }) == 0);
    }
    SECTION("CAP_IPC_LOCK lifts RLIMIT_MEMLOCK, as for perf")
    {
        // Root, with RLIMIT_MEMLOCK 0 and the allowance spent many times over.
        const rlimit zero{0, 0};
        rlimit before{};
        REQUIRE(::getrlimit(RLIMIT_MEMLOCK, &before) == 0);
        REQUIRE(::setrlimit(RLIMIT_MEMLOCK, &zero) == 0);
        const UniqueFd dev(::open("/dev/archpmu", O_RDWR | O_CLOEXEC));
        const UniqueFd big(open_sampling(dev.get(), 64));
        const UniqueFd more(open_sampling(dev.get(), 64));
        ::setrlimit(RLIMIT_MEMLOCK, &before);
        CHECK(big.valid());
        CHECK(more.valid());
    }
}

TEST_CASE("a ring's charge comes back whole after kill -9 of its holder and over CPU hotplug",
          "[sampling][ring-limits]")
{
    // As above: nobody may pin one ring of 5 pages, and not two.
    const auto cpus = online_cpus();
    const auto n = static_cast<long>(cpus.size());
    const long allowance_kb = n <= 6 ? 4 : 0;
    LoadedModule module("backend=model model_rate_percent=0 ring_mlock_kb=" +
                        std::to_string(allowance_kb));
    const long limit = 7 - (allowance_kb ? n : 0);

    SECTION("the holder killed with SIGKILL")
    {
        CHECK(as_nobody(limit, [](int dev) {
                  int ready[2];
                  if (::pipe(ready) != 0)
                      return 10;
                  const pid_t holder = ::fork();
                  if (holder == 0) {
                      const char opened = open_sampling(dev, kRingPages) >= 0 ? 'y' : 'n';
                      (void)!::write(ready[1], &opened, 1);
                      for (;;)
                          ::pause();
                  }
                  char opened = 0;
                  if (holder < 0 || ::read(ready[0], &opened, 1) != 1 || opened != 'y')
                      return 1;
                  if (open_sampling(dev, kRingPages) != -ENOMEM)
                      return 2;
                  ::kill(holder, SIGKILL);
                  int status = 0;
                  if (::waitpid(holder, &status, 0) != holder)
                      return 3;
                  // Its session went with its files: the ring may be had again, once.
                  const UniqueFd again(open_sampling(dev, kRingPages));
                  if (!again.valid())
                      return 4;
                  return open_sampling(dev, kRingPages) == -ENOMEM ? 0 : 5;
              }) == 0);
    }
    SECTION("the ring's CPU taken offline and back while it is held")
    {
        if (n < 2) {
            SUCCEED("one CPU: none to take offline");
            return;
        }
        // The allowance is per online CPU: it shrinks while the CPU is away,
        // and what the ring took from it must come back as taken.
        const uint32_t cpu = cpus.back();
        const std::string online = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/online";
        const UniqueFd dev(::open("/dev/archpmu", O_RDWR | O_CLOEXEC));
        int to_root[2];
        int to_child[2];
        REQUIRE(::pipe(to_root) == 0);
        REQUIRE(::pipe(to_child) == 0);
        const pid_t child = ::fork();
        if (child == 0) {
            become_limited_nobody(limit);
            UniqueFd held(open_sampling(dev.get(), kRingPages, 1000, cpu));
            const char opened = held.valid() ? 'y' : 'n';
            char back = 0;
            if (::write(to_root[1], &opened, 1) != 1 || ::read(to_child[0], &back, 1) != 1)
                ::_exit(101);
            held.reset();
            const UniqueFd again(open_sampling(dev.get(), kRingPages, 1000, cpu));
            if (!again.valid())
                ::_exit(1);
            ::_exit(open_sampling(dev.get(), kRingPages, 1000, cpu) == -ENOMEM ? 0 : 2);
        }
        REQUIRE(child > 0);
        char opened = 0;
        REQUIRE(::read(to_root[0], &opened, 1) == 1);
        CHECK(opened == 'y');
        write_file(online, "0");
        CHECK(read_file(online) == "0");
        write_file(online, "1");
        CHECK(read_file(online) == "1");
        const char back = 'b';
        REQUIRE(::write(to_child[1], &back, 1) == 1);
        int status = 0;
        REQUIRE(::waitpid(child, &status, 0) == child);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
        for (int fd : {to_root[0], to_root[1], to_child[0], to_child[1]})
            ::close(fd);
    }
}

TEST_CASE("rings a memory cgroup cannot hold are refused, and nothing is OOM-killed",
          "[sampling][ring-limits]")
{
    // Ring pages are charged to the opener's memory cgroup and never retried
    // into an OOM kill. Root: CAP_IPC_LOCK, so only the cgroup's limit.
    const MemoryCgroup group;
    if (!group.usable()) {
        // An assertion, so that the suite's --warn NoAssertions passes the skip.
        SUCCEED(
            "no memory cgroup charging kernel memory here (the debug kernel has no cgroups): "
            "not tested here");
        return;
    }
    LoadedModule module("backend=model model_rate_percent=0");
    write_file(group.path + "/memory.max", "4M");
    const uint64_t oom_kills = keyed_value("/proc/vmstat", "oom_kill");
    const UniqueFd dev(::open("/dev/archpmu", O_RDWR | O_CLOEXEC));
    const pid_t child = ::fork();
    if (child == 0) {
        {
            std::ofstream procs(group.path + "/cgroup.procs");
            procs << ::getpid() << std::flush;
            if (!procs)
                ::_exit(3);
        }
        // 16 MiB of ring in a 4 MiB cgroup: refused; 260 KiB: fine.
        if (open_sampling(dev.get(), ARCHPMU_RING_MAX_PAGES) != -ENOMEM)
            ::_exit(1);
        const UniqueFd small(open_sampling(dev.get(), 64));
        ::_exit(small.valid() ? 0 : 2);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(group.event("max") > 0);   // the limit was reached...
    CHECK(group.event("oom") == 0);  // ...and neither the cgroup's OOM killer
    CHECK(group.event("oom_kill") == 0);
    CHECK(keyed_value("/proc/vmstat", "oom_kill") == oom_kills);  // nor the machine's ran
}
