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
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "archpmu/command.hpp"
#include "archpmu/error.hpp"
#include "archpmu/perf_data.hpp"
#include "archpmu/session.hpp"
#include "archpmu/sideband.hpp"
#include "archpmu/unique_fd.hpp"
#include "child.hpp"

namespace archpmu::tool {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kPollMs = 100;
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

std::vector<EventSpec> sampled_events(const RecordOptions& opts)
{
    std::vector<EventSpec> out = opts.events;
    for (auto& e : out) {
        if (opts.period)
            e.sample.period = opts.period;
        else
            e.sample.freq_hz = opts.freq_hz;
    }
    return out;
}

// Every record the rings hold, written: the side-band's first, then the samples.
class Pump {
public:
    Pump(Session& session, Sideband* sideband, PerfDataWriter& writer)
        : session_(session), sideband_(sideband), writer_(writer)
    {
    }
    void operator()()
    {
        std::size_t n = 0;
        if (sideband_)
            n += sideband_->drain([&](Record&& r) { writer_.write(r); });
        for (const auto& r : session_.drain_merged()) {
            writer_.write(r);
            ++n;
        }
        if (n)
            writer_.write(finished_round());
    }

private:
    Session& session_;
    Sideband* sideband_;
    PerfDataWriter& writer_;
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

void print_summary(const Session& session, const PerfDataWriter& writer, const std::string& output)
{
    for (const auto& s : session.ring_stats())
        std::cerr << "CPU" << s.cpu << ": " << s.samples << " samples, " << s.lost << " lost, "
                  << s.throttled << " throttled\n";
    if (session.corrupt_rings())
        std::cerr << "archpmu record: warning: " << session.corrupt_rings()
                  << " malformed ring contents skipped\n";
    char mb[32];
    (void)std::snprintf(mb, sizeof(mb), "%.3f",
                        static_cast<double>(writer.file_bytes()) / (1024.0 * 1024.0));
    std::cerr << "[ archpmu record: Captured and wrote " << mb << " MB " << output << " ("
              << writer.samples() << " samples) ]\n";
}

}  // namespace

int run_record(const RecordOptions& opts)
{
    catch_termination();
    SessionOptions so;
    so.device = opts.device;
    so.cpus = opts.cpus;
    so.sampling = SamplingOptions{};
    so.sampling->ring_pages = opts.ring_pages;
    so.sampling->read_group = opts.read_group;
    Session session(sampled_events(opts), so);

    std::unique_ptr<Sideband> sideband;
    try {
        // On every online CPU, whatever -C says: a command may exec and map
        // its libraries on another CPU before it runs on a recorded one.
        sideband = std::make_unique<Sideband>(online_cpus());
    } catch (const Error& e) {
        std::cerr << "archpmu record: warning: no side-band events (" << e.what()
                  << "): processes started from now on will have no symbols\n";
    }

    std::vector<PerfEventDesc> descs;
    for (std::size_t i = 0; i < session.events().size(); ++i) {
        PerfEventDesc d;
        d.attr = perf_attr_for(session.events()[i], session.read_group());
        d.name = session.events()[i].name;
        d.ids = session.cpu_ids(i);
        descs.push_back(std::move(d));
    }
    if (sideband) {
        PerfEventDesc d;
        d.attr = sideband_attr();
        d.name = "dummy:u";
        d.ids = sideband->ids();
        descs.push_back(std::move(d));
    }
    StagedOutput output(opts.output);
    PerfDataWriter writer(output.take_fd(), opts.output, std::move(descs),
                          host_perf_data_info(opts.cmdline));

    // What already runs, from /proc: attributed to an id whose trailer is the same.
    std::vector<std::string> warnings;
    const std::uint64_t synth_id = sideband ? sideband->ids()[0] : session.cpu_ids(0)[0];
    writer.write(synthesize_system(0, synth_id, &warnings));
    for (const auto& w : warnings)
        std::cerr << "archpmu record: warning: " << w << '\n';

    catch_interrupt();

    std::vector<pollfd> pfds{{session.fd(), POLLIN, 0}};
    if (sideband)
        for (const int fd : sideband->fds())
            pfds.push_back({fd, POLLIN, 0});

    std::optional<PendingCommand> pending;
    if (!opts.command.empty())
        pending.emplace(opts.command);
    Pump pump(session, sideband.get(), writer);
    const auto start = Clock::now();
    session.start();
    const pid_t child = terminated() ? -1 : release(pending);
    ChildGuard guard;
    guard.watch(child);
    int status = 0;
    const auto deadline = opts.duration
                              ? start + std::chrono::duration_cast<Clock::duration>(*opts.duration)
                              : Clock::time_point::max();
    for (;;) {
        if (child > 0 && ::waitpid(child, &status, WNOHANG) == child) {
            guard.watch(-1);  // reaped
            break;
        }
        if (terminated() || (child <= 0 && (interrupted() || Clock::now() >= deadline)))
            break;
        int timeout = kPollMs;
        if (deadline != Clock::time_point::max()) {
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
            timeout = static_cast<int>(std::clamp<long long>(left.count() + 1, 0, kPollMs));
        }
        if (::poll(pfds.data(), pfds.size(), timeout) < 0 && errno != EINTR)
            throw Error(errno, "poll");
        pump();
    }
    session.stop();
    pump();
    // A SIGTERM ended the recording with the command still running: as perf, end it.
    if (guard.watching())
        status = guard.end();
    writer.finish();
    if (const int err = pending ? pending->exec_error() : 0) {
        say_cannot_run("record", opts.command.front(), err);
        output.discard();  // before a Ctrl-C's SIGINT ends the tool with no unwinding
        return exit_by_interrupt(kCannotRunStatus);
    }
    output.commit();
    print_summary(session, writer, opts.output);
    return exit_by_interrupt(exit_status(child, status));
}

}  // namespace archpmu::tool
