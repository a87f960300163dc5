// SPDX-License-Identifier: MIT
// VM integration harness: load and unload archpmu.ko with exact errnos, read
// new kernel log lines, read sysfs, run the archpmu tool.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "archpmu/device.hpp"
#include "archpmu/session.hpp"
#include "archpmu/unique_fd.hpp"

namespace archpmu::itest {

// finit_module(archpmu.ko, params): 0 or the errno.
int load_module(const std::string& params);
// The test-only module that holds GP counters counter..counter+nr-1 through
// perf's reservation (perf itself takes every counter at once).
int load_hog(unsigned counter, unsigned nr = 1);
int unload_hog();
// delete_module("archpmu"): 0 or the errno.
int unload_module();
bool module_loaded();

// The module, loaded for the scope of one test (REQUIREs a successful load).
class LoadedModule {
public:
    explicit LoadedModule(const std::string& params);
    LoadedModule(const LoadedModule&) = delete;
    LoadedModule& operator=(const LoadedModule&) = delete;
    ~LoadedModule();
};

// Kernel log lines written after construction.
class KernelLog {
public:
    KernelLog();
    std::vector<std::string> new_lines();
    // The new lines that contain `needle`.
    std::vector<std::string> grep(const std::string& needle);

private:
    UniqueFd fd_;
    std::vector<std::string> seen_;
};

std::string read_file(const std::string& path);  // trailing newline removed
void write_file(const std::string& path, const std::string& text);
bool path_exists(const std::string& path);
std::string cpu_sysfs(unsigned cpu, const std::string& attr);

struct CommandResult {
    int status = -1;  // exit status, or -1 if it did not exit normally
    std::string out;
};
CommandResult run_tool(const std::string& args);
// A shell command line, stdout and stderr together.
CommandResult run_command(const std::string& command);

// ARCHPMU_IOC_MODEL_INJECT: `count` occurrences of `code` at CPL 3 (or 0) on `cpu`.
void inject_events(unsigned cpu, uint32_t code, uint64_t count, bool user = true);
// Several events in one cross-call: no read or fold of a session comes between them.
void inject_together(unsigned cpu, const std::vector<std::pair<uint32_t, uint64_t>>& events,
                     bool user = true);
// The same with ARCHPMU_INJECT_HERE: on the CPU the caller runs on, in its time slice.
void inject_here(uint32_t code, uint64_t count, bool user = true);
// How many times the program has called operator new so far (heap_count.cpp).
uint64_t heap_allocations();

// Every architectural PMU MSR of a CPU as the model holds it (absent ones as ~0).
std::map<uint32_t, uint64_t> pmu_msr_snapshot(const archpmu::Device& dev, uint32_t cpu);

// One figure for the Reliability table (docs/testing.md): a "reliability: NAME VALUE" line on
// stdout, which tests/vm_suite.sh adds up per kernel.
void report_figure(const char* name, uint64_t value);

std::vector<unsigned> online_cpus();
// The odd-numbered online CPUs, as a CPU list: the "second core type" in hybrid tests.
std::string odd_cpu_list();
// The model's parameters that impersonate a real CPUID dump (tests/data/cpuid/FILE):
// hybrid dumps' second core type on the odd CPUs.
std::string dump_params(const std::string& file);
bool is_odd_cpu(unsigned cpu);

// One RDMSR or WRMSR executed by the model on `cpu` (ARCHPMU_IOC_MODEL_MSR,
// archpmu_test.h); throws archpmu::Error naming the MSR.
uint64_t model_read_msr(const archpmu::Device& dev, uint32_t cpu, uint32_t msr);
void model_write_msr(const archpmu::Device& dev, uint32_t cpu, uint32_t msr, uint64_t value);

// The percentage `perf report --stdio` gives the line naming `symbol`, or -1.
double perf_report_share(const std::string& report, const std::string& symbol);

// Busy in user space on the calling thread for `how_long` (no Catch macro: a
// forked child may call it).
void spin_for(std::chrono::milliseconds how_long);

// A forked child busy in user space on `cpu` for `how_long`, then gone: its pid.
pid_t spinner_on(unsigned cpu, std::chrono::milliseconds how_long);

// Keep the calling thread on `cpu` (it runs there on return), or let it run on
// every online CPU again.
void pin_to(unsigned cpu);
void unpin();

// In a forked child of the (root) test process: become nobody (uid and gid
// 65534), keeping CAP_PERFMON and no other capability; or with none.
bool become_nobody_with_perfmon();
bool become_nobody();

// /dev/archpmu readable and writable by all while it lives (as the archpmu
// group's members have it with udev/99-archpmu.rules).
struct OpenNode {
    OpenNode();
    ~OpenNode();
    OpenNode(const OpenNode&) = delete;
    OpenNode& operator=(const OpenNode&) = delete;
};

// A session's options on these CPUs (empty: every online CPU), multiplexed or
// not, started with the open or not.
enum class Mux { off, on };
enum class StartAt { start, open };
archpmu::SessionOptions on_cpus(std::vector<uint32_t> cpus, Mux mux = Mux::off,
                                StartAt start = StartAt::start);
// A Session of `list` opened with `opts`: 0, or its errno, with its message in *why.
int open_errno(const std::string& list, const archpmu::SessionOptions& opts,
               std::string* why = nullptr);
// A task session's options.
archpmu::SessionOptions on_task(const archpmu::TaskScope& task, Mux mux = Mux::off,
                                StartAt start = StartAt::start);
// A session sampling instructions at period 1 on `cpu` into a one-page ring that
// nobody reads, run for `how_long`: samples are lost, and over sample_max_rate
// throttled. Its ring's counts once stopped; `stopped` runs then, before it closes.
archpmu::RingStats run_lossy_sampling(unsigned cpu, std::chrono::milliseconds how_long,
                                      const std::function<void()>& stopped = {});
// CHECKs that `sums` (Session::read_totals) are the sums of `rows` (a read with the
// per-CPU rows, of a session that has not counted since), field for field and flag for
// flag, without rows of their own.
void check_sums_of_rows(const archpmu::Results& rows, const archpmu::Results& sums);

}  // namespace archpmu::itest
