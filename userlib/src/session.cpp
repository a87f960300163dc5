// SPDX-License-Identifier: MIT
#include "archpmu/session.hpp"

#include <sys/ioctl.h>

#include <cerrno>

#include "archpmu.h"
#include "archpmu/counter_constraints.hpp"
#include "archpmu/error.hpp"
#include "archpmu/events.hpp"
#include "archpmu/netlink.hpp"
#include "archpmu/regs.hpp"
#include "ioctl_cmd.hpp"
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
    switch (err) {
        case EPERM:
            return "counting needs CAP_PERFMON or CAP_SYS_ADMIN (run as root, or grant "
                   "cap_perfmon)";
        case EINVAL:
            return ev + " has reserved or forbidden bits" + on +
                   ", or pins a counter another event pins too, or a CPU is listed twice, or "
                   "its group flags are misplaced";
        case E2BIG:
            return "too many events (at most " + std::to_string(ARCHPMU_MAX_EVENTS) + ") or CPUs";
        case EDOM:
            return ev + ": inv needs a cmask (INV inverts the CMASK comparison)";
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

// The module's capabilities, or 0 when it does not answer ARCHPMU_IOC_INFO:
// then the first layout's COUNT_OPEN runs, and its refusal says what is wrong.
std::uint64_t capabilities(int device_fd)
{
    auto cmd = detail::zeroed_cmd<archpmu_info>();
    return ::ioctl(device_fd, ARCHPMU_IOC_INFO, &cmd) == 0 ? cmd.capabilities : 0;
}

}  // namespace detail

using detail::capabilities;
using detail::open_refusal;

Session::Session(const std::string& device_path, std::vector<EventSpec> events,
                 const std::vector<std::uint32_t>& cpus)
    : Session(device_path, std::move(events), cpus, Start::later)
{
}

std::uint64_t CountValue::scaled() const
{
    if (time_running_ns == 0)
        return 0;
    if (time_running_ns >= time_enabled_ns)
        return value;
    const long double estimate =
        static_cast<long double>(value) * time_enabled_ns / time_running_ns;
    constexpr auto most = static_cast<long double>(UINT64_MAX);
    return estimate >= most ? UINT64_MAX : static_cast<std::uint64_t>(estimate);
}

Session::Session(const std::string& device_path, std::vector<EventSpec> events,
                 const std::vector<std::uint32_t>& cpus, Start start, bool multiplex)
    : events_(std::move(events))
{
    open(device_path, cpus, start, nullptr, multiplex);
}

Session Session::for_task(const std::string& device_path, std::vector<EventSpec> events,
                          const TaskScope& task, Start start, bool multiplex)
{
    Session session(std::move(events));
    session.open(device_path, {}, start, &task, multiplex);
    return session;
}

void Session::open(const std::string& device_path, const std::vector<std::uint32_t>& cpus,
                   Start start, const TaskScope* task, bool multiplex)
{
    UniqueFd device = open_device_file(device_path);
    const std::uint64_t caps = capabilities(device.get());
    const bool own_file = (caps & ARCHPMU_CAP_SESSION_FD) != 0;
    const bool start_in_open = start == Start::now && (caps & ARCHPMU_CAP_OPEN_START) != 0;
    std::vector<archpmu_event> evs = detail::module_events(
        device.get(), caps, events_, task ? std::vector<std::uint32_t>{} : cpus);
    auto cmd = detail::zeroed_cmd<archpmu_count_open>();
    cmd.nr_events = static_cast<std::uint32_t>(evs.size());
    cmd.nr_cpus = static_cast<std::uint32_t>(cpus.size());
    cmd.events = reinterpret_cast<std::uintptr_t>(evs.data());
    cmd.cpus = reinterpret_cast<std::uintptr_t>(cpus.data());
    if (own_file)
        cmd.flags |= ARCHPMU_COUNT_OPEN_FD;
    if (start_in_open)
        cmd.flags |= ARCHPMU_COUNT_OPEN_START;
    // Without the capability too many events are ENOSPC, as before; groups need it.
    if (multiplex && (caps & ARCHPMU_CAP_MULTIPLEX))
        cmd.flags |= ARCHPMU_COUNT_OPEN_MULTIPLEX;
    for (const auto& e : events_)
        if ((e.flags & (ARCHPMU_EVENT_GROUP | ARCHPMU_EVENT_NO_ROTATE)) &&
            !(caps & ARCHPMU_CAP_MULTIPLEX))
            throw Error(EOPNOTSUPP, "event '" + e.name +
                                        "': groups and :D need a newer archpmu module (no "
                                        "ARCHPMU_CAP_MULTIPLEX)");
    if (task) {
        if (!(caps & ARCHPMU_CAP_TASK))
            throw Error(EOPNOTSUPP,
                        "this archpmu module cannot count tasks (no ARCHPMU_CAP_TASK): load a "
                        "newer one, or count CPUs with -a or -C");
        if (task->pid < 0)
            throw Error(EINVAL, "task " + std::to_string(task->pid) + ": not a process id");
        cmd.flags |= ARCHPMU_COUNT_OPEN_TASK;
        cmd.task_pid = static_cast<std::uint32_t>(task->pid);
        if (task->enable_on_exec && !(caps & ARCHPMU_CAP_ENABLE_ON_EXEC))
            throw Error(EOPNOTSUPP,
                        "this archpmu module cannot start a session at exec (no "
                        "ARCHPMU_CAP_ENABLE_ON_EXEC): load a newer one");
        cmd.task_flags = (task->kind == TaskScope::Kind::process ? ARCHPMU_TASK_PROCESS : 0U) |
                         (task->inherit ? ARCHPMU_TASK_INHERIT : 0U) |
                         (task->enable_on_exec ? ARCHPMU_TASK_ENABLE_ON_EXEC : 0U);
    }
    const int ret = ::ioctl(device.get(), ARCHPMU_IOC_COUNT_OPEN, &cmd);
    if (ret < 0) {
        const int err = errno;
        const std::string name =
            cmd.bad_event < events_.size() ? events_[cmd.bad_event].name : std::string("?");
        if (task && (err == ESRCH || err == EACCES || err == EOPNOTSUPP))
            throw Error(err, detail::task_refusal(err, cmd, *task));
        throw Error(err, open_refusal(err, cmd, name,
                                      cmd.bad_event < evs.size() ? &evs[cmd.bad_event] : nullptr));
    }
    // With its own file the session no longer needs the device's: that closes here.
    fd_ = own_file ? UniqueFd(ret) : std::move(device);
    cpu_count_ = cmd.nr_cpus_opened;
    for (const auto& e : evs)
        counters_.push_back(e.counter);
    if (start == Start::now && !start_in_open)
        this->start();
}

void Session::control(unsigned long request, const char* what)
{
    auto cmd = detail::zeroed_cmd<archpmu_count_ctl>();
    detail::checked_ioctl(fd_.get(), request, &cmd, what);
}

void Session::start()
{
    control(ARCHPMU_IOC_COUNT_START, "ARCHPMU_IOC_COUNT_START");
}

void Session::stop()
{
    control(ARCHPMU_IOC_COUNT_STOP, "ARCHPMU_IOC_COUNT_STOP");
}

void Session::reset()
{
    control(ARCHPMU_IOC_COUNT_RESET, "ARCHPMU_IOC_COUNT_RESET");
}

Snapshot Session::read() const
{
    std::vector<archpmu_count_value> raw(static_cast<std::size_t>(cpu_count_) * events_.size());
    auto cmd = detail::zeroed_cmd<archpmu_count_read>();
    cmd.nr_values = static_cast<std::uint32_t>(raw.size());
    cmd.values = reinterpret_cast<std::uintptr_t>(raw.data());
    detail::checked_ioctl(fd_.get(), ARCHPMU_IOC_COUNT_READ, &cmd, "ARCHPMU_IOC_COUNT_READ");
    Snapshot snap;
    snap.timestamp_ns = cmd.timestamp_ns;
    snap.values.reserve(cmd.nr_values);
    for (std::uint32_t i = 0; i < cmd.nr_values; ++i) {
        const auto& r = raw[i];
        snap.values.push_back(CountValue{
            r.cpu, r.event, r.counter, (r.flags & ARCHPMU_VALUE_OFFLINE) != 0, r.value,
            r.time_enabled, r.time_running, (r.flags & ARCHPMU_VALUE_INCOMPLETE) != 0,
            (r.flags & ARCHPMU_VALUE_MULTIPLEXED) != 0, (r.flags & ARCHPMU_VALUE_CROWDED_OUT) != 0,
            (r.flags & ARCHPMU_VALUE_ABSENT) != 0});
    }
    return snap;
}

}  // namespace archpmu
