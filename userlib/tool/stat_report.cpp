// SPDX-License-Identifier: MIT
#include "stat_report.hpp"

#include <algorithm>
#include <cmath>

#include "archpmu.h"

namespace archpmu {
std::uint64_t StatTotals::total(std::size_t event) const
{
    std::uint64_t sum = 0;
    for (std::uint64_t v : per_cpu.at(event))
        sum += v;
    return sum;
}

namespace {

double pct_of(std::uint64_t running, std::uint64_t enabled)
{
    return enabled == 0 ? 100.0
                        : 100.0 * static_cast<double>(running) / static_cast<double>(enabled);
}

std::uint64_t sum_of(const std::vector<std::uint64_t>& xs)
{
    std::uint64_t sum = 0;
    for (std::uint64_t x : xs)
        sum += x;
    return sum;
}

}  // namespace

double StatTotals::running_pct(std::size_t event) const
{
    if (event >= enabled_ns.size())
        return 100.0;
    return pct_of(sum_of(running_ns[event]), sum_of(enabled_ns[event]));
}

double StatTotals::running_pct(std::size_t event, std::size_t cpu) const
{
    if (event >= enabled_ns.size())
        return 100.0;
    return pct_of(running_ns[event].at(cpu), enabled_ns[event].at(cpu));
}

StatTotals stat_totals(const Session& session, const Snapshot* from, const Snapshot& to,
                       std::uint64_t elapsed_ns)
{
    return stat_totals_of(session.events(), session.counters(), from, to, elapsed_ns);
}

StatTotals stat_totals_of(const std::vector<EventSpec>& events,
                          const std::vector<std::uint32_t>& counters, const Snapshot* from,
                          const Snapshot& to, std::uint64_t elapsed_ns)
{
    StatTotals t;
    t.events = events;
    t.counters = counters;
    t.elapsed_ns = elapsed_ns;
    const std::size_t n_events = t.events.size();
    const std::size_t n_cpus = n_events ? to.values.size() / n_events : 0;
    t.per_cpu.assign(n_events, std::vector<std::uint64_t>(n_cpus, 0));
    t.enabled_ns = t.per_cpu;
    t.running_ns = t.per_cpu;
    t.offline.assign(n_cpus, false);
    t.multiplexed.assign(n_events, false);
    t.crowded_out.assign(n_events, {});
    t.absent.assign(n_events, std::vector<bool>(n_cpus, false));
    for (std::size_t c = 0; c < n_cpus; ++c) {
        t.cpus.push_back(to.values[c * n_events].cpu);
        for (std::size_t e = 0; e < n_events; ++e) {
            const auto& v = to.values[c * n_events + e];
            CountValue delta = v;
            if (from) {
                const auto& b = from->values.at(c * n_events + e);
                delta.value -= b.value;
                delta.time_enabled_ns -= b.time_enabled_ns;
                delta.time_running_ns -= b.time_running_ns;
            }
            // Only an event that took turns is scaled; one that counted
            // less because its CPU was offline is shown as it is. Turns, a
            // crowded-out or an absent event: its share of the time shows.
            const bool own_time = v.multiplexed || v.crowded_out || v.absent;
            t.per_cpu[e][c] = v.multiplexed ? delta.scaled() : delta.value;
            t.enabled_ns[e][c] = own_time ? delta.time_enabled_ns : delta.time_running_ns;
            t.running_ns[e][c] = delta.time_running_ns;
            t.offline[c] = t.offline[c] || v.offline;
            t.multiplexed[e] = t.multiplexed[e] || v.multiplexed;
            if (v.crowded_out)
                t.crowded_out[e].push_back(v.cpu);
            t.absent[e][c] = v.absent;
            // The open names the first CPU's counter: an event for another core type
            // has none there, so a CPU where it counts names it.
            if (t.counters.at(e) == ARCHPMU_NO_COUNTER && !v.absent && !v.multiplexed)
                t.counters[e] = v.counter;
        }
    }
    return t;
}

namespace {

// perf's stddev_stats(): the standard deviation of the mean of `xs`.
double stddev_of_mean(const std::vector<double>& xs, double mean)
{
    if (xs.size() < 2)
        return 0;
    double sq = 0;
    for (const double x : xs)
        sq += (x - mean) * (x - mean);
    const auto n = static_cast<double>(xs.size());
    return std::sqrt(sq / (n - 1) / n);
}

double percent_of(double part, double whole)
{
    return whole > 0 ? 100.0 * part / whole : 0;
}

}  // namespace

double StatTotals::noise_pct_over(std::size_t event, const std::vector<std::size_t>& cpus) const
{
    if (event >= run_counts.size())
        return noise_pct.at(event);
    std::vector<double> xs(runs, 0);
    for (const std::size_t c : cpus) {
        const auto& counts = run_counts[event].at(c);
        for (std::size_t i = 0; i < counts.size() && i < xs.size(); ++i)
            xs[i] += counts[i];
    }
    double sum = 0;
    for (const double x : xs)
        sum += x;
    const double mean = xs.empty() ? 0 : sum / static_cast<double>(xs.size());
    return percent_of(stddev_of_mean(xs, mean), mean);
}

StatTotals stat_mean(const std::vector<StatTotals>& runs)
{
    StatTotals m = runs.at(0);
    const auto n = static_cast<double>(runs.size());
    m.runs = static_cast<unsigned>(runs.size());
    // Every CPU of any run: a task session takes the CPUs online at its open.
    m.cpus.clear();
    for (const auto& r : runs)
        m.cpus.insert(m.cpus.end(), r.cpus.begin(), r.cpus.end());
    std::sort(m.cpus.begin(), m.cpus.end());
    m.cpus.erase(std::unique(m.cpus.begin(), m.cpus.end()), m.cpus.end());
    const auto slot = [&](std::uint32_t cpu) {
        return static_cast<std::size_t>(std::lower_bound(m.cpus.begin(), m.cpus.end(), cpu) -
                                        m.cpus.begin());
    };
    m.offline.assign(m.cpus.size(), false);
    // A CPU's core type, and so what it lacks, is the same in every run that had it.
    if (!m.absent.empty())
        m.absent.assign(m.events.size(), std::vector<bool>(m.cpus.size(), false));
    m.per_cpu.assign(m.events.size(), std::vector<std::uint64_t>(m.cpus.size(), 0));
    // Runs without times (none recorded) make a mean without times.
    m.enabled_ns = runs[0].enabled_ns.empty() ? decltype(m.per_cpu){} : m.per_cpu;
    m.running_ns = m.enabled_ns;
    m.run_counts.assign(m.events.size(), std::vector<std::vector<double>>(
                                             m.cpus.size(), std::vector<double>(runs.size(), 0)));
    std::vector<double> xs(runs.size());
    for (std::size_t e = 0; e < m.events.size(); ++e) {
        std::vector<double> mean(m.cpus.size(), 0);
        double sum = 0;
        for (std::size_t i = 0; i < runs.size(); ++i) {
            const auto& r = runs[i];
            for (std::size_t c = 0; c < r.cpus.size(); ++c) {
                if (e < r.enabled_ns.size() && e < m.enabled_ns.size()) {
                    m.enabled_ns[e][slot(r.cpus[c])] += r.enabled_ns[e].at(c);
                    m.running_ns[e][slot(r.cpus[c])] += r.running_ns[e].at(c);
                }
                mean[slot(r.cpus[c])] += static_cast<double>(r.per_cpu.at(e).at(c)) / n;
                m.run_counts[e][slot(r.cpus[c])][i] = static_cast<double>(r.per_cpu.at(e).at(c));
                m.offline[slot(r.cpus[c])] = m.offline[slot(r.cpus[c])] || r.offline.at(c);
                if (!m.absent.empty() && e < r.absent.size() && r.absent[e].at(c))
                    m.absent[e][slot(r.cpus[c])] = true;
            }
            sum += xs[i] = static_cast<double>(r.total(e));
        }
        // Each CPU's mean rounded down, and the rest handed out by the largest
        // remainders: the parts add up to the mean of the totals.
        auto rest = static_cast<std::int64_t>(std::llround(sum / n));
        std::vector<std::size_t> order(m.cpus.size());
        for (std::size_t c = 0; c < m.cpus.size(); ++c) {
            m.per_cpu[e][c] = static_cast<std::uint64_t>(std::floor(mean[c]));
            rest -= static_cast<std::int64_t>(m.per_cpu[e][c]);
            order[c] = c;
        }
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            return mean[a] - std::floor(mean[a]) > mean[b] - std::floor(mean[b]);
        });
        for (std::size_t k = 0; k < order.size() && rest > 0; ++k, --rest)
            ++m.per_cpu[e][order[k]];
        m.noise_pct.push_back(percent_of(stddev_of_mean(xs, sum / n), sum / n));
    }
    double sum = 0;
    for (std::size_t i = 0; i < runs.size(); ++i)
        sum += xs[i] = static_cast<double>(runs[i].elapsed_ns);
    m.elapsed_ns = static_cast<std::uint64_t>(std::llround(sum / n));
    m.elapsed_noise_ns = stddev_of_mean(xs, sum / n);
    return m;
}

}  // namespace archpmu
