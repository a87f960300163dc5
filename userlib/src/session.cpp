// SPDX-License-Identifier: MIT
#include "archpmu/session.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <utility>

#include "archpmu.h"
#include "archpmu/error.hpp"
#include "archpmu/events.hpp"
#include "ioctl_cmd.hpp"
#include "session_detail.hpp"

namespace archpmu {
namespace detail {

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

std::uint64_t CountValue::scaled() const
{
    return detail::scale(value, time_enabled_ns, time_running_ns);
}

std::uint64_t Result::scaled() const
{
    return detail::scale(value, time_enabled_ns, time_running_ns);
}

const Result& Results::at(std::string_view name) const
{
    const Result* found = nullptr;
    for (const auto& r : events) {
        if (r.name != name)
            continue;
        if (found)
            throw Error(EINVAL, "event '" + std::string(name) +
                                    "' is in the session more than once: take it from events[]");
        found = &r;
    }
    if (!found)
        throw Error(ENOENT, "no event '" + std::string(name) + "' in the session");
    return *found;
}

std::uint64_t Results::get(std::string_view name) const
{
    return at(name).scaled();
}

Results summarize(const std::vector<EventSpec>& events, const Snapshot& snapshot)
{
    Results out;
    summarize(events, snapshot, out);
    return out;
}

void summarize(const std::vector<EventSpec>& events, const Snapshot& snapshot, Results& into)
{
    into.timestamp_ns = snapshot.timestamp_ns;
    into.events.resize(events.size());
    for (std::size_t e = 0; e < events.size(); ++e) {
        // Afresh, but keeping the name's and the rows' storage.
        Result& r = into.events[e];
        std::string name = std::move(r.name);
        std::vector<CountValue> rows = std::move(r.per_cpu);
        r = Result{};
        name = events[e].name;  // into the storage it had
        r.name = std::move(name);
        rows.clear();
        r.per_cpu = std::move(rows);
        r.absent = true;
    }
    for (const auto& v : snapshot.values) {
        if (v.event >= into.events.size())
            continue;
        Result& r = into.events[v.event];
        r.value += v.value;
        r.time_enabled_ns += v.time_enabled_ns;
        r.time_running_ns += v.time_running_ns;
        r.multiplexed = r.multiplexed || v.multiplexed;
        r.crowded_out = r.crowded_out || v.crowded_out;
        r.absent = r.absent && v.absent;
        r.incomplete = r.incomplete || v.incomplete;
        r.per_cpu.push_back(v);
    }
    for (auto& r : into.events)
        r.absent = r.absent && !r.per_cpu.empty();
}

Session::Session(std::vector<EventSpec> events, const SessionOptions& options)
    : events_(std::move(events))
{
    open(options);
}

Session::Session(std::string_view events, const SessionOptions& options)
    : Session(parse_event_list(events), options)
{
}

namespace {

void check_task_scope(std::uint64_t caps, const TaskScope& task, archpmu_count_open& cmd)
{
    if (!(caps & ARCHPMU_CAP_TASK))
        throw Error(EOPNOTSUPP,
                    "this archpmu module cannot count tasks (no ARCHPMU_CAP_TASK): load a "
                    "newer one, or count CPUs with -a or -C");
    if (task.pid < 0)
        throw Error(EINVAL, "task " + std::to_string(task.pid) + ": not a process id");
    if (task.enable_on_exec && !(caps & ARCHPMU_CAP_ENABLE_ON_EXEC))
        throw Error(EOPNOTSUPP,
                    "this archpmu module cannot start a session at exec (no "
                    "ARCHPMU_CAP_ENABLE_ON_EXEC): load a newer one");
    cmd.flags |= ARCHPMU_COUNT_OPEN_TASK;
    cmd.task_pid = static_cast<std::uint32_t>(task.pid);
    cmd.task_flags = (task.kind == TaskScope::Kind::process ? ARCHPMU_TASK_PROCESS : 0U) |
                     (task.inherit ? ARCHPMU_TASK_INHERIT : 0U) |
                     (task.enable_on_exec ? ARCHPMU_TASK_ENABLE_ON_EXEC : 0U);
}

// What the module would refuse with an errno that cannot name it, refused here
// by name: the input before the device is opened.
void check_options(const std::vector<EventSpec>& events, const SessionOptions& o)
{
    if (events.empty())
        throw Error(EINVAL, "a session needs at least one event");
    if (o.task && !o.cpus.empty())
        throw Error(EINVAL, "a session counts CPUs or tasks, not both");
    for (std::size_t i = 0; i < o.cpus.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (o.cpus[i] == o.cpus[j])
                throw Error(EINVAL, "CPU " + std::to_string(o.cpus[i]) + " is listed twice");
    bool samples = false;
    for (const auto& e : events) {
        const bool sampled = e.sample.period || e.sample.freq_hz;
        if (sampled && !o.sampling)
            throw Error(EINVAL, "event '" + e.name +
                                    "' has a sampling period or frequency, but the session "
                                    "has no rings (SessionOptions::sampling)");
        samples = samples || sampled;
    }
    if (!o.sampling)
        return;
    if (!samples)
        throw Error(EINVAL,
                    "a session with rings needs an event with a sampling period or "
                    "frequency (EventSpec::sample)");
    if (o.multiplex)
        throw Error(EOPNOTSUPP, "a sampling session cannot multiplex (yet): give fewer events");
}

// The sampling half of COUNT_OPEN: the rings and each event's period or
// frequency and id. Returns the ring's data pages.
std::uint32_t add_sampling(std::uint64_t caps, const SamplingOptions& so,
                           const std::vector<EventSpec>& events,
                           std::vector<archpmu_sample_event>& sevs, std::vector<std::uint64_t>& ids,
                           archpmu_count_open& cmd)
{
    if ((caps & ARCHPMU_CAP_SAMPLE) == 0 || (caps & ARCHPMU_CAP_SESSION_FD) == 0)
        throw Error(EOPNOTSUPP,
                    "the archpmu module cannot sample (no ARCHPMU_CAP_SAMPLE); load a newer "
                    "module");
    const std::uint32_t pages = so.ring_pages ? so.ring_pages : ARCHPMU_RING_DEFAULT_PAGES;
    if ((pages & (pages - 1)) != 0 || pages > ARCHPMU_RING_MAX_PAGES)
        throw Error(EINVAL, "ring pages must be a power of 2 up to " +
                                std::to_string(ARCHPMU_RING_MAX_PAGES));
    sevs.resize(events.size());
    for (std::size_t i = 0; i < events.size(); ++i) {
        const SampleSpec& s = events[i].sample;
        if (s.period && s.freq_hz)
            throw Error(EINVAL, "event '" + events[i].name + "': give a period or a frequency");
        if ((events[i].flags & ARCHPMU_EVENT_CORE_TYPE) && !(caps & ARCHPMU_CAP_CORE_TYPE_SAMPLE))
            throw Error(EOPNOTSUPP, "event '" + events[i].name +
                                        "': this archpmu module does not sample an event for one "
                                        "core type (no ARCHPMU_CAP_CORE_TYPE_SAMPLE): load a "
                                        "newer module");
        sevs[i].period = s.freq_hz ? s.freq_hz : s.period;
        sevs[i].flags = s.freq_hz ? ARCHPMU_SAMPLE_FREQ : 0;
        sevs[i].id = s.id.value_or(kSampleIdBase + (i + 1) * kSampleIdStride);
        ids.push_back(sevs[i].id);
    }
    cmd.sample_events = reinterpret_cast<std::uintptr_t>(sevs.data());
    if (so.callchain && !(caps & ARCHPMU_CAP_CALLCHAIN))
        throw Error(EOPNOTSUPP,
                    "this archpmu module cannot sample call chains (no ARCHPMU_CAP_CALLCHAIN): "
                    "load a newer module");
    if (so.user_stack && !(caps & ARCHPMU_CAP_USER_STACK))
        throw Error(EOPNOTSUPP,
                    "this archpmu module cannot sample user stacks (no ARCHPMU_CAP_USER_STACK): "
                    "load a newer module");
    if (so.user_stack % 8 != 0 || so.user_stack > ARCHPMU_STACK_USER_MAX)
        throw Error(EINVAL, "a user stack of " + std::to_string(so.user_stack) +
                                " bytes: give a multiple of 8 up to " +
                                std::to_string(ARCHPMU_STACK_USER_MAX));
    // The module keeps every sample within half a ring, so that the rest is read meanwhile.
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    if (so.user_stack > pages * page / 2) {
        std::uint64_t need = 1;
        while (need * page / 2 < so.user_stack)
            need *= 2;
        throw Error(EINVAL, "a user stack of " + std::to_string(so.user_stack) +
                                " bytes must fit in half a ring: give at least " +
                                std::to_string(need) + " ring pages, not " + std::to_string(pages) +
                                ", or a smaller stack");
    }
    cmd.sample_flags = (so.read_group ? ARCHPMU_SAMPLE_READ : 0U) |
                       (so.callchain ? ARCHPMU_SAMPLE_CALLCHAIN : 0U) |
                       (so.user_stack ? ARCHPMU_SAMPLE_USER_STACK : 0U);
    cmd.stack_user = so.user_stack;
    cmd.ring_pages = pages;
    cmd.wakeup_bytes = so.wakeup_bytes;
    return pages;
}

}  // namespace

void Session::open(const SessionOptions& options)
{
    check_options(events_, options);
    UniqueFd device = open_device_file(options.device);
    const std::uint64_t caps = capabilities(device.get());
    const bool own_file = (caps & ARCHPMU_CAP_SESSION_FD) != 0;
    const bool start_in_open = options.start_now && (caps & ARCHPMU_CAP_OPEN_START) != 0;
    std::vector<archpmu_event> evs =
        detail::module_events(device.get(), caps, events_, options.cpus);
    auto cmd = detail::zeroed_cmd<archpmu_count_open>();
    cmd.nr_events = static_cast<std::uint32_t>(evs.size());
    cmd.nr_cpus = static_cast<std::uint32_t>(options.cpus.size());
    cmd.events = reinterpret_cast<std::uintptr_t>(evs.data());
    cmd.cpus = reinterpret_cast<std::uintptr_t>(options.cpus.data());
    if (own_file)
        cmd.flags |= ARCHPMU_COUNT_OPEN_FD;
    if (start_in_open)
        cmd.flags |= ARCHPMU_COUNT_OPEN_START;
    // Without the capability too many events are ENOSPC, as before; groups need it.
    if (options.multiplex && (caps & ARCHPMU_CAP_MULTIPLEX))
        cmd.flags |= ARCHPMU_COUNT_OPEN_MULTIPLEX;
    for (const auto& e : events_)
        if ((e.flags & (ARCHPMU_EVENT_GROUP | ARCHPMU_EVENT_NO_ROTATE)) &&
            !(caps & ARCHPMU_CAP_MULTIPLEX))
            throw Error(EOPNOTSUPP, "event '" + e.name +
                                        "': groups and :D need a newer archpmu module (no "
                                        "ARCHPMU_CAP_MULTIPLEX)");
    if (options.task)
        check_task_scope(caps, *options.task, cmd);
    std::vector<archpmu_sample_event> sevs;
    std::uint32_t pages = 0;
    if (options.sampling) {
        if (options.task && !(caps & ARCHPMU_CAP_TASK_SAMPLE))
            throw Error(EOPNOTSUPP,
                        "this archpmu module cannot sample tasks (no ARCHPMU_CAP_TASK_SAMPLE): "
                        "load a newer module, or sample CPUs");
        pages = add_sampling(caps, *options.sampling, events_, sevs, ids_, cmd);
        sampling_ = *options.sampling;
    }
    const int ret = ::ioctl(device.get(), ARCHPMU_IOC_COUNT_OPEN, &cmd);
    if (ret < 0) {
        const int err = errno;
        const std::string name =
            cmd.bad_event < events_.size() ? events_[cmd.bad_event].name : std::string("?");
        if (err == ENODEV && cmd.bad_cpu == ~0U && module_unloading())
            throw Error(err,
                        "the archpmu module is being unloaded (/sys/class/misc/archpmu/unloading "
                        "is 1): no new sessions until it is loaded again, or 0 is written there");
        if (options.task &&
            (err == ESRCH || err == EACCES || (err == EOPNOTSUPP && cmd.bad_event == ~0U)))
            throw Error(err, detail::task_refusal(err, cmd, *options.task));
        if (options.sampling &&
            (err == ERANGE || err == ENOMEM || (err == EINVAL && cmd.bad_event == ~0U)))
            throw Error(err, detail::sampling_refusal(err, cmd, name));
        throw Error(err, open_refusal(err, cmd, name,
                                      cmd.bad_event < evs.size() ? &evs[cmd.bad_event] : nullptr));
    }
    // With its own file the session no longer needs the device's: that closes here.
    fd_ = own_file ? UniqueFd(ret) : std::move(device);
    cpu_count_ = cmd.nr_cpus_opened;
    read_sum_ = (caps & ARCHPMU_CAP_READ_SUM) != 0;
    for (const auto& e : evs)
        counters_.push_back(e.counter);
    if (options.sampling)
        map_rings(pages);
    if (options.start_now && !start_in_open)
        start();
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
    Snapshot snap;
    read(snap);
    return snap;
}

void Session::read(Snapshot& into) const
{
    // The module's rows, converted below; per thread, so that a const Session
    // can be read from several threads and a repeated read allocates nothing.
    thread_local std::vector<archpmu_count_value> raw;
    raw.resize(static_cast<std::size_t>(cpu_count_) * events_.size());
    auto cmd = detail::zeroed_cmd<archpmu_count_read>();
    cmd.nr_values = static_cast<std::uint32_t>(raw.size());
    cmd.values = reinterpret_cast<std::uintptr_t>(raw.data());
    detail::checked_ioctl(fd_.get(), ARCHPMU_IOC_COUNT_READ, &cmd, "ARCHPMU_IOC_COUNT_READ");
    into.timestamp_ns = cmd.timestamp_ns;
    into.values.clear();
    into.values.reserve(cmd.nr_values);
    for (std::uint32_t i = 0; i < cmd.nr_values; ++i) {
        const auto& r = raw[i];
        into.values.push_back(CountValue{
            r.cpu, r.event, r.counter, (r.flags & ARCHPMU_VALUE_OFFLINE) != 0, r.value,
            r.time_enabled, r.time_running, (r.flags & ARCHPMU_VALUE_INCOMPLETE) != 0,
            (r.flags & ARCHPMU_VALUE_MULTIPLEXED) != 0, (r.flags & ARCHPMU_VALUE_CROWDED_OUT) != 0,
            (r.flags & ARCHPMU_VALUE_ABSENT) != 0});
    }
}

void Session::read_totals(Results& into) const
{
    if (!read_sum_) {
        thread_local Snapshot snapshot;
        read(snapshot);
        summarize(events_, snapshot, into);
        for (auto& r : into.events)
            r.per_cpu.clear();
        return;
    }
    thread_local std::vector<archpmu_count_value> raw;
    raw.resize(events_.size());
    auto cmd = detail::zeroed_cmd<archpmu_count_read>();
    cmd.flags = ARCHPMU_COUNT_READ_SUM;
    cmd.nr_values = static_cast<std::uint32_t>(raw.size());
    cmd.values = reinterpret_cast<std::uintptr_t>(raw.data());
    detail::checked_ioctl(fd_.get(), ARCHPMU_IOC_COUNT_READ, &cmd, "ARCHPMU_IOC_COUNT_READ");
    into.timestamp_ns = cmd.timestamp_ns;
    into.events.resize(events_.size());
    for (std::size_t e = 0; e < events_.size(); ++e) {
        const auto& v = raw[e];
        Result& r = into.events[e];
        if (r.name != events_[e].name)
            r.name = events_[e].name;
        r.value = v.value;
        r.time_enabled_ns = v.time_enabled;
        r.time_running_ns = v.time_running;
        r.multiplexed = (v.flags & ARCHPMU_VALUE_MULTIPLEXED) != 0;
        r.crowded_out = (v.flags & ARCHPMU_VALUE_CROWDED_OUT) != 0;
        r.absent = (v.flags & ARCHPMU_VALUE_ABSENT) != 0;
        r.incomplete = (v.flags & ARCHPMU_VALUE_INCOMPLETE) != 0;
        r.per_cpu.clear();
    }
}

}  // namespace archpmu
