// SPDX-License-Identifier: MIT
#include "record.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "archpmu.h"
#include "archpmu/command.hpp"
#include "archpmu/device.hpp"
#include "archpmu/error.hpp"
#include "archpmu/perf_data.hpp"
#include "archpmu/pmu.hpp"
#include "archpmu/session.hpp"
#include "archpmu/sideband.hpp"
#include "archpmu/unique_fd.hpp"
#include "child.hpp"
#include "record_maps.hpp"

namespace archpmu::tool {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kPollMs = 100;
constexpr int kCheckpointMs = 500;  // how stale a SIGKILLed recording may be
constexpr std::uint32_t kUserStackRingPages = 128;
constexpr std::uint32_t kFinishedRound = 68;  // PERF_RECORD_FINISHED_ROUND

// perf's marker after each pass over the rings: what came before it and is no
// later than the previous round's last time can be sorted and flushed.
Record finished_round()
{
    Record r;
    r.type = kFinishedRound;
    r.bytes.assign(8, 0);
    std::memcpy(r.bytes.data(), &kFinishedRound, 4);
    r.bytes[6] = 8;
    return r;
}

// The events of the recording's session number `session`: each with its period or
// frequency, and ids of their own, so that the sessions' records stay apart.
std::vector<EventSpec> sampled_events(const RecordOptions& opts, const std::vector<EventSpec>& base,
                                      std::size_t session)
{
    std::vector<EventSpec> out = base;
    for (std::size_t i = 0; i < out.size(); ++i) {
        auto& e = out[i];
        if (opts.period)
            e.sample.period = opts.period;
        else
            e.sample.freq_hz = opts.freq_hz;
        e.sample.id = kSampleIdBase + (session * out.size() + i + 1) * kSampleIdStride;
    }
    return out;
}

// Every record the rings hold, written: the side-band's first, then the samples.
class Pump {
public:
    // `maps`: without side-band events, what names the samples' code.
    Pump(std::vector<Session>& sessions, std::vector<Sideband>& sidebands, MapsFollower* maps,
         PerfDataWriter& writer)
        : sessions_(sessions), sidebands_(sidebands), maps_(maps), writer_(writer)
    {
    }
    // A round, as perf record's: each ring's new records written as they lie in
    // it, then FINISHED_ROUND, up to which perf report sorts them by time.
    void operator()()
    {
        std::size_t n = 0;
        for (auto& sideband : sidebands_)
            n += sideband.drain_spans([&](const RingSpan& span) { writer_.write(span); });
        for (auto& session : sessions_)
            n += session.drain_spans([&](std::size_t, const RingSpan& span) {
                if (maps_)
                    writer_.write(maps_->before(span));
                writer_.write(span);
            });
        if (maps_)
            maps_->end_round();
        if (n)
            writer_.write(round_marker_);
    }

private:
    std::vector<Session>& sessions_;
    std::vector<Sideband>& sidebands_;
    MapsFollower* maps_;
    PerfDataWriter& writer_;
    const Record round_marker_ = finished_round();
};

// The recording goes to a file beside FILE and takes FILE's place when the run
// ends, where a non-empty FILE becomes FILE.old (perf's habit). So a command that
// cannot be run, or a run that fails, leaves FILE and FILE.old as they were. A FILE
// that is not a regular file (/dev/null) is written in place.
class StagedOutput {
public:
    explicit StagedOutput(std::string path) : path_(std::move(path))
    {
        struct stat st {};
        if (::stat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
            // The header is rewritten at the end: a pipe cannot take it.
            if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
                throw Error(ESPIPE, "-o/--output: '" + path_ +
                                        "' is a pipe or socket; perf.data needs a file");
            fd_ = UniqueFd(::open(path_.c_str(), O_WRONLY | O_CLOEXEC));
            if (!fd_.valid()) {
                const int err = errno;
                throw Error(err, "-o/--output: cannot open '" + path_ + "'");
            }
            return;
        }
        std::string staged = path_ + ".archpmu-XXXXXX";
        fd_ = UniqueFd(::mkostemp(staged.data(), O_CLOEXEC));
        if (!fd_.valid()) {
            const int err = errno;
            throw Error(err, "-o/--output: cannot create a file beside '" + path_ + "'");
        }
        staged_ = std::move(staged);
    }
    StagedOutput(const StagedOutput&) = delete;
    StagedOutput& operator=(const StagedOutput&) = delete;
    StagedOutput(StagedOutput&&) = delete;
    StagedOutput& operator=(StagedOutput&&) = delete;
    ~StagedOutput() { discard(); }

    UniqueFd take_fd() { return std::move(fd_); }

    // The run recorded nothing to keep: its file goes, FILE and FILE.old stay.
    void discard() noexcept
    {
        if (!staged_.empty())
            (void)::unlink(staged_.c_str());
        staged_.clear();
    }

    // The run ended: the recording becomes FILE. Should that fail, FILE is as it
    // was and the recording stays where it is.
    void commit()
    {
        if (staged_.empty())
            return;
        const std::string staged = std::exchange(staged_, {});
        const std::string old = path_ + ".old";
        struct stat st {};
        const bool keep_old =
            ::stat(path_.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
        if (keep_old && ::rename(path_.c_str(), old.c_str()) != 0) {
            const int err = errno;
            throw Error(err, "the recording is in '" + staged + "': cannot move the earlier '" +
                                 path_ + "' to '" + old + "'");
        }
        if (::rename(staged.c_str(), path_.c_str()) != 0) {
            const int err = errno;
            if (keep_old)
                (void)::rename(old.c_str(), path_.c_str());
            throw Error(
                err, "the recording is in '" + staged + "': cannot rename it to '" + path_ + "'");
        }
    }

private:
    std::string path_;
    std::string staged_;  // empty: FILE is written in place, or the run is committed
    UniqueFd fd_;
};

// Every sample a ring dropped, as perf record ends its file: a LOST record still
// waiting for room when the recording stopped is counted here too.
void write_lost_samples(const std::vector<Session>& sessions, PerfDataWriter& writer)
{
    for (const auto& session : sessions) {
        const auto stats = session.ring_stats();
        const auto ids = session.cpu_ids(0);  // ring i is cpus()[i], as cpu_ids
        for (std::size_t i = 0; i < stats.size() && i < ids.size(); ++i)
            if (stats[i].lost)
                writer.write(make_lost_samples_record(stats[i].lost, stats[i].cpu, ids[i]));
    }
}

void print_summary(const std::vector<Session>& sessions, const PerfDataWriter& writer,
                   const std::string& output)
{
    std::map<std::uint32_t, RingStats> per_cpu;
    std::size_t corrupt = 0;
    for (const auto& session : sessions) {
        for (const auto& s : session.ring_stats()) {
            RingStats& sum = per_cpu[s.cpu];
            sum.cpu = s.cpu;
            sum.samples += s.samples;
            sum.lost += s.lost;
            sum.throttled += s.throttled;
        }
        corrupt += session.corrupt_rings();
    }
    for (const auto& [cpu, s] : per_cpu)
        std::cerr << "CPU" << cpu << ": " << s.samples << " samples, " << s.lost << " lost, "
                  << s.throttled << " throttled\n";
    if (corrupt)
        std::cerr << "archpmu record: warning: " << corrupt << " malformed ring contents skipped\n";
    char mb[32];
    (void)std::snprintf(mb, sizeof(mb), "%.3f",
                        static_cast<double>(writer.file_bytes()) / (1024.0 * 1024.0));
    std::cerr << "[ archpmu record: Captured and wrote " << mb << " MB " << output << " ("
              << writer.samples() << " samples) ]\n";
}

// The thread group of thread `tid` (/proc/TID/status), or tid itself if it is gone.
pid_t tgid_of(pid_t tid)
{
    std::ifstream in("/proc/" + std::to_string(tid) + "/status");
    std::string key;
    while (in >> key) {
        if (key == "Tgid:") {
            pid_t tgid = 0;
            if (in >> tgid && tgid > 0)
                return tgid;
            break;
        }
        in.ignore(1 << 16, '\n');
    }
    return tid;
}

// The threads of process `pid` now (/proc/PID/task).
std::vector<pid_t> threads_of(pid_t pid)
{
    std::vector<pid_t> out;
    std::error_code ec;
    for (const auto& entry :
         std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
        const std::string name = entry.path().filename().string();
        if (!name.empty() && name.find_first_not_of("0123456789") == std::string::npos)
            out.push_back(static_cast<pid_t>(std::stol(name)));
    }
    return out;
}

// The side-band events, as perf record opens them: on the recorded tasks, where
// perf lets the caller (perf_event_paranoid <= 2 for one's own), else on every task.
std::vector<Sideband> open_sidebands(const RecordOptions& opts, const std::vector<pid_t>& pids,
                                     const std::vector<pid_t>& tids, const PendingCommand* command)
{
    const std::vector<std::uint32_t> cpus = online_cpus();
    std::vector<Sideband> out;
    std::string why;
    if (!opts.system_wide) {
        std::vector<SidebandTarget> targets;
        if (command && pids.empty() && tids.empty())
            targets.push_back(SidebandTarget{command->pid(), true});
        for (const pid_t pid : pids)
            for (const pid_t tid : threads_of(pid))
                targets.push_back(SidebandTarget{tid, false});
        for (const pid_t tid : tids)
            targets.push_back(SidebandTarget{tid, false});
        try {
            out.emplace_back(cpus, 64, targets, opts.user_stack != 0);
            return out;
        } catch (const Error& e) {
            out.clear();
            why = e.what();
        }
    }
    try {
        // On every online CPU, whatever -C says: a command may exec and map
        // its libraries on another CPU before it runs on a recorded one.
        out.emplace_back(cpus, 64, std::vector<SidebandTarget>{}, opts.user_stack != 0);
    } catch (const Error& e) {
        std::cerr << "archpmu record: warning: no side-band events ("
                  << (why.empty() ? "" : why + "; ") << e.what()
                  << "): the code of processes started from now on is named from /proc as "
                     "their samples come, and a process that ends within about 0.1 s is not\n";
    }
    return out;
}

}  // namespace

int run_record(const RecordOptions& opts)
{
    catch_termination();
    const Info info = Device(opts.device).info();
    const std::vector<EventSpec> base = info.privilege == Privilege::own_user && !opts.system_wide
                                            ? user_mode_named(opts.events)
                                            : opts.events;
    std::optional<PendingCommand> pending;
    if (!opts.command.empty())
        pending.emplace(opts.command);

    SessionOptions so;
    so.device = opts.device;
    so.sampling = SamplingOptions{};
    so.sampling->ring_pages = opts.ring_pages;
    // A stack in every sample: a larger ring by default, still within perf's
    // per-user allowance (ring_mlock_kb, 516 KiB per CPU).
    if (!opts.ring_pages && opts.user_stack)
        so.sampling->ring_pages = kUserStackRingPages;
    so.sampling->read_group = opts.read_group;
    so.sampling->callchain = opts.callchain;
    so.sampling->user_stack = opts.user_stack;
    std::vector<Session> sessions;
    const auto on_task = [&](const TaskScope& task) {
        SessionOptions o = so;
        o.task = task;
        sessions.emplace_back(sampled_events(opts, base, sessions.size()), o);
    };
    // As perf: a command is sampled from its exec on, with everything it starts.
    const bool on_exec = pending && opts.pids.empty() && opts.tids.empty() &&
                         (info.capabilities & ARCHPMU_CAP_ENABLE_ON_EXEC) != 0;
    // Each task once: a session per target, and two on one task would record it twice.
    std::vector<pid_t> pids = opts.pids;
    std::sort(pids.begin(), pids.end());
    pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
    std::vector<pid_t> tids;
    for (const pid_t tid : opts.tids)
        if (std::find(tids.begin(), tids.end(), tid) == tids.end() &&
            !std::binary_search(pids.begin(), pids.end(), tgid_of(tid)))
            tids.push_back(tid);
    std::vector<pid_t> processes;  // whose maps are synthesised
    if (opts.system_wide) {
        so.cpus = opts.cpus;
        sessions.emplace_back(sampled_events(opts, base, 0), so);
    } else {
        if (pending && opts.pids.empty() && opts.tids.empty())
            on_task(TaskScope{TaskScope::Kind::process, pending->pid(), true, on_exec});
        for (const pid_t pid : pids) {
            on_task(TaskScope{TaskScope::Kind::process, pid, true});
            processes.push_back(pid);
        }
        for (const pid_t tid : tids) {
            on_task(TaskScope{TaskScope::Kind::thread, tid, true});
            processes.push_back(tgid_of(tid));
        }
    }

    std::vector<Sideband> sidebands =
        open_sidebands(opts, pids, tids, pending ? &*pending : nullptr);
    const Session& first = sessions.front();
    std::vector<PerfEventDesc> descs;
    for (std::size_t i = 0; i < first.events().size(); ++i) {
        PerfEventDesc d;
        d.attr = perf_attr_for(first.events()[i], first.sampling());
        if (!opts.system_wide) {
            // perf reads SAMPLE_READ values of an inherited event per thread; these are per CPU.
            d.attr.inherit = first.read_group() ? 0 : 1;
            d.attr.enable_on_exec = on_exec ? 1 : 0;
            d.attr.disabled = d.attr.enable_on_exec;
        }
        d.name = first.events()[i].name;
        for (const auto& session : sessions)
            for (const auto id : session.cpu_ids(i))
                d.ids.push_back(id);
        descs.push_back(std::move(d));
    }
    if (!sidebands.empty()) {
        PerfEventDesc d;
        d.attr = sidebands.front().attr();
        d.name = "dummy:u";
        for (const auto& sideband : sidebands)
            for (const auto id : sideband.ids())
                d.ids.push_back(id);
        descs.push_back(std::move(d));
    }
    StagedOutput output(opts.output);
    PerfDataWriter writer(output.take_fd(), opts.output, std::move(descs),
                          host_perf_data_info(opts.cmdline));

    // What already runs, from /proc: attributed to an id whose trailer is the same.
    std::vector<std::string> warnings;
    const std::uint64_t synth_id =
        sidebands.empty() ? first.cpu_ids(0)[0] : sidebands.front().ids()[0];
    const bool data_maps = opts.user_stack != 0;  // a DWARF unwinder reads the files' tables
    writer.write(opts.system_wide
                     ? synthesize_system(0, synth_id, &warnings, data_maps)
                     : synthesize_processes(processes, 0, synth_id, &warnings, data_maps));
    for (const auto& w : warnings)
        std::cerr << "archpmu record: warning: " << w << '\n';

    catch_interrupt();

    std::vector<int> ring_fds;
    ring_fds.reserve(sessions.size());
    for (const auto& session : sessions)
        ring_fds.push_back(session.fd());
    for (const auto& sideband : sidebands)
        for (const int fd : sideband.fds())
            ring_fds.push_back(fd);

    std::optional<MapsFollower> maps;
    if (sidebands.empty())
        maps.emplace(synth_id, data_maps);
    Pump pump(sessions, sidebands, maps ? &*maps : nullptr, writer);
    const auto start = Clock::now();
    for (auto& session : sessions)
        session.start();
    const pid_t child = terminated() ? -1 : release(pending);
    ChildGuard guard;
    guard.watch(child);
    // With -p or -t, until they are gone (or --duration, or Ctrl-C).
    TaskWatch watch(child, opts.system_wide ? std::vector<pid_t>{} : opts.pids, opts.tids);
    const auto deadline = opts.duration
                              ? start + std::chrono::duration_cast<Clock::duration>(*opts.duration)
                              : Clock::time_point::max();
    // A recording killed with SIGKILL can still be read (FILE.archpmu-XXXXXX) up to here.
    auto checkpointed = start;
    for (;;) {
        if (terminated() || (child <= 0 && interrupted()))
            break;
        const auto until = std::min(Clock::now() + std::chrono::milliseconds(kPollMs), deadline);
        const bool done = watch.wait_until(until, &ring_fds);
        pump();
        if (done || Clock::now() >= deadline)
            break;
        if (Clock::now() - checkpointed >= std::chrono::milliseconds(kCheckpointMs)) {
            writer.checkpoint();
            checkpointed = Clock::now();
        }
    }
    for (auto& session : sessions)
        session.stop();
    pump();
    // A SIGTERM ended the recording with the command still running: as perf, end it.
    const int status = terminated() ? guard.end() : guard.reap();
    write_lost_samples(sessions, writer);
    writer.finish();
    if (const int err = pending ? pending->exec_error() : 0) {
        say_cannot_run("record", opts.command.front(), err);
        output.discard();  // before a Ctrl-C's SIGINT ends the tool with no unwinding
        return exit_by_interrupt(kCannotRunStatus);
    }
    output.commit();
    print_summary(sessions, writer, opts.output);
    return exit_by_interrupt(exit_status(child, status));
}

}  // namespace archpmu::tool
