// SPDX-License-Identifier: MIT
// archpmu record without side-band events: the COMM and MMAP2 records of the
// processes the samples name, from /proc (here, the test's own process).
#include <catch2/catch.hpp>

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstring>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "archpmu.h"
#include "archpmu/records.hpp"
#include "record_builder.hpp"
#include "record_maps.hpp"

using archpmu::Record;

namespace {

Record sample_of(std::uint32_t pid, std::uint32_t tid, std::uint64_t time)
{
    return sample_record(7, time, 0, 0x1000, nullptr, pid, tid);
}

std::string self_exe()
{
    std::string path(PATH_MAX, '\0');
    const ssize_t n = ::readlink("/proc/self/exe", path.data(), path.size());
    REQUIRE(n > 0);
    path.resize(static_cast<std::size_t>(n));
    return path;
}

// The follower's view of records as a ring holds them.
std::vector<Record> told_before(archpmu::tool::MapsFollower& maps,
                                const std::vector<Record>& records)
{
    FakeRing ring(4096);
    ring.place(4000, records);  // wrapping around the end of the data
    const archpmu::RingMemory memory = ring.memory();
    std::vector<Record> told;
    archpmu::read_ring_span(memory,
                            [&](const archpmu::RingSpan& span) { told = maps.before(span); });
    return told;
}

}  // namespace

TEST_CASE("without side-band events, the samples' processes are named from /proc once",
          "[record_maps]")
{
    const auto pid = static_cast<std::uint32_t>(::getpid());
    const auto tid = static_cast<std::uint32_t>(::syscall(SYS_gettid));
    archpmu::tool::MapsFollower maps(7);
    const std::vector<Record> round{sample_of(pid, tid, 5000), sample_of(pid, tid, 4000),
                                    sample_of(0, 0, 3000)};  // pid 0: the idle task
    const auto told = told_before(maps, round);
    unsigned comms = 0;
    bool exe = false;
    for (const auto& r : told) {
        const auto id = archpmu::parse_sample_id(r);
        REQUIRE(id);
        CHECK(id->pid == pid);
        CHECK(id->time == 0);  // before the round: the first one here
        CHECK(id->id == 7);
        if (r.type == PERF_RECORD_COMM)
            comms++;
        if (r.type == PERF_RECORD_MMAP2) {
            const std::string bytes(r.bytes.begin(), r.bytes.end());
            exe = exe || bytes.find(self_exe()) != std::string::npos;
        }
    }
    CHECK(comms == 1);
    CHECK(exe);
    // Told once: the next round of the same thread adds nothing.
    maps.end_round();
    CHECK(told_before(maps, {sample_of(pid, tid, 6000)}).empty());
    maps.end_round();

    // A thread new in a round whose rings are read one after the other: named
    // in the first ring at 6100, it is named before its sample of 6050 in the
    // second, at the end of the previous round.
    std::promise<std::uint32_t> started;
    std::promise<void> done;
    std::thread other([&] {
        started.set_value(static_cast<std::uint32_t>(::syscall(SYS_gettid)));
        done.get_future().wait();
    });
    const std::uint32_t other_tid = started.get_future().get();
    const auto first = told_before(maps, {sample_of(pid, other_tid, 6100)});
    done.set_value();
    other.join();
    REQUIRE(first.size() == 1);  // its COMM; the process's maps are told already
    CHECK(first[0].type == PERF_RECORD_COMM);
    CHECK(archpmu::parse_sample_id(first[0])->time == 6000);
    CHECK(told_before(maps, {sample_of(pid, other_tid, 6050)}).empty());
    // A process that is gone is not named (and nothing fails).
    CHECK(told_before(maps, {sample_of(4194305, 4194305, 7000)}).empty());
}
