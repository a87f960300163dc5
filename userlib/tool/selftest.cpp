// SPDX-License-Identifier: MIT
// archpmu selftest: the report and the checks that look at the machine
// (enumeration, what would refuse sessions, the registers); the checks that
// count and sample are in selftest_checks.cpp.
#include "selftest.hpp"

#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "archpmu.h"
#include "archpmu/device.hpp"
#include "archpmu/error.hpp"
#include "archpmu/netlink.hpp"
#include "archpmu/regs.hpp"
#include "regs_format.hpp"
#include "report.hpp"
#include "selftest_checks.hpp"

namespace archpmu::tool {
namespace {

std::string_view outcome_name(Outcome o)
{
    switch (o) {
        case Outcome::pass:
            return "PASS";
        case Outcome::fail:
            return "FAIL";
        case Outcome::skip:
            return "SKIP";
        case Outcome::note:
            return "NOTE";
    }
    return "?";
}

std::string kernel_release()
{
    utsname u{};
    return ::uname(&u) == 0 ? u.release : "?";
}

std::string first_line(const std::string& path)
{
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

std::vector<std::uint32_t> allowed_cpus()
{
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<std::uint32_t> out;
    if (::sched_getaffinity(0, sizeof(set), &set) != 0)
        throw Error(errno, "selftest: sched_getaffinity");
    for (std::uint32_t cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &set))
            out.push_back(cpu);
    return out;
}

std::string pmu_line(const CpuInfo& c)
{
    std::ostringstream out;
    out << "v" << c.version << ", " << c.gp_counters << " GP x " << c.gp_width << " bits, "
        << c.fixed_counters().size() << " fixed x " << c.fixed_width << " bits";
    if (c.hybrid())
        out << ", " << to_string(c.core_type) << " cores";
    out << "; events:";
    for (const auto& e : c.events())
        out << " " << e;
    return out.str();
}

Check enumeration(const Info& info, const std::vector<CpuInfo>& cpus)
{
    Check c{"enumeration", Outcome::pass, {}, {}};
    for (const auto& g : group_by_pmu(cpus))
        c.lines.push_back("CPUs " + format_cpu_list(g.cpus) + ": " + pmu_line(g.pmu));
    std::vector<std::uint32_t> none;
    bool virtual_machine = false;
    for (const auto& cpu : cpus)
        if (cpu.version == 0) {
            none.push_back(cpu.cpu);
            virtual_machine = virtual_machine || (cpu.pmu_flags & ARCHPMU_PMU_HYPERVISOR);
        }
    if (!none.empty()) {
        c.outcome = Outcome::fail;
        c.lines.push_back("CPUs " + format_cpu_list(none) +
                          " have no architectural PMU (CPUID.0AH:EAX[7:0] = 0)" +
                          (virtual_machine ? ": a virtual machine whose hypervisor gives it none "
                                             "(KVM: -cpu host, or pmu=on)"
                                           : ""));
    }
    c.summary = std::to_string(info.nr_cpus_enumerated) + " of " +
                std::to_string(info.nr_cpus_online) + " online CPUs enumerated";
    if (info.nr_cpus_enumerated != info.nr_cpus_online)
        c.outcome = Outcome::fail;
    return c;
}

// What would refuse a session here, each with its fix.
Check conditions(const std::vector<CpuInfo>& cpus)
{
    Check c{"conditions", Outcome::note, {}, {}};
    const bool watchdog = first_line("/proc/sys/kernel/nmi_watchdog") == "1";
    if (watchdog)
        c.lines.emplace_back(
            "the NMI watchdog is on: where it uses perf's hardware lockup "
            "detector it holds a counter on every CPU, and sessions that need it are refused: "
            "fix: sysctl kernel.nmi_watchdog=0");
    try {
        std::map<std::uint32_t, std::set<std::uint32_t>> by_holder;  // holder -> CPUs
        std::vector<std::string> agents;
        for (const auto& u : dump_pmu_usage()) {
            const auto holder = u.holder.value_or(ARCHPMU_HOLDER_UNKNOWN);
            by_holder[holder].insert(u.cpu.value_or(0));
            if (holder == ARCHPMU_HOLDER_AGENT && u.msr && u.msr_value && agents.size() < 4)
                agents.push_back("CPU " + std::to_string(u.cpu.value_or(0)) + " " +
                                 register_name(*u.msr) + " = " + hex_string(*u.msr_value));
        }
        const auto cpu_set = [](const std::set<std::uint32_t>& s) {
            return format_cpu_list({s.begin(), s.end()});
        };
        if (by_holder.count(ARCHPMU_HOLDER_PERF))
            c.lines.push_back("perf holds counters on CPUs " +
                              cpu_set(by_holder[ARCHPMU_HOLDER_PERF]) +
                              " (perf stat/record, turbostat or another perf_event_open user): "
                              "fix: stop them");
        if (by_holder.count(ARCHPMU_HOLDER_AGENT)) {
            std::string list;
            for (const auto& a : agents)
                list += (list.empty() ? "" : "; ") + a;
            c.lines.push_back("another agent counts on CPUs " +
                              cpu_set(by_holder[ARCHPMU_HOLDER_AGENT]) + " (" + list +
                              "): not perf, not archpmu (PCM, LIKWID, a wrmsr script, a "
                              "hypervisor): fix: stop that tool; its counters are refused");
        }
        if (by_holder.count(ARCHPMU_HOLDER_SESSION))
            c.lines.push_back("archpmu sessions of other processes hold counters on CPUs " +
                              cpu_set(by_holder[ARCHPMU_HOLDER_SESSION]) + ": see archpmu who");
    } catch (const Error& e) {
        c.lines.push_back(std::string("could not ask who holds the counters: ") + e.what());
    }
    if (::access("/sys/module/kvm", F_OK) == 0)
        c.lines.emplace_back(
            "kvm is loaded: while an archpmu session exists, perf cannot reserve "
            "the PMU for KVM's virtual PMU and guests' counters read 0");
    for (const auto& cpu : cpus)
        if (cpu.tsx_force_abort()) {
            c.lines.emplace_back(
                "TSX_FORCE_ABORT microcode: GP counter 3 serves TSX and is never "
                "given to a session");
            break;
        }
    c.summary = c.lines.empty() ? "nothing here refuses sessions"
                                : std::to_string(c.lines.size()) + " found";
    if (c.lines.empty())
        c.outcome = Outcome::pass;
    return c;
}

// Another agent's overflows and its TOPDOWN.SLOTS (perf stat's default on
// Ice Lake and later) change these while the checks run.
constexpr std::uint32_t kGlobalStatus = 0x38e;
constexpr std::uint32_t kPerfMetrics = 0x329;

// v6's GP counter n: its counter at 1900H + 4n, its event select one above.
bool is_v6_counter(std::uint32_t msr)
{
    return msr >= 0x1900 && msr < 0x1980 && (msr - 0x1900) % 4 == 0;
}

bool is_counter(std::uint32_t msr)
{
    return (msr >= 0xc1 && msr < 0xc1 + 32) || (msr >= 0x4c1 && msr < 0x4c1 + 32) ||
           (msr >= 0x309 && msr < 0x309 + 16) || is_v6_counter(msr);
}

// A counter's value is ours to compare only when nothing counts with it.
bool counter_idle(const std::map<std::uint32_t, std::uint64_t>& regs, std::uint32_t msr)
{
    const auto at = [&](std::uint32_t m) {
        const auto it = regs.find(m);
        return it == regs.end() ? 0 : it->second;
    };
    if (msr >= 0x309 && msr < 0x309 + 16)
        return ((at(0x38d) >> (4 * (msr - 0x309))) & 0x3) == 0;
    if (is_v6_counter(msr))
        return (at(msr + 1) & ARCHPMU_EVTSEL_EN) == 0;
    const std::uint32_t i = msr >= 0x4c1 ? msr - 0x4c1 : msr - 0xc1;
    return (at(0x186 + i) & ARCHPMU_EVTSEL_EN) == 0;
}

// Every PMU register of every CPU as found before the checks: control registers
// equal, the counters nobody counted with equal too. GLOBAL_STATUS and
// PERF_METRICS may differ.
Check registers_as_found(const Device& dev, const std::vector<CpuRegisters>& before)
{
    Check c{"registers", Outcome::pass, {}, {}};
    std::size_t compared = 0;
    for (const auto& b : before) {
        std::map<std::uint32_t, std::uint64_t> was;
        for (const auto& r : b.regs)
            was[r.msr] = r.value;
        for (const auto& r : dev.registers(b.cpu)) {
            const auto it = was.find(r.msr);
            if (it == was.end() || r.msr == kGlobalStatus || r.msr == kPerfMetrics ||
                (is_counter(r.msr) && !counter_idle(was, r.msr)))
                continue;
            compared++;
            if (it->second != r.value) {
                c.outcome = Outcome::fail;
                c.lines.push_back("CPU " + std::to_string(b.cpu) + " " + register_name(r.msr) +
                                  ": " + hex_string(it->second) + " before, " +
                                  hex_string(r.value) + " after");
            }
        }
    }
    c.summary = std::to_string(compared) + " registers of " + std::to_string(before.size()) +
                " CPUs compared: " + (c.lines.empty() ? "all as found" : "changed");
    return c;
}

class Report {
public:
    void add(const Check& c)
    {
        counts_[c.outcome]++;
        std::cout << fmt_line(c) << std::endl;
        for (const auto& l : c.lines)
            std::cout << "              " << l << '\n';
    }
    [[nodiscard]] bool failed() const { return counts_.count(Outcome::fail) != 0; }
    void summary() const
    {
        const auto n = [&](Outcome o) {
            const auto it = counts_.find(o);
            return it == counts_.end() ? 0U : it->second;
        };
        std::cout << "selftest: " << n(Outcome::pass) << " passed, " << n(Outcome::fail)
                  << " failed, " << n(Outcome::skip) << " skipped, " << n(Outcome::note)
                  << " notes\n";
    }

private:
    static std::string fmt_line(const Check& c)
    {
        std::string name = c.name;
        name.resize(std::max<std::size_t>(name.size(), 13), ' ');
        return name + " " + std::string(outcome_name(c.outcome)) + "  " + c.summary;
    }
    std::map<Outcome, unsigned> counts_;
};

}  // namespace

int run_selftest(const SelftestOptions& options)
{
    const Device dev(options.device);
    const auto info = dev.info();
    const auto cpus = dev.all_cpu_info();
    if (cpus.empty())
        throw Error(ENODEV, "selftest: no CPU is enumerated");
    SelftestTarget t;
    t.device = options.device;
    t.info = info;
    t.cpus = cpus;
    t.model = info.backend == Backend::model;
    t.task_sessions =
        (info.capabilities & ARCHPMU_CAP_TASK) != 0 &&
        std::all_of(cpus.begin(), cpus.end(), [](const CpuInfo& c) { return c.version >= 2; });
    t.allowed_cpus = allowed_cpus();
    const CpuInfo* target = nullptr;
    for (const auto& c : cpus)
        if (options.cpu ? c.cpu == *options.cpu : !target && t.allowed(c.cpu))
            target = &c;
    if (options.cpu && !target)
        throw Error(EINVAL, "selftest -C " + std::to_string(*options.cpu) +
                                ": that CPU is not online with a PMU (see archpmu info)");
    if (!target || !t.allowed(target->cpu))
        throw Error(EINVAL, "selftest: " +
                                (target ? "CPU " + std::to_string(target->cpu) + " is"
                                        : std::string("no enumerated CPU is")) +
                                " outside this process's CPU affinity (taskset, cpuset)");
    t.cpu = *target;
    const bool model = t.model;
    std::cout << "archpmu selftest: archpmu " << ARCHPMU_VERSION_STRING << ", Linux "
              << kernel_release() << ", backend " << to_string(info.backend) << ", ABI "
              << info.abi_version << "\n"
              << "cpu: " << describe(read_cpu_model())
              << (model ? " (the machine's; the PMU is the model's)" : "") << "\n"
              << "checks on CPU " << target->cpu << "; "
              << (model ? "exact: the model counts by its clock, so loop counts are not checked"
                        : "hardware: tolerances as archpmu-selftest(1) lists them")
              << std::endl;

    Report report;
    report.add(enumeration(info, cpus));
    report.add(conditions(cpus));
    std::vector<CpuRegisters> before;
    std::string regs_error;
    try {
        for (const auto& c : cpus)
            before.push_back({c.cpu, dev.registers(c.cpu)});
    } catch (const Error& e) {
        regs_error = e.what();
        before.clear();
    }
    if (target->version == 0)
        report.add({"counting",
                    Outcome::skip,
                    "CPU " + std::to_string(target->cpu) + " has no architectural PMU",
                    {}});
    else
        run_counting_checks(t, [&](const Check& c) { report.add(c); });
    if (before.empty()) {
        report.add({"registers", Outcome::skip, "cannot read them: " + regs_error, {}});
    } else {
        report.add(registers_as_found(dev, before));
        std::cout << "CPU " << target->cpu << "'s registers afterwards:\n"
                  << registers_table({{target->cpu, dev.registers(target->cpu)}});
    }
    report.summary();
    return report.failed() ? 1 : 0;
}

}  // namespace archpmu::tool
