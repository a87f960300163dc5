// SPDX-License-Identifier: MIT
// Why the module refused a session: its errno, the event and CPU it names, and
// who holds the counters, in words that say what to do.
#include <cerrno>
#include <optional>
#include <string>
#include <vector>

#include "archpmu.h"
#include "archpmu/counter_constraints.hpp"
#include "archpmu/error.hpp"
#include "archpmu/events.hpp"
#include "archpmu/netlink.hpp"
#include "archpmu/pmu.hpp"
#include "archpmu/regs.hpp"
#include "archpmu/session.hpp"
#include "session_detail.hpp"

namespace archpmu {
namespace {

// The counters of `cpu` that `holder` holds, each with who holds it, as the
// module's usage dump tells: "gp2 by the archpmu session of pid 1234
// (likwid-perfctr)". Empty when the dump cannot be had (an older module).
std::string named_holders(std::uint32_t cpu, std::uint32_t holder)
{
    std::string names;
    try {
        for (const auto& u : dump_pmu_usage(cpu)) {
            if (u.holder != holder || !u.counter)
                continue;
            std::string who = " by perf";
            if (holder == ARCHPMU_HOLDER_SESSION)
                who = " by the archpmu session of pid " +
                      (u.pid ? std::to_string(*u.pid) + " (" + u.comm + ")"
                             : "? (uid " + std::to_string(u.uid.value_or(0)) + ")");
            else if (holder == ARCHPMU_HOLDER_AGENT)
                who = " by another agent (" + register_name(u.msr.value_or(0)) + " = " +
                      hex_string(u.msr_value.value_or(0)) + ")";
            names += (names.empty() ? "" : ", ") + counter_name(*u.counter) + who;
        }
    } catch (const Error&) {
        return {};
    }
    return names;
}

// Who holds the counters an EBUSY refusal needed, and what to do about it.
std::string busy_refusal(const archpmu_count_open& cmd, const std::string& ev,
                         const std::string& on)
{
    const std::string what = cmd.bad_event == ~0U ? "the counters" : "the counters for " + ev;
    const std::string held =
        cmd.bad_cpu == ~0U ? std::string() : named_holders(cmd.bad_cpu, cmd.busy_holder);
    switch (cmd.busy_holder) {
        case ARCHPMU_HOLDER_SESSION:
            return what + on + " are held" +
                   (held.empty() ? " by the archpmu session of pid " + std::to_string(cmd.busy_pid)
                                 : ": " + held) +
                   "; close it, or count other events";
        case ARCHPMU_HOLDER_PERF:
            return what + on + " are held" + (held.empty() ? " by perf" : ": " + held) +
                   " (a perf_event_open user, or the NMI watchdog: sysctl "
                   "kernel.nmi_watchdog=0); archpmu and perf cannot share the PMU";
        case ARCHPMU_HOLDER_AGENT:
            return what + on + " are in use" + (held.empty() ? " by another agent" : ": " + held) +
                   "; another tool programmed them directly (e.g. through /dev/cpu/N/msr): stop "
                   "it first";
        default:
            return what + on +
                   " are in use: by another archpmu session, by perf (the NMI watchdog "
                   "included: sysctl kernel.nmi_watchdog=0), or by another tool; dmesg names "
                   "the holder";
    }
}

// ECHRNG for an event with counter constraints: pinned outside them, or none of
// them on the CPU.
std::string constrained_refusal(const std::string& ev, const std::string& on,
                                const archpmu_event& e)
{
    std::vector<std::uint32_t> allowed;
    for (std::uint32_t n = 0; n < 16; ++n)
        if (e.flags & ARCHPMU_EVENT_GP_COUNTERS(1U << n))
            allowed.push_back(n);
    const std::string only = ev + " counts only on GP counter" +
                             (allowed.size() == 1 ? " " : "s ") + format_cpu_list(allowed) +
                             " (perf's event tables, " + std::string(counter_constraints_source()) +
                             ")";
    if ((e.flags & ARCHPMU_EVENT_PIN) && !(e.counter & ARCHPMU_COUNTER_FIXED))
        return only + ": pinned to gp" + std::to_string(e.counter) + " it would count nothing" +
               on + "; pin one of those, or leave the choice to archpmu";
    return only + ", and none of them is free to take" + on +
           " (absent, or GP counter 3 left to TSX)";
}

}  // namespace

namespace detail {

// What a COUNT_OPEN refusal means, for the event and CPU it names.
std::string open_refusal(int err, const archpmu_count_open& cmd, const std::string& event,
                         const archpmu_event* ev_info)
{
    const std::uint32_t cpu = cmd.bad_cpu;
    const std::string on = cpu == ~0U ? std::string() : " on CPU " + std::to_string(cpu);
    const std::string ev = "event '" + event + "'";
    const std::uint32_t umask = ev_info ? (ev_info->config >> 8) & 0xff : 0;
    const bool metric = ev_info && (ev_info->config & 0xff) == 0 && umask >= ARCHPMU_METRIC_UMASK &&
                        umask < ARCHPMU_METRIC_UMASK + ARCHPMU_NR_METRICS;
    if (const auto type = ev_info ? event_core_type(ev_info->flags) : std::nullopt) {
        const std::string pmu = "cpu_" + std::string(to_string(*type));
        if (err == ENOENT && cpu == ~0U)
            return ev + " counts on " + pmu + " CPUs only, and the session has none ('archpmu " +
                   "info' shows each CPU's core type)";
    }
    if (metric && err == EINVAL)
        return ev +
               " is a top-down metric event: it counts only in a group led by slots with "
               "the same :u or :k, as perf's {slots,topdown-retiring}, and takes no other "
               "bits, pin or counter choice";
    if (metric && err == ENOENT)
        return ev + " is a top-down metric event" + on +
               ", which needs PERF_METRICS (IA32_PERF_CAPABILITIES[15]: Ice Lake and later "
               "P-cores), and a module with ARCHPMU_CAP_PERF_METRICS";
    if (metric && err == EOPNOTSUPP)
        return ev + " is a top-down metric event: it counts, it does not sample";
    if (metric && err == ENOSPC)
        return ev + " is a top-down metric event" + on +
               ": its group's slots event must get fixed counter 3";
    switch (err) {
        case EPERM:
            if (cmd.bad_event != ~0U)
                return ev +
                       " counts kernel mode or the sibling thread (AnyThread): without "
                       "CAP_PERFMON archpmu counts one's own tasks in user mode only "
                       "(add :u, or run as root)";
            if (!(cmd.flags & ARCHPMU_COUNT_OPEN_TASK))
                return "counting CPUs needs CAP_PERFMON or CAP_SYS_ADMIN (run as root, or grant "
                       "cap_perfmon); without it, count your own program: archpmu stat -- PROG";
            if (cmd.sample_events)
                return "sampling needs CAP_PERFMON or CAP_SYS_ADMIN (run as root, or grant "
                       "cap_perfmon)";
            return "counting needs CAP_PERFMON or CAP_SYS_ADMIN (run as root, or grant "
                   "cap_perfmon): the module allows nothing more (its unprivileged=off)";
        case EINVAL:
            return ev + " has reserved or forbidden bits" + on +
                   ", or pins a counter another event pins too, or a CPU is listed twice, or "
                   "its group flags are misplaced";
        case E2BIG:
            return "too many events (at most " + std::to_string(ARCHPMU_MAX_EVENTS) + ") or CPUs";
        case EDOM:
            return ev + ": inv and eq need a cmask (they change only the CMASK comparison)";
        case EOPNOTSUPP:
            return ev + ": AnyThread is not supported" + on +
                   " (only PMU versions 3 and 4 have it, and CPUID may deprecate it)";
        case ENOENT:
            return ev + " is not available" + on +
                   " (CPUID marks it unavailable, or its fixed counter is missing; a raw "
                   "encoding such as r<hex> counts it anyway)";
        case ECHRNG:
            if (ev_info && (ev_info->flags & ARCHPMU_EVENT_GP_MASK))
                return constrained_refusal(ev, on, *ev_info);
            return ev + ": the requested counter does not exist" + on +
                   " or does not count this event";
        case EMEDIUMTYPE:
            return ev + ": fixed counters take no edge, inv, cmask or any";
        case ENOSPC:
            return "more events than counters" + on + " (" + ev +
                   " did not fit; with multiplexing, each group must fit the counters alone)";
        case EBUSY:
            return busy_refusal(cmd, ev, on);
        case ENXIO:
            return "CPU " + std::to_string(cpu) + " does not exist";
        case ENODEV:
            return "CPU " + std::to_string(cpu) + " is offline or has no architectural PMU";
        case EMFILE:
            return "no free file descriptor for the session (raise the limit: ulimit -n)";
        default:
            return "ARCHPMU_IOC_COUNT_OPEN failed";
    }
}

// Why a task session was refused, naming the task.
std::string task_refusal(int err, const archpmu_count_open& cmd, const TaskScope& task)
{
    const std::string who = task.pid == 0
                                ? std::string("the calling ") +
                                      (task.kind == TaskScope::Kind::process ? "process" : "thread")
                                : (task.kind == TaskScope::Kind::process ? "process " : "thread ") +
                                      std::to_string(task.pid);
    switch (err) {
        case ESRCH:
            return who + " does not exist (or is exiting)";
        case EACCES:
            return "no permission to count " + who +
                   ": counting another user's process needs ptrace access to it "
                   "(CAP_SYS_PTRACE, or the same user and a dumpable process)";
        default:
            return "counting " + who + " is not supported" +
                   (cmd.bad_cpu == ~0U ? std::string()
                                       : " on CPU " + std::to_string(cmd.bad_cpu) +
                                             " (its PMU is version 1: no global control)") +
                   "; count CPUs with -a or -C instead";
    }
}

// The refusals only sampling has (ERANGE, ENOMEM for the rings, and EINVAL
// with no event named).
std::string sampling_refusal(int err, const archpmu_count_open& cmd, const std::string& event)
{
    if (err == ENOMEM)
        return "the sampling rings are over the locked-memory limits (the module's ring_mlock_kb "
               "per CPU for each user, then RLIMIT_MEMLOCK: ulimit -l; CAP_IPC_LOCK lifts it; "
               "dmesg says how much is left), or out of memory: ask for fewer ring pages or "
               "CPUs";
    const std::string on = cmd.bad_cpu == ~0U ? "" : " on CPU " + std::to_string(cmd.bad_cpu);
    if (err == ERANGE)
        return (cmd.bad_event == ~0U ? std::string("an event") : "event '" + event + "'") + on +
               ": the sampling period is above what its counter takes, or the frequency above "
               "the module's sample_max_rate";
    return "the sampling request was refused: ring pages must be a power of 2 up to " +
           std::to_string(ARCHPMU_RING_MAX_PAGES) +
           ", a frequency more than 0, and group reads need a sampling event";
}

}  // namespace detail
}  // namespace archpmu
