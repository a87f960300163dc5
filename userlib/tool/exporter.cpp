// SPDX-License-Identifier: MIT
// The session is opened at start and kept: Prometheus' rate() wants counters that run
// between scrapes. When the module is missing or refuses the counters (another session
// holds them), archpmu_up is 0 and each scrape, or the idle tick, tries again at most
// once a second. HTTP is civetweb, the server prometheus-cpp's Exposer embeds: the
// Exposer serves only the text format and its handler cannot be replaced, so the
// exporter registers its own, which negotiates the format.
#include "exporter.hpp"

#include <CivetServer.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>

#include "archpmu/device.hpp"
#include "archpmu/error.hpp"
#include "archpmu/sampling.hpp"
#include "archpmu/session.hpp"
#include "exporter_metrics.hpp"
#include "openmetrics.hpp"

namespace archpmu::tool {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kRetry = std::chrono::seconds(1);
// How long a device node it may not open is waited for before it has counted: udev sets
// the node's group a moment after the module creates it, and the service may start between.
constexpr auto kNodeGrace = std::chrono::seconds(10);

// The session and what a scrape reports of it. Scrapes come from civetweb's threads.
class Source {
public:
    explicit Source(const ExporterOptions& options) : options_(options) {}

    // The open at start: a refusal no retry mends throws (run_exporter: kExporterConfigStatus).
    void open_first()
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        open_locked(true);
    }

    // Why a session that never counted was refused for good after the start (the module
    // came later), for run_exporter to end with kExporterConfigStatus; empty otherwise.
    std::string refused_for_good()
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        return refused_for_good_;
    }

    std::vector<prometheus::MetricFamily> scrape()
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        follow_module_locked();
        ScrapeView view;
        view.events = options_.events;
        view.sessions_opened = opened_;
        if (session_) {
            try {
                session_->read(view.snapshot);
                view.up = true;
                view.cpus = cpus_;
                view.backend = backend_;
            } catch (const Error& e) {
                say("reading the session failed, opening it again: " + std::string(e.what()));
                session_.reset();
            }
        }
        if (view.up) {
            read_sampling_totals();
            for (const auto& [cpu, totals] : sampling_)
                view.sampling.push_back(totals);
        }
        return scrape_families(view, reported_);
    }

    // SIGHUP: counts restart on a new session (which takes CPUs now online).
    void reopen()
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        session_.reset();
        try_open_locked();
    }

    // The idle tick: what a scrape would do about the session, without one.
    void tick()
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        follow_module_locked();
    }

private:
    // An unload asked for closes the session, which would keep the module; a session
    // lost or refused is tried again.
    void follow_module_locked()
    {
        if (session_ && module_unloading()) {
            say("the module is being unloaded: closing the session (archpmu_up is 0) until it "
                "is back");
            session_.reset();
        }
        if (!session_ && Clock::now() - last_try_ >= kRetry)
            try_open_locked();
    }

    void try_open_locked()
    {
        if (!refused_for_good_.empty())
            return;
        try {
            open_locked(false);
        } catch (const Error& e) {
            refused_for_good_ = e.what();
        }
    }

    // Of the session's CPUs; an offline one keeps what it had (sysfs has no file for it).
    void read_sampling_totals()
    {
        try {
            for (const auto& t : sampling_totals())
                if (std::any_of(cpus_.begin(), cpus_.end(),
                                [&](const CpuInfo& c) { return c.cpu == t.cpu; }))
                    sampling_[t.cpu] = t;
        } catch (const Error& e) {
            say("reading the sampling totals failed: " + std::string(e.what()));
        }
    }

    // Throws what no retry mends while no session has counted yet, whether at the start or
    // once the module is there; a device node it may not open only after kNodeGrace.
    void open_locked(bool at_start)
    {
        const bool first = opened_ == 0;
        last_try_ = Clock::now();
        if (module_unloading()) {
            say("cannot count (archpmu_up is 0, trying again): the module is being unloaded");
            return;
        }
        std::optional<Device> dev;
        try {
            dev.emplace(options_.device);
        } catch (const Error& e) {
            // No module (yet): wait for it. A node it may not open: wait for udev, a
            // while. Anything else is the service's setup, which no retry mends.
            const int err = e.code().value();
            const bool denied = err == EACCES || err == EPERM;
            const bool no_module = err == ENOENT || err == ENODEV || err == ENXIO;
            if (!denied)
                denied_since_.reset();
            else if (!denied_since_)
                denied_since_ = last_try_;
            const bool for_good =
                denied ? last_try_ - *denied_since_ >= kNodeGrace : at_start && !no_module;
            if (first && for_good)
                throw;
            say("cannot count (archpmu_up is 0, trying again): " + std::string(e.what()));
            return;
        }
        denied_since_.reset();
        try {
            backend_ = dev->info().backend;
            cpus_ = dev->all_cpu_info();
            if (!options_.cpus.empty())
                cpus_.erase(std::remove_if(cpus_.begin(), cpus_.end(),
                                           [&](const CpuInfo& c) {
                                               return std::find(options_.cpus.begin(),
                                                                options_.cpus.end(),
                                                                c.cpu) == options_.cpus.end();
                                           }),
                            cpus_.end());
            SessionOptions so;
            so.cpus = options_.cpus;
            so.start_now = true;
            so.multiplex = true;
            so.device = options_.device;
            session_.emplace(options_.events, so);
            reported_.clear();  // a new session counts from 0
            sampling_.clear();  // the module may have been reloaded, its totals with it
            ++opened_;
            say("counting " + std::to_string(options_.events.size()) + " events on " +
                std::to_string(session_->cpu_count()) + " CPUs");
        } catch (const Error& e) {
            // Counters others hold, or a passing shortage, clear; until it has counted, a
            // refusal of anything else (the events, the CPUs, the privilege) ends the exporter.
            const int err = e.code().value();
            // ENODEV is a CPU offline or without a PMU (-C), but for an unload asked for
            // as it opened.
            if (first && err != EBUSY && err != ENOMEM && err != EAGAIN && err != EINTR &&
                !(err == ENODEV && module_unloading()))
                throw;
            say("cannot count (archpmu_up is 0, trying again): " + std::string(e.what()));
        }
    }

    // Each message once in a row, so a retry a second does not flood the journal.
    void say(const std::string& message)
    {
        if (message == last_said_)
            return;
        last_said_ = message;
        std::cerr << "archpmu exporter: " << message << std::endl;
    }

    const ExporterOptions& options_;
    std::mutex mutex_;
    std::optional<Session> session_;
    ReportedCounts reported_;
    std::vector<CpuInfo> cpus_;
    std::map<std::uint32_t, CpuSamplingTotals> sampling_;  // of cpus_, the last read of each
    Backend backend_ = Backend::unknown;
    std::uint64_t opened_ = 0;
    std::string refused_for_good_;
    std::optional<Clock::time_point> denied_since_;  // the device node refused since then
    Clock::time_point last_try_{};
    std::string last_said_;
};

class MetricsHandler : public CivetHandler {
public:
    explicit MetricsHandler(Source& source) : source_(source) {}

    bool handleGet(CivetServer* /*server*/, mg_connection* conn) override
    {
        const char* accept = CivetServer::getHeader(conn, "Accept");
        const bool om = prefers_openmetrics(accept ? accept : "");
        std::string body;
        try {
            const auto families = source_.scrape();
            body = om ? serialize_openmetrics(families) : serialize_text(families);
        } catch (const std::exception& e) {
            mg_send_http_error(conn, 500, "%s\n", e.what());
            return true;
        }
        const std::string type(om ? kOpenMetricsContentType : kTextContentType);
        mg_send_http_ok(conn, type.c_str(), static_cast<long long>(body.size()));
        mg_write(conn, body.data(), body.size());
        return true;
    }

private:
    Source& source_;
};

}  // namespace

int run_exporter(const ExporterOptions& options)
{
    // Blocked here, before civetweb starts its threads, so that they inherit the mask and
    // only sigtimedwait() below takes them.
    sigset_t signals;
    sigemptyset(&signals);
    for (const int s : {SIGTERM, SIGINT, SIGHUP})
        sigaddset(&signals, s);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);

    Source source(options);
    MetricsHandler handler(source);
    std::optional<CivetServer> server;
    try {
        server.emplace(std::vector<std::string>{
            "listening_ports", options.listen, "num_threads", std::to_string(options.threads),
            // A scraper that stalls loses its connection after 5 s; others wait in a
            // bounded queue.
            "request_timeout_ms", "5000", "connection_queue", "64"});
    } catch (const CivetException& e) {
        std::cerr << "archpmu exporter: cannot listen on " << options.listen << ": " << e.what()
                  << '\n';
        return 1;
    }
    // Listening first: a port in use is said before any counter is taken.
    try {
        source.open_first();
    } catch (const Error& e) {
        std::cerr << "archpmu exporter: " << e.what() << '\n';
        return kExporterConfigStatus;
    }
    server->addHandler("/metrics", handler);
    std::cerr << "archpmu exporter: serving http://" << options.listen << "/metrics" << std::endl;

    const timespec tick{1, 0};
    for (;;) {
        const int sig = sigtimedwait(&signals, nullptr, &tick);
        if (sig == SIGHUP) {
            std::cerr << "archpmu exporter: SIGHUP: opening the session afresh" << std::endl;
            source.reopen();
        } else if (sig == SIGTERM || sig == SIGINT) {
            break;
        } else {
            source.tick();
        }
        const std::string refused = source.refused_for_good();
        if (!refused.empty()) {
            std::cerr << "archpmu exporter: " << refused << '\n';
            server->close();
            return kExporterConfigStatus;
        }
    }
    // No scrape runs past here; the session closes with the source.
    server->close();
    return 0;
}

}  // namespace archpmu::tool
