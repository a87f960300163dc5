// SPDX-License-Identifier: MIT
#include "selftest_checks.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <functional>
#include <map>
#include <thread>

#include "archpmu.h"
#include "archpmu/error.hpp"
#include "archpmu/events.hpp"
#include "archpmu/records.hpp"
#include "archpmu/sampling.hpp"
#include "archpmu/session.hpp"
#include "archpmu/unique_fd.hpp"
#include "selftest_verdict.hpp"

// Two instructions an iteration (n >= 1), then ret: its count is known, and a
// sample's IP falls between its two symbols.
extern "C" void archpmu_selftest_spin(std::uint64_t iterations);
extern "C" void archpmu_selftest_spin_end();
asm(R"(
    .text
    .p2align 4
    .globl archpmu_selftest_spin
    .type archpmu_selftest_spin, @function
archpmu_selftest_spin:
1:  dec %rdi
    jnz 1b
    ret
    .size archpmu_selftest_spin, .-archpmu_selftest_spin
    .globl archpmu_selftest_spin_end
    .type archpmu_selftest_spin_end, @function
archpmu_selftest_spin_end:
    ret
    .size archpmu_selftest_spin_end, .-archpmu_selftest_spin_end
)");

namespace archpmu::tool {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Hardware tolerances (archpmu-selftest(1)); on the model every comparison is exact.
constexpr std::uint64_t kFixedVsGpPerMillion = 100;  // fixed0 and GP C0H apart
constexpr std::uint64_t kLoopExcessPercent = 1;      // other user code on the CPU meanwhile
constexpr std::uint64_t kLoopExcessMin = 200000;
constexpr std::uint64_t kCmaskPercent = 1;  // CMASK=1 + CMASK=1,INV against cycles
constexpr unsigned kSamplesInSpinPercent = 90;
constexpr unsigned kMinSamples = 10;
// Iterations between two reads of the clock: the reads are the loop's only
// other code, and on a debug kernel under TCG each takes long enough that a
// chunk of 100,000 left 15% of the samples on them.
constexpr std::uint64_t kSpinChunk = 1000000;

// Spins for `duration`; returns the loop's iterations.
std::uint64_t spin_for(Clock::duration duration)
{
    const auto end = Clock::now() + duration;
    std::uint64_t n = 0;
    do {
        archpmu_selftest_spin(kSpinChunk);
        n += kSpinChunk;
    } while (Clock::now() < end);
    return n;
}

void pin_to(std::uint32_t cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (::sched_setaffinity(0, sizeof(set), &set) != 0)
        throw Error(errno, "selftest: sched_setaffinity to CPU " + std::to_string(cpu));
}

bool within(std::uint64_t a, std::uint64_t b, std::uint64_t slack)
{
    return (a > b ? a - b : b - a) <= slack;
}

std::string num(std::uint64_t v)
{
    return std::to_string(v);
}

std::string hex(std::uint64_t v)
{
    char buf[24];
    (void)std::snprintf(buf, sizeof(buf), "%#llx", static_cast<unsigned long long>(v));
    return buf;
}

// One check, run with its refusals and errors turned into a failure that says why.
Check guarded(const std::string& name, const std::function<Check()>& body)
{
    try {
        return body();
    } catch (const Error& e) {
        return {name, Outcome::fail, e.what(), {}};
    }
}

// Each event's count, over every CPU of the session.
std::vector<std::uint64_t> counted(const Session& s)
{
    std::vector<std::uint64_t> out(s.events().size());
    for (const auto& v : s.read().values)
        out.at(v.event) += v.value;
    return out;
}

// This thread's counts where the module has task sessions, so that other
// processes on the CPU add nothing; else the CPU's (v1 has no task sessions).
Session own_counts(const SelftestTarget& t, std::vector<EventSpec> events)
{
    SessionOptions so;
    so.device = t.device;
    if (t.task_sessions)
        so.task = TaskScope{TaskScope::Kind::thread, 0, false};
    else
        so.cpus = {t.cpu.cpu};
    return Session(std::move(events), so);
}

std::string scope_of(const SelftestTarget& t)
{
    return t.task_sessions ? " (this thread)" : " (CPU " + num(t.cpu.cpu) + ", every process)";
}

Check fixed_vs_gp(const SelftestTarget& t)
{
    Check c{"fixed-vs-gp", Outcome::pass, {}, {}};
    pin_to(t.cpu.cpu);  // for all the checks after it
    if (t.cpu.fixed_counters().empty() || t.cpu.fixed_counters().front() != 0) {
        c.outcome = Outcome::skip;
        c.summary = "no fixed counter 0 on CPU " + num(t.cpu.cpu);
        return c;
    }
    Session s = own_counts(t, {parse_event("instructions:u@fixed0"), parse_event("r00c0:u@gp")});
    s.start();
    const std::uint64_t n = spin_for(milliseconds(200));
    s.stop();
    const auto v = counted(s);
    const std::uint64_t slack = t.model ? 0 : v[0] / 1000000 * kFixedVsGpPerMillion + 16;
    c.summary = "fixed0 " + num(v[0]) + ", " + counter_name(s.counters()[1]) + " C0H/00H " +
                num(v[1]) + (t.model ? " (exact)" : " (within " + num(slack) + ")") + scope_of(t);
    if (v[0] == 0 || !within(v[0], v[1], slack))
        c.outcome = Outcome::fail;
    // The loop itself: only the hardware counts what runs.
    if (!t.model) {
        const std::uint64_t least = 2 * n;
        const std::uint64_t most = least + least / 100 * kLoopExcessPercent + kLoopExcessMin;
        c.lines.push_back("user instructions " + num(v[1]) + " for " + num(n) +
                          " iterations of 2: expected " + num(least) + " to " + num(most));
        if (v[1] < least || v[1] > most)
            c.outcome = Outcome::fail;
    }
    return c;
}

Check usr_os(const SelftestTarget& t)
{
    Check c{"usr-os", Outcome::pass, {}, {}};
    Session s = own_counts(t, {parse_event("r00c0:u@gp"), parse_event("r00c0:k@gp")});
    s.start();
    spin_for(milliseconds(150));
    const auto spin = counted(s);
    s.reset();
    // In the kernel: clearing the buffer of each read of /dev/zero.
    const UniqueFd zero(::open("/dev/zero", O_RDONLY | O_CLOEXEC));
    std::vector<char> buf(1 << 20);
    const auto end = Clock::now() + milliseconds(150);
    while (zero.valid() && Clock::now() < end)
        if (::read(zero.get(), buf.data(), buf.size()) < 0)
            break;
    const auto reads = counted(s);
    s.stop();
    c.summary = "a user loop: " + num(spin[0]) + " user, " + num(spin[1]) +
                " kernel instructions; reads of /dev/zero: " + num(reads[0]) + " user, " +
                num(reads[1]) + " kernel" + scope_of(t);
    if (!usr_os_separates({spin[0], spin[1]}, {reads[0], reads[1]}))
        c.outcome = Outcome::fail;
    return c;
}

Check cmask_inv(const SelftestTarget& t)
{
    Check c{"cmask-inv", Outcome::pass, {}, {}};
    if (t.cpu.gp_counters < 3 || !(t.cpu.events_mask & 1)) {
        c.outcome = Outcome::skip;
        c.summary = "needs 3 GP counters and the cycles event on CPU " + num(t.cpu.cpu);
        return c;
    }
    Session s =
        own_counts(t, {parse_event("cpu/event=0xc0,cmask=1/@gp"),
                       parse_event("cpu/event=0xc0,cmask=1,inv/@gp"), parse_event("r003c@gp")});
    s.start();
    spin_for(milliseconds(150));
    s.stop();
    const auto v = counted(s);
    const std::uint64_t slack = t.model ? 0 : v[2] / 100 * kCmaskPercent + 1000;
    c.summary = "cycles retiring an instruction " + num(v[0]) + " + retiring none " + num(v[1]) +
                " = " + num(v[0] + v[1]) + ", unhalted cycles " + num(v[2]) +
                (t.model ? " (exact)" : " (within " + num(slack) + ")") + scope_of(t);
    if (v[2] == 0 || !within(v[0] + v[1], v[2], slack))
        c.outcome = Outcome::fail;
    // The threshold itself: the loop retires an instruction nearly every cycle.
    // (The model's rates retire less than one a cycle, so its split is all INV.)
    if (!t.model && v[0] < v[2] / 2) {
        c.outcome = Outcome::fail;
        c.lines.emplace_back(
            "a loop that retires every cycle retired in under half of them: "
            "CMASK is not applied as programmed");
    }
    return c;
}

Check sampling(const SelftestTarget& t)
{
    Check c{"sampling", Outcome::pass, {}, {}};
    EventSpec event = parse_event("instructions:u");
    event.sample.freq_hz = 1000;
    SessionOptions options;
    options.device = t.device;
    options.cpus = {t.cpu.cpu};
    options.sampling = SamplingOptions{};
    Session s({event}, options);
    s.start();
    // As perf's -F, the period starts at 1 and the first tick finds it: the
    // samples until then fall wherever the tool was, and are left out, as are
    // those of the drain itself (on a slow kernel it takes tens of ms): only
    // samples from the loop's start on are judged.
    spin_for(milliseconds(50));
    s.drain([](std::size_t, Record&&) {});
    timespec start{};
    ::clock_gettime(CLOCK_MONOTONIC, &start);
    const auto loop_start = static_cast<std::uint64_t>(start.tv_sec) * 1000000000U +
                            static_cast<std::uint64_t>(start.tv_nsec);
    spin_for(milliseconds(400));
    s.stop();
    const auto lo = reinterpret_cast<std::uintptr_t>(&archpmu_selftest_spin);
    const auto hi = reinterpret_cast<std::uintptr_t>(&archpmu_selftest_spin_end);
    std::uint64_t samples = 0;
    std::uint64_t in_spin = 0;
    std::uint64_t others = 0;
    std::uint64_t before_loop = 0;
    std::map<std::string, std::uint64_t> elsewhere;  // where the others fell
    s.drain([&](std::size_t, Record&& r) {
        const auto sample = parse_sample(r, false);
        if (!sample)
            return;
        if (sample->time < loop_start) {
            before_loop++;
            return;
        }
        // The CPU's other processes are sampled too: theirs say nothing of the loop.
        if (sample->pid != static_cast<std::uint32_t>(::getpid())) {
            others++;
            return;
        }
        samples++;
        if (sample->ip >= lo && sample->ip < hi) {
            in_spin++;
            return;
        }
        Dl_info where{};
        // The IP is only looked up, never followed.
        const auto* ip = reinterpret_cast<void*>(sample->ip);  // NOLINT(performance-no-int-to-ptr)
        const bool known = !sample->kernel && ::dladdr(ip, &where) != 0;
        const auto offset = sample->ip - reinterpret_cast<std::uintptr_t>(where.dli_fbase);
        elsewhere[sample->kernel             ? std::string("[kernel]")
                  : known && where.dli_sname ? std::string(where.dli_sname)
                  : known && where.dli_fname ? std::string(where.dli_fname) + "+" + hex(offset)
                                             : std::string("?")]++;
    });
    for (const auto& [place, n] : elsewhere)
        c.lines.push_back(num(n) + " in " + place);
    if (others)
        c.lines.push_back(num(others) + " more in other processes on CPU " + num(t.cpu.cpu));
    if (before_loop)
        c.lines.push_back(num(before_loop) + " more before the loop (finding the period)");
    c.summary = num(samples) +
                " samples of instructions:u at 1000 Hz over 0.4 s in this process (after 50 ms to "
                "find the period), " +
                num(in_spin) + " in archpmu_selftest_spin (at least " + num(kSamplesInSpinPercent) +
                "% of at least " + num(kMinSamples) + ")";
    if (samples < kMinSamples || in_spin * 100 < samples * kSamplesInSpinPercent)
        c.outcome = Outcome::fail;
    return c;
}

// A thread that visits `cpus` in turn, spinning on each, under a task session of its own.
Check task_follows(const SelftestTarget& t)
{
    Check c{"task", Outcome::pass, {}, {}};
    std::vector<std::uint32_t> visit;
    for (const auto& cpu : t.cpus)
        if (visit.size() < 4 && cpu.version >= 2 && t.allowed(cpu.cpu))
            visit.push_back(cpu.cpu);
    c.outcome = Outcome::skip;
    if (t.cpu.version < 2)
        c.summary = "task sessions need PMU version 2 (IA32_PERF_GLOBAL_CTRL)";
    else if (!(t.info.capabilities & ARCHPMU_CAP_TASK))
        c.summary = "the module has no task sessions";
    else if (visit.size() < 2)
        c.summary = "one CPU: no migration to follow";
    else
        c.outcome = Outcome::pass;
    if (c.outcome == Outcome::skip)
        return c;
    std::atomic<pid_t> tid{0};
    std::atomic<bool> go{false};
    std::atomic<std::uint64_t> iterations{0};
    std::string thread_error;
    std::thread worker([&] {
        tid = ::gettid();
        while (!go)
            std::this_thread::yield();
        try {
            for (auto cpu : visit) {
                pin_to(cpu);
                iterations += spin_for(milliseconds(60));
            }
        } catch (const Error& e) {
            thread_error = e.what();
        }
    });
    while (tid == 0)
        std::this_thread::yield();
    std::vector<CountValue> values;
    try {
        SessionOptions so;
        so.device = t.device;
        so.task = TaskScope{TaskScope::Kind::thread, tid, false};
        so.start_now = true;
        Session s({parse_event("instructions:u")}, so);
        go = true;
        worker.join();
        values = s.read().values;
    } catch (...) {
        go = true;
        if (worker.joinable())
            worker.join();
        throw;
    }
    if (!thread_error.empty())
        throw Error(EINVAL, thread_error);
    std::map<std::uint32_t, std::uint64_t> by_cpu;
    std::uint64_t total = 0;
    for (const auto& v : values) {
        by_cpu[v.cpu] += v.value;
        total += v.value;
    }
    std::string per_cpu;
    for (auto cpu : visit) {
        per_cpu += (per_cpu.empty() ? "" : ", ") + ("CPU " + num(cpu) + " " + num(by_cpu[cpu]));
        if (by_cpu[cpu] == 0)
            c.outcome = Outcome::fail;
    }
    c.summary =
        "a thread moved over CPUs " + format_cpu_list(visit) + ", counted on each: " + per_cpu;
    if (!t.model && total < 2 * iterations) {
        c.outcome = Outcome::fail;
        c.lines.push_back("total " + num(total) + " < 2 x " + num(iterations) +
                          " iterations: the session lost the thread somewhere");
    }
    return c;
}

}  // namespace

void run_counting_checks(const SelftestTarget& t, const std::function<void(const Check&)>& report)
{
    report(guarded("fixed-vs-gp", [&] { return fixed_vs_gp(t); }));
    report(guarded("usr-os", [&] { return usr_os(t); }));
    report(guarded("cmask-inv", [&] { return cmask_inv(t); }));
    report(guarded("sampling", [&] { return sampling(t); }));
    report(guarded("task", [&] { return task_follows(t); }));
}

}  // namespace archpmu::tool
