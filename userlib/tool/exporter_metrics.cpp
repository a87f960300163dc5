// SPDX-License-Identifier: MIT
#include "exporter_metrics.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <utility>

#include "archpmu/error.hpp"
#include "stat_format.hpp"

namespace archpmu::tool {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

constexpr double kNsPerS = 1e9;

MetricFamily family(std::string name, std::string help, MetricType type)
{
    MetricFamily f;
    f.name = std::move(name);
    f.help = std::move(help);
    f.type = type;
    return f;
}

ClientMetric gauge(std::vector<ClientMetric::Label> labels, double value)
{
    ClientMetric m;
    m.label = std::move(labels);
    m.gauge.value = value;
    return m;
}

ClientMetric counter(std::vector<ClientMetric::Label> labels, double value)
{
    ClientMetric m;
    m.label = std::move(labels);
    m.counter.value = value;
    return m;
}

}  // namespace

std::string event_label(std::string_view event)
{
    const auto [pmu, name, mods] = split_event_name(event);
    (void)pmu;
    return std::string(name) + std::string(mods);
}

std::string event_family_name(std::string_view event)
{
    std::string out = "archpmu_";
    bool gap = false;
    for (const char c : event_label(event)) {
        const auto u = static_cast<unsigned char>(c);
        if (std::isalnum(u) == 0) {
            gap = true;
            continue;
        }
        if (gap && out.back() != '_')
            out += '_';
        gap = false;
        out += static_cast<char>(std::tolower(u));
    }
    return out + "_total";
}

void check_family_names(const std::vector<EventSpec>& events)
{
    // The exporter's own families, as counters (OpenMetrics drops _total from the
    // family's name, so archpmu_up_total would clash with the gauge archpmu_up too).
    const std::set<std::string> own = {"archpmu_up_total",
                                       "archpmu_sessions_opened_total",
                                       "archpmu_pmu_info_total",
                                       "archpmu_cpu_online_total",
                                       "archpmu_enabled_seconds_total",
                                       "archpmu_running_seconds_total",
                                       "archpmu_throttled_total",
                                       "archpmu_lost_samples_total"};
    // Each family's events so far, by core type (none: every CPU).
    std::map<std::string, std::vector<std::size_t>> seen;
    for (std::size_t e = 0; e < events.size(); ++e) {
        const std::string name = event_family_name(events[e].name);
        if (own.count(name) != 0)
            throw Error(EINVAL, "event '" + events[e].name + "' would be " + name +
                                    ", which the exporter serves itself");
        const auto type = event_core_type(events[e].flags);
        for (const std::size_t other : seen[name]) {
            // cpu_core/X/ and cpu_atom/X/ count on different CPUs: one family, no series twice.
            const auto other_type = event_core_type(events[other].flags);
            if (type && other_type && *type != *other_type)
                continue;
            throw Error(EINVAL, "events '" + events[other].name + "' and '" + events[e].name +
                                    "' would both be " + name +
                                    " on the same CPUs: give each once");
        }
        seen[name].push_back(e);
    }
}

std::uint64_t ReportedCounts::at_least_last(std::uint32_t cpu, std::uint32_t event,
                                            std::uint64_t scaled)
{
    std::uint64_t& last = last_[{cpu, event}];
    last = std::max(last, scaled);
    return last;
}

std::vector<MetricFamily> scrape_families(const ScrapeView& view, ReportedCounts& reported)
{
    std::vector<MetricFamily> out;
    auto up = family("archpmu_up", "1 while a session counts, 0 while archpmu cannot count here",
                     MetricType::Gauge);
    up.metric.push_back(gauge({}, view.up ? 1 : 0));
    out.push_back(std::move(up));
    auto opened = family("archpmu_sessions_opened_total",
                         "sessions this exporter opened; each restarts the event counters",
                         MetricType::Counter);
    opened.metric.push_back(counter({}, static_cast<double>(view.sessions_opened)));
    out.push_back(std::move(opened));
    if (!view.up)
        return out;

    std::map<std::uint32_t, std::string> core_type;
    for (const auto& c : view.cpus)
        core_type[c.cpu] = std::string(to_string(c.core_type));
    const auto type_of = [&](std::uint32_t cpu) {
        const auto it = core_type.find(cpu);
        return it == core_type.end() ? std::string("unknown") : it->second;
    };

    auto info = family("archpmu_pmu_info",
                       "the PMU of a group of CPUs: architectural perfmon version, counters, "
                       "their widths in bits, and archpmu's backend",
                       MetricType::Gauge);
    for (const auto& g : group_by_pmu(view.cpus))
        info.metric.push_back(
            gauge({{"backend", std::string(to_string(view.backend))},
                   {"core_type", std::string(to_string(g.pmu.core_type))},
                   {"cpus", format_cpu_list(g.cpus)},
                   {"fixed_counters", std::to_string(g.pmu.fixed_counters().size())},
                   {"fixed_width", std::to_string(g.pmu.fixed_width)},
                   {"gp_counters", std::to_string(g.pmu.gp_counters)},
                   {"gp_width", std::to_string(g.pmu.gp_width)},
                   {"version", std::to_string(g.pmu.version)}},
                  1));
    out.push_back(std::move(info));

    auto online = family("archpmu_cpu_online",
                         "1 while the CPU is online; an offline CPU's counts stay as they were",
                         MetricType::Gauge);
    std::set<std::uint32_t> cpus_seen;
    for (const auto& v : view.snapshot.values)
        if (cpus_seen.insert(v.cpu).second)
            online.metric.push_back(
                gauge({{"core_type", type_of(v.cpu)}, {"cpu", std::to_string(v.cpu)}},
                      v.offline ? 0 : 1));
    out.push_back(std::move(online));

    // Families in the order of their first event; cpu_core/X/ and cpu_atom/X/ share one.
    std::map<std::string, std::size_t> index;
    auto enabled =
        family("archpmu_enabled_seconds_total",
               "time the event was enabled on the CPU (perf's time_enabled)", MetricType::Counter);
    auto running = family("archpmu_running_seconds_total",
                          "time the event was on the CPU's counters (perf's time_running); "
                          "less than enabled: it took turns (multiplexing)",
                          MetricType::Counter);
    for (const auto& v : view.snapshot.values) {
        if (v.event >= view.events.size() || v.absent)
            continue;
        const std::string& name = view.events[v.event].name;
        const std::string fam = event_family_name(name);
        auto [it, fresh] = index.emplace(fam, out.size());
        if (fresh)
            out.push_back(family(fam,
                                 "event " + event_label(name) +
                                     " on the CPU, scaled as perf scales a multiplexed count",
                                 MetricType::Counter));
        const std::vector<ClientMetric::Label> where = {{"core_type", type_of(v.cpu)},
                                                        {"cpu", std::to_string(v.cpu)}};
        std::vector<ClientMetric::Label> timed = where;
        timed.push_back({"event", event_label(name)});
        enabled.metric.push_back(counter(timed, static_cast<double>(v.time_enabled_ns) / kNsPerS));
        running.metric.push_back(counter(timed, static_cast<double>(v.time_running_ns) / kNsPerS));
        // Never on the PMU: perf's <not counted>, no sample.
        if (v.time_running_ns != 0)
            out[it->second].metric.push_back(counter(
                where, static_cast<double>(reported.at_least_last(v.cpu, v.event, v.scaled()))));
    }
    out.push_back(std::move(enabled));
    out.push_back(std::move(running));

    auto throttled = family("archpmu_throttled_total",
                            "times a sampling counter on the CPU was throttled (over "
                            "sample_max_rate or sample_cpu_percent), every archpmu session's "
                            "since the module loaded",
                            MetricType::Counter);
    auto lost = family("archpmu_lost_samples_total",
                       "samples dropped on the CPU because their session's ring was full, "
                       "every archpmu session's since the module loaded",
                       MetricType::Counter);
    for (const auto& t : view.sampling) {
        const std::vector<ClientMetric::Label> where = {{"core_type", type_of(t.cpu)},
                                                        {"cpu", std::to_string(t.cpu)}};
        throttled.metric.push_back(counter(where, static_cast<double>(t.throttled)));
        lost.metric.push_back(counter(where, static_cast<double>(t.lost)));
    }
    if (!view.sampling.empty()) {
        out.push_back(std::move(throttled));
        out.push_back(std::move(lost));
    }
    return out;
}

}  // namespace archpmu::tool
