// SPDX-License-Identifier: MIT
// Call chains (ARCHPMU_SAMPLE_CALLCHAIN, record -g): perf's context markers,
// the kernel's frames from its unwinder, the user's by frame pointers, and a
// broken frame pointer that ends the chain and nothing else; and the user
// registers and stack (ARCHPMU_SAMPLE_USER_STACK, --call-graph dwarf) that
// let perf unwind code built without frame pointers.
#include <linux/perf_event.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "archpmu.h"
#include "archpmu/error.hpp"
#include "archpmu/events.hpp"
#include "archpmu/records.hpp"
#include "archpmu/session.hpp"
#include "harness.hpp"

using namespace archpmu::itest;

namespace {

constexpr const char* kExact = "backend=model model_rate_percent=0";
constexpr uint32_t kBranches = 0x00c4;

std::string spin(const char* mode, const char* seconds, unsigned cpu)
{
    return std::string(ARCHPMU_SPIN) + " " + mode + " " + seconds + " " + std::to_string(cpu);
}

// perf script's samples, each the symbols of its chain, innermost first.
std::vector<std::vector<std::string>> chains_of(const std::string& file)
{
    const auto script = run_command("perf script -i " + file + " -F ip,sym");
    INFO(script.out.substr(0, 4000));
    REQUIRE(script.status == 0);
    std::vector<std::vector<std::string>> out;
    std::vector<std::string> chain;
    std::istringstream in(script.out);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream words(line);
        std::string ip;
        std::string sym;
        if (!(words >> ip >> sym)) {  // a blank line ends a sample
            if (!chain.empty())
                out.push_back(std::move(chain));
            chain.clear();
            continue;
        }
        chain.push_back(sym.substr(0, sym.find('+')));
    }
    if (!chain.empty())
        out.push_back(std::move(chain));
    return out;
}

bool calls_in_order(const std::vector<std::string>& chain, const std::vector<std::string>& want)
{
    auto at = chain.begin();
    for (const auto& w : want) {
        at = std::find(at, chain.end(), w);
        if (at == chain.end())
            return false;
    }
    return true;
}

// archpmu record OPTIONS -o FILE -- WORKLOAD, the recorder on CPU 0 so that the
// workload's CPU time is its own: perf script's chains of the recording.
std::vector<std::vector<std::string>> record_chains(const std::string& options,
                                                    const std::string& workload,
                                                    const std::string& file)
{
    ::unlink(file.c_str());
    const auto rec = run_command("taskset -c 0 " + std::string(ARCHPMU_TOOL) + " record " +
                                 options + " -o " + file + " -- " + workload);
    INFO(rec.out);
    REQUIRE(rec.status == 0);
    return chains_of(file);
}

// Of the samples whose innermost frame is `leaf`: how many, and how many with
// `callers` (innermost first) in their chain.
std::pair<unsigned, unsigned> leaf_with_callers(const std::vector<std::vector<std::string>>& chains,
                                                const std::string& leaf,
                                                const std::vector<std::string>& callers)
{
    unsigned in_leaf = 0;
    unsigned whole = 0;
    for (const auto& chain : chains) {
        if (chain.front() != leaf)
            continue;
        in_leaf++;
        if (calls_in_order(chain, callers))
            whole++;
    }
    return {in_leaf, whole};
}

const std::vector<std::string> kChainCallers{"archpmu_chain_b", "archpmu_chain_a", "main"};

}  // namespace

TEST_CASE("a sample's call chain has perf's markers; a user-mode event's has no kernel part",
          "[callchain]")
{
    LoadedModule mod(kExact);
    const unsigned cpu = online_cpus().back();
    for (const char* event : {"branches", "branches:u"}) {
        CAPTURE(event);
        auto events = archpmu::parse_event_list(event);
        events[0].sample.period = 10;
        archpmu::SessionOptions o;
        o.cpus = {cpu};
        o.sampling = archpmu::SamplingOptions{};
        o.sampling->callchain = true;
        archpmu::Session s(events, o);
        REQUIRE(s.callchain());
        s.start();
        pin_to(cpu);
        inject_here(kBranches, 10);  // the PMI interrupts the injecting ioctl
        unpin();
        s.stop();
        std::vector<archpmu::Sample> samples;
        for (const auto& r : s.drain_merged())
            if (auto one = archpmu::parse_sample(r, false))
                samples.push_back(*one);
        REQUIRE(samples.size() == 1);
        const auto& chain = samples[0].callchain;
        REQUIRE(chain.size() >= 2);
        const auto user = std::find(chain.begin(), chain.end(), PERF_CONTEXT_USER);
        REQUIRE(user != chain.end());
        if (std::string(event) == "branches") {
            // Kernel mode: the ioctl's frames down to the system call's entry, then the user's.
            CHECK(chain[0] == PERF_CONTEXT_KERNEL);
            CHECK(chain[1] == samples[0].ip);
            CHECK(user - chain.begin() >= 4);
        } else {
            // User mode only: where user mode left off, and no kernel address at all.
            CHECK(chain[0] == PERF_CONTEXT_USER);
            CHECK(chain[1] == samples[0].ip);
            CHECK(std::find(chain.begin(), chain.end(), PERF_CONTEXT_KERNEL) == chain.end());
            for (auto it = user + 1; it != chain.end(); ++it)
                CHECK(*it < (1ULL << 47));
        }
    }
}

TEST_CASE("record -g: perf report shows main -> a -> b -> the spin of a frame-pointer program",
          "[callchain][record-tool]")
{
    LoadedModule mod("backend=model model_version=4");
    const unsigned cpu = online_cpus().back();
    const std::string file = "/tmp/archpmu-record-g.data";
    const auto [in_spin, whole] = leaf_with_callers(
        record_chains("-g -e instructions:u -F 1000", spin("chain", "1", cpu), file),
        "archpmu_spin_user", kChainCallers);
    INFO(in_spin << " samples in archpmu_spin_user, " << whole << " with main -> a -> b");
    CHECK(in_spin >= 200);
    CHECK(whole * 10 >= in_spin * 9);
    const auto report = run_command("perf report -g --stdio -i " + file);
    INFO(report.out.substr(0, 4000));
    REQUIRE(report.status == 0);
    CHECK(report.out.find("archpmu_chain_a") != std::string::npos);
}

TEST_CASE("record -g -e cycles:k over system calls: kernel chains reach the syscall entry",
          "[callchain][record-tool]")
{
    LoadedModule mod("backend=model model_version=4");
    const unsigned cpu = online_cpus().back();
    unsigned samples = 0;
    unsigned entry = 0;
    for (const auto& chain : record_chains("-g -e cycles:k -F 1000", spin("syscalls", "1", cpu),
                                           "/tmp/archpmu-record-gk.data")) {
        samples++;
        if (std::any_of(chain.begin(), chain.end(), [](const std::string& s) {
                return s.rfind("entry_SYSCALL_64", 0) == 0 || s == "do_syscall_64";
            }))
            entry++;
    }
    INFO(samples << " samples, " << entry << " through the syscall entry");
    CHECK(samples >= 100);
    CHECK(entry * 2 >= samples);
}

TEST_CASE("a broken frame pointer ends the user chain, and nothing else happens",
          "[callchain][record-tool]")
{
    LoadedModule mod("backend=model model_version=4");
    const unsigned cpu = online_cpus().back();
    const std::string file = "/tmp/archpmu-record-badfp.data";
    unsigned in_loop = 0;
    unsigned cut = 0;
    for (const auto& chain :
         record_chains("-g -e instructions:u -F 1000", spin("badfp", "1", cpu), file)) {
        if (chain.front() != "archpmu_spin_badfp")
            continue;
        in_loop++;
        if (chain.size() == 1)
            cut++;
    }
    INFO(in_loop << " samples in the loop, " << cut << " with only their ip");
    CHECK(in_loop >= 100);
    CHECK(cut * 10 >= in_loop * 9);
    // The module goes on sampling: a second recording works.
    const auto again = run_tool("record -e instructions:u -F 100 -o " + file + ".2 -- true");
    CHECK(again.status == 0);
}

TEST_CASE("a sample's user registers and stack are where user mode left off",
          "[callchain][user-stack]")
{
    LoadedModule mod(kExact);
    const unsigned cpu = online_cpus().back();
    auto events = archpmu::parse_event_list("branches");
    events[0].sample.period = 10;
    archpmu::SessionOptions o;
    o.cpus = {cpu};
    o.sampling = archpmu::SamplingOptions{};
    o.sampling->callchain = true;
    o.sampling->user_stack = 4096;
    archpmu::Session s(events, o);
    s.start();
    pin_to(cpu);
    volatile std::uint64_t marker = 0x6172636870'6d75ULL;  // on this thread's stack
    inject_here(kBranches, 10);
    unpin();
    s.stop();
    std::vector<archpmu::Sample> samples;
    for (const auto& r : s.drain_merged())
        if (auto one = archpmu::parse_sample(r, s.sample_format()))
            samples.push_back(*one);
    REQUIRE(samples.size() == 1);
    const auto& one = samples[0];
    // The kernel's chain only: the user's is the stack's to unwind.
    REQUIRE_FALSE(one.callchain.empty());
    CHECK(one.callchain[0] == PERF_CONTEXT_KERNEL);
    CHECK(std::find(one.callchain.begin(), one.callchain.end(), PERF_CONTEXT_USER) ==
          one.callchain.end());
    REQUIRE(one.user_regs.size() == 20);
    const std::uint64_t sp = one.user_regs[7];
    const std::uint64_t ip = one.user_regs[8];
    CHECK(ip < (1ULL << 47));
    CHECK(sp < (1ULL << 47));
    REQUIRE(one.user_stack.size() == 4096);
    // The copy is this thread's stack: the marker is in it, where it lives.
    const auto at = reinterpret_cast<std::uintptr_t>(&marker);
    REQUIRE(at >= sp);
    REQUIRE(at + 8 <= sp + 4096);
    std::uint64_t seen = 0;
    std::memcpy(&seen, one.user_stack.data() + (at - sp), 8);
    CHECK(seen == marker);

    // A sample must fit in half the ring: the library names the sizes before the module refuses.
    o.sampling->ring_pages = 1;
    try {
        archpmu::Session small(events, o);
        FAIL("a 4096-byte user stack in a one-page ring was taken");
    } catch (const archpmu::Error& e) {
        CHECK(e.code().value() == EINVAL);
        CHECK_THAT(e.what(), Catch::Contains("a user stack of 4096 bytes must fit in half a "
                                             "ring: give at least 2 ring pages, not 1"));
    }
}

TEST_CASE("record --call-graph dwarf: perf unwinds main -> a -> b in code without frame pointers",
          "[callchain][user-stack][record-tool]")
{
    LoadedModule mod("backend=model model_version=4");
    const unsigned cpu = online_cpus().back();
    const std::string file = "/tmp/archpmu-record-dwarf.data";
    const auto [in_spin, whole] = leaf_with_callers(
        record_chains("--call-graph dwarf -e instructions:u -F 500",
                      std::string(ARCHPMU_SPIN_NOFP) + " chain 1 " + std::to_string(cpu), file),
        "archpmu_spin_user", kChainCallers);
    INFO(in_spin << " samples in archpmu_spin_user, " << whole << " with main -> a -> b");
    CHECK(in_spin >= 100);
    CHECK(whole * 10 >= in_spin * 9);
    const auto header = run_command("perf evlist -v -i " + file);
    INFO(header.out);
    CHECK(header.out.find("REGS_USER|STACK_USER") != std::string::npos);
    CHECK(header.out.find("sample_stack_user: 8192") != std::string::npos);
}
