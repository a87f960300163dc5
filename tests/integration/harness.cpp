// SPDX-License-Identifier: MIT
#include "harness.hpp"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sys/ioctl.h>

#include <array>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "../common/cpuid_dump.hpp"
#include "archpmu.h"
#include "archpmu/error.hpp"
#include "archpmu/events.hpp"
#include "archpmu_test.h"

namespace archpmu::itest {
namespace {

std::string module_path()
{
    const char* env = std::getenv("ARCHPMU_KO");
    return env ? env : ARCHPMU_KO_DEFAULT;
}

int load_module_file(const std::string& path, const std::string& params)
{
    const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid())
        FAIL("cannot open " << path << ": " << std::strerror(errno));
    if (::syscall(SYS_finit_module, fd.get(), params.c_str(), 0) != 0)
        return errno;
    return 0;
}

}  // namespace

int load_module(const std::string& params)
{
    return load_module_file(module_path(), params);
}

int load_hog(unsigned counter, unsigned nr)
{
    const std::string ko = module_path();
    const std::string hog = ko.substr(0, ko.rfind('/')) + "/test/archpmu_hog.ko";
    return load_module_file(hog,
                            "counter=" + std::to_string(counter) + " nr=" + std::to_string(nr));
}

int unload_hog()
{
    if (::syscall(SYS_delete_module, "archpmu_hog", O_NONBLOCK) != 0)
        return errno;
    return 0;
}

int unload_module()
{
    if (::syscall(SYS_delete_module, "archpmu", O_NONBLOCK) != 0)
        return errno;
    return 0;
}

bool module_loaded()
{
    return path_exists("/sys/module/archpmu");
}

LoadedModule::LoadedModule(const std::string& params)
{
    if (module_loaded())
        unload_module();  // a failed test before may have left it loaded
    INFO("insmod archpmu.ko " << params);
    REQUIRE(load_module(params) == 0);
}

LoadedModule::~LoadedModule()
{
    // Every test on the model: no counter was written while it counted (SDM 18.2.1.1).
    const std::string live_writes = "/sys/kernel/debug/archpmu/model_live_writes";
    if (std::uncaught_exceptions() == 0 && path_exists(live_writes))
        CHECK(read_file(live_writes) == "0");
    const int err = unload_module();
    if (err != 0)
        std::fprintf(stderr, "itest: rmmod archpmu failed: %s\n", std::strerror(err));
}

KernelLog::KernelLog() : fd_(::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC))
{
    REQUIRE(fd_.valid());
    ::lseek(fd_.get(), 0, SEEK_END);
}

std::vector<std::string> KernelLog::new_lines()
{
    std::array<char, 8192> buf{};
    for (;;) {
        const ssize_t n = ::read(fd_.get(), buf.data(), buf.size() - 1);
        if (n < 0 && errno == EPIPE)
            continue;  // overwritten records: keep reading
        if (n <= 0)
            break;
        const std::string record(buf.data(), static_cast<std::size_t>(n));
        const auto semi = record.find(';');
        const auto nl = record.find('\n');
        if (semi != std::string::npos)
            seen_.push_back(record.substr(semi + 1, nl - semi - 1));
    }
    return seen_;
}

std::vector<std::string> KernelLog::grep(const std::string& needle)
{
    std::vector<std::string> hits;
    for (const auto& line : new_lines())
        if (line.find(needle) != std::string::npos)
            hits.push_back(line);
    return hits;
}

std::string read_file(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
        FAIL("cannot read " << path);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string s = ss.str();
    if (!s.empty() && s.back() == '\n')
        s.pop_back();
    return s;
}

void write_file(const std::string& path, const std::string& text)
{
    std::ofstream out(path);
    out << text;
    out.close();
    if (!out)
        FAIL("cannot write '" << text << "' to " << path);
}

bool path_exists(const std::string& path)
{
    return ::access(path.c_str(), F_OK) == 0;
}

std::string cpu_sysfs(unsigned cpu, const std::string& attr)
{
    return read_file("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/archpmu/" + attr);
}

CommandResult run_tool(const std::string& args)
{
    return run_command(std::string(ARCHPMU_TOOL) + " " + args);
}

CommandResult run_command(const std::string& command)
{
    CommandResult r;
    const std::string cmd = command + " 2>&1";
    FILE* pipe = ::popen(cmd.c_str(), "r");
    REQUIRE(pipe != nullptr);
    std::array<char, 4096> buf{};
    std::size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0)
        r.out.append(buf.data(), n);
    const int status = ::pclose(pipe);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

void inject_events(unsigned cpu, uint32_t code, uint64_t count, bool user)
{
    inject_together(cpu, {{code, count}}, user);
}

void inject_together(unsigned cpu, const std::vector<std::pair<uint32_t, uint64_t>>& events,
                     bool user)
{
    // Also used outside a test case (archpmu_itest --inject): no Catch macros.
    const UniqueFd fd(::open("/dev/archpmu", O_RDWR | O_CLOEXEC));
    std::vector<archpmu_model_inject_more> more;
    for (std::size_t i = 1; i < events.size(); ++i)
        more.push_back({events[i].first, 0, events[i].second});
    archpmu_model_inject cmd{};
    cmd.size = sizeof(cmd);
    cmd.flags = user ? ARCHPMU_INJECT_USR : ARCHPMU_INJECT_OS;
    cmd.cpu = cpu;
    cmd.event = events.at(0).first;
    cmd.count = events.at(0).second;
    cmd.more = reinterpret_cast<std::uintptr_t>(more.data());
    cmd.nr_more = static_cast<uint32_t>(more.size());
    if (!fd.valid() || ::ioctl(fd.get(), ARCHPMU_IOC_MODEL_INJECT, &cmd) != 0)
        throw std::runtime_error(std::string("ARCHPMU_IOC_MODEL_INJECT: ") + std::strerror(errno));
}

void inject_here(uint32_t code, uint64_t count, bool user)
{
    const UniqueFd fd(::open("/dev/archpmu", O_RDWR | O_CLOEXEC));
    archpmu_model_inject cmd{};
    cmd.size = sizeof(cmd);
    cmd.flags = (user ? ARCHPMU_INJECT_USR : ARCHPMU_INJECT_OS) | ARCHPMU_INJECT_HERE;
    cmd.event = code;
    cmd.count = count;
    if (!fd.valid() || ::ioctl(fd.get(), ARCHPMU_IOC_MODEL_INJECT, &cmd) != 0)
        throw std::runtime_error(std::string("ARCHPMU_IOC_MODEL_INJECT (here): ") +
                                 std::strerror(errno));
}

std::map<uint32_t, uint64_t> pmu_msr_snapshot(const archpmu::Device& dev, uint32_t cpu)
{
    std::map<uint32_t, uint64_t> out;
    const auto add = [&](uint32_t msr) {
        try {
            out[msr] = model_read_msr(dev, cpu, msr);
        } catch (const archpmu::Error&) {
            out[msr] = ~0ULL;
        }
    };
    for (uint32_t i = 0; i < 8; ++i) {
        add(0x186 + i);
        add(0xc1 + i);
    }
    for (uint32_t i = 8; i < 16; ++i) {  // v6 only: IA32_PMC_GPi_CFG_A and _CTR
        add(0x1901 + 4 * i);
        add(0x1900 + 4 * i);
    }
    for (uint32_t j = 0; j < 7; ++j)
        add(0x309 + j);
    for (uint32_t m = 0x38d; m <= 0x392; ++m)
        add(m);
    return out;
}

void report_figure(const char* name, uint64_t value)
{
    std::printf("reliability: %s %llu\n", name, static_cast<unsigned long long>(value));
    std::fflush(stdout);
}

std::vector<unsigned> online_cpus()
{
    std::vector<unsigned> cpus;
    const long n = ::sysconf(_SC_NPROCESSORS_CONF);
    for (long cpu = 0; cpu < n; ++cpu) {
        const std::string online = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/online";
        if (cpu == 0 || !path_exists(online) || read_file(online) == "1")
            cpus.push_back(static_cast<unsigned>(cpu));
    }
    return cpus;
}

bool is_odd_cpu(unsigned cpu)
{
    return cpu % 2 == 1;
}

std::string odd_cpu_list()
{
    std::string list;
    for (unsigned cpu : online_cpus())
        if (is_odd_cpu(cpu))
            list += (list.empty() ? "" : ",") + std::to_string(cpu);
    return list;
}

std::string dump_params(const std::string& file)
{
    const auto types = archpmu::test::read_cpuid_dump(std::string(ARCHPMU_CPUID_DIR "/") + file);
    std::string params =
        "backend=model model_cpuid=" + archpmu::test::model_cpuid_param(types.at(0));
    if (types.size() > 1)
        params += " model_cpuid_hybrid=" + archpmu::test::model_cpuid_param(types.at(1)) +
                  " model_hybrid_cpus=" + odd_cpu_list();
    return params;
}

namespace {

uint64_t model_msr(const archpmu::Device& dev, uint32_t cpu, uint32_t msr, bool write,
                   uint64_t value)
{
    archpmu_model_msr cmd{};
    cmd.size = sizeof(cmd);
    cmd.flags = write ? ARCHPMU_MODEL_MSR_WRITE : 0;
    cmd.cpu = cpu;
    cmd.msr = msr;
    cmd.value = value;
    if (::ioctl(dev.fd(), ARCHPMU_IOC_MODEL_MSR, &cmd) != 0) {
        const int err = errno;
        char what[96];
        (void)std::snprintf(what, sizeof(what), "model %s 0x%x on CPU %u",
                            write ? "WRMSR" : "RDMSR", msr, cpu);
        throw archpmu::Error(err, what);
    }
    return cmd.value;
}

}  // namespace

uint64_t model_read_msr(const archpmu::Device& dev, uint32_t cpu, uint32_t msr)
{
    return model_msr(dev, cpu, msr, false, 0);
}

void model_write_msr(const archpmu::Device& dev, uint32_t cpu, uint32_t msr, uint64_t value)
{
    (void)model_msr(dev, cpu, msr, true, value);
}

double perf_report_share(const std::string& report, const std::string& symbol)
{
    std::istringstream in(report);
    std::string line;
    while (std::getline(in, line))
        if (line.find(symbol) != std::string::npos && line.find('%') != std::string::npos)
            return std::strtod(line.c_str(), nullptr);
    return -1;
}

void spin_for(std::chrono::milliseconds how_long)
{
    const auto end = std::chrono::steady_clock::now() + how_long;
    volatile uint64_t spin = 0;
    while (std::chrono::steady_clock::now() < end)
        spin = spin + 1;
}

pid_t spinner_on(unsigned cpu, std::chrono::milliseconds how_long)
{
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        ::sched_setaffinity(0, sizeof(set), &set);
        spin_for(how_long);
        ::_exit(0);
    }
    return child;
}

void pin_to(unsigned cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    REQUIRE(::sched_setaffinity(0, sizeof(set), &set) == 0);
    // sched_setaffinity() returns once the thread runs on an allowed CPU.
    REQUIRE(static_cast<unsigned>(::sched_getcpu()) == cpu);
}

bool become_nobody()
{
    return ::setgroups(0, nullptr) == 0 && ::setresgid(65534, 65534, 65534) == 0 &&
           ::setresuid(65534, 65534, 65534) == 0;
}

OpenNode::OpenNode()
{
    REQUIRE(::chmod("/dev/archpmu", 0666) == 0);
}

OpenNode::~OpenNode()
{
    ::chmod("/dev/archpmu", 0600);
}

bool become_nobody_with_perfmon()
{
    ::prctl(PR_SET_KEEPCAPS, 1L, 0L, 0L, 0L);
    if (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0)
        return false;
    // capset(2) directly: CAP_PERFMON (38) is in the second word.
    __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    data[1].effective = data[1].permitted = 1U << (CAP_PERFMON - 32);
    return ::syscall(SYS_capset, &hdr, data) == 0;
}

void unpin()
{
    cpu_set_t set;
    CPU_ZERO(&set);
    for (unsigned cpu : online_cpus())
        CPU_SET(cpu, &set);
    ::sched_setaffinity(0, sizeof(set), &set);
}

archpmu::SessionOptions on_cpus(std::vector<uint32_t> cpus, Mux mux, StartAt start)
{
    archpmu::SessionOptions o;
    o.cpus = std::move(cpus);
    o.multiplex = mux == Mux::on;
    o.start_now = start == StartAt::open;
    return o;
}

archpmu::RingStats run_lossy_sampling(unsigned cpu, std::chrono::milliseconds how_long,
                                      const std::function<void()>& stopped)
{
    archpmu::SessionOptions opts = on_cpus({cpu});
    opts.sampling = archpmu::SamplingOptions{};
    opts.sampling->ring_pages = 1;
    auto evs = archpmu::parse_event_list("instructions");
    evs[0].sample.period = 1;
    archpmu::Session s(evs, opts);
    s.start();
    std::this_thread::sleep_for(how_long);
    s.stop();
    const auto stats = s.ring_stats();
    if (stats.size() != 1)
        throw std::runtime_error("a session on one CPU has " + std::to_string(stats.size()) +
                                 " rings");
    if (stopped)
        stopped();
    return stats[0];
}

archpmu::SessionOptions on_task(const archpmu::TaskScope& task, Mux mux, StartAt start)
{
    archpmu::SessionOptions o = on_cpus({}, mux, start);
    o.task = task;
    return o;
}

int open_errno(const std::string& list, const archpmu::SessionOptions& opts, std::string* why)
{
    try {
        const archpmu::Session s(archpmu::parse_event_list(list), opts);
        return 0;
    } catch (const archpmu::Error& e) {
        if (why)
            *why = e.what();
        return e.code().value();
    }
}

void check_sums_of_rows(const archpmu::Results& rows, const archpmu::Results& sums)
{
    REQUIRE(sums.events.size() == rows.events.size());
    for (std::size_t e = 0; e < rows.events.size(); ++e) {
        const auto& a = rows.events[e];
        const auto& b = sums.events[e];
        INFO(a.name);
        CHECK(b.name == a.name);
        CHECK(b.value == a.value);
        CHECK(b.time_enabled_ns == a.time_enabled_ns);
        CHECK(b.time_running_ns == a.time_running_ns);
        CHECK(b.multiplexed == a.multiplexed);
        CHECK(b.crowded_out == a.crowded_out);
        CHECK(b.absent == a.absent);
        CHECK(b.incomplete == a.incomplete);
        CHECK(b.per_cpu.empty());
    }
}

}  // namespace archpmu::itest
