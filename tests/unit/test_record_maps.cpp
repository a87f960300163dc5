// SPDX-License-Identifier: MIT
// archpmu record without side-band events: the COMM and MMAP2 records of the
// processes the samples name, from /proc (here, the test's own process).
#include <catch2/catch.hpp>

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <fstream>
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

TEST_CASE("without side-band events, a process that execs is named again, as perf's exec COMM",
          "[record_maps]")
{
    int go[2];
    REQUIRE(::pipe(go) == 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        char byte;
        ::close(go[1]);
        if (::read(go[0], &byte, 1) == 1)
            ::execl("/bin/sleep", "sleep", "10", static_cast<char*>(nullptr));
        ::_exit(1);
    }
    ::close(go[0]);
    const auto pid = static_cast<std::uint32_t>(child);
    archpmu::tool::MapsFollower maps(7);
    const auto first = told_before(maps, {sample_of(pid, pid, 5000)});
    maps.end_round();
    REQUIRE(::write(go[1], "x", 1) == 1);
    ::close(go[1]);
    // Until the exec has replaced the name.
    std::string comm;
    for (int i = 0; i < 500 && comm != "sleep\n"; i++) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        std::ifstream in("/proc/" + std::to_string(child) + "/comm");
        std::getline(in, comm);
        comm += '\n';
    }
    const auto second = told_before(maps, {sample_of(pid, pid, 6000)});
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    REQUIRE(comm == "sleep\n");
    CHECK(std::count_if(first.begin(), first.end(),
                        [](const Record& r) { return r.type == PERF_RECORD_COMM; }) == 1);
    // The exec's COMM, then the new program's mappings.
    REQUIRE(!second.empty());
    CHECK(second[0].type == PERF_RECORD_COMM);
    CHECK(second[0].misc == PERF_RECORD_MISC_COMM_EXEC);
    const std::string bytes(second[0].bytes.begin(), second[0].bytes.end());
    CHECK(bytes.find("sleep") != std::string::npos);
    std::uint16_t misc = 0;
    std::memcpy(&misc, second[0].bytes.data() + 4, sizeof(misc));
    CHECK(misc == PERF_RECORD_MISC_COMM_EXEC);
    CHECK(std::any_of(second.begin() + 1, second.end(), [](const Record& r) {
        return r.type == PERF_RECORD_MMAP2 &&
               std::string(r.bytes.begin(), r.bytes.end()).find("sleep") != std::string::npos;
    }));
}
