// SPDX-License-Identifier: MIT
#include "archpmu/stat_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "archpmu/pmu.hpp"

namespace archpmu {
namespace {

// printf-style formatting into a string.
template <typename... Args>
std::string format(const char* fmt, Args... args)
{
    const int n = std::snprintf(nullptr, 0, fmt, args...);
    if (n <= 0)
        return {};
    std::string out(static_cast<std::size_t>(n) + 1, '\0');
    if (std::snprintf(out.data(), out.size(), fmt, args...) != n)
        return {};
    out.resize(static_cast<std::size_t>(n));
    return out;
}

std::string hex(std::uint64_t v)
{
    return format("0x%llx", static_cast<unsigned long long>(v));
}

int find_event(const StatTotals& t, std::uint32_t code)
{
    for (std::size_t e = 0; e < t.events.size(); ++e)
        if ((t.events[e].config & 0xffff) == code)
            return static_cast<int>(e);
    return -1;
}

// perf's shadow metrics: IPC beside instructions, miss ratios beside misses.
std::string metric(const StatTotals& t, std::size_t e)
{
    const auto total_of = [&](std::uint32_t code) {
        const int of = find_event(t, code);
        return of < 0 ? 0.0 : static_cast<double>(t.total(static_cast<std::size_t>(of)));
    };
    const auto v = static_cast<double>(t.total(e));
    switch (t.events[e].config & 0xffff) {
        case 0x00c0:
            if (total_of(0x003c) > 0)
                return format("#  %5.2f insn per cycle", v / total_of(0x003c));
            break;
        case 0x00c5:
            if (total_of(0x00c4) > 0)
                return format("#  %5.2f%% of all branches", 100.0 * v / total_of(0x00c4));
            break;
        case 0x412e:
            if (total_of(0x4f2e) > 0)
                return format("#  %5.2f%% of all cache refs", 100.0 * v / total_of(0x4f2e));
            break;
        default:
            break;
    }
    return {};
}

// The counter column: "mux" for an event that takes turns on the counters.
std::string counter_label(const StatTotals& t, std::size_t e)
{
    if (e < t.multiplexed.size() && t.multiplexed[e])
        return "mux";
    return counter_name(t.counters.at(e));
}

std::string cpu_label(std::uint32_t cpu, bool offline)
{
    return "CPU" + std::to_string(cpu) + (offline ? "(offline)" : "");
}

std::string interval_prefix(const StatFormat& f)
{
    if (f.interval_s < 0)
        return {};
    return format("%14.9f  ", f.interval_s);
}

}  // namespace

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
    m.per_cpu.assign(m.events.size(), std::vector<std::uint64_t>(m.cpus.size(), 0));
    m.enabled_ns = m.per_cpu;
    m.running_ns = m.per_cpu;
    std::vector<double> xs(runs.size());
    for (std::size_t e = 0; e < m.events.size(); ++e) {
        std::vector<double> mean(m.cpus.size(), 0);
        double sum = 0;
        for (std::size_t i = 0; i < runs.size(); ++i) {
            const auto& r = runs[i];
            for (std::size_t c = 0; c < r.cpus.size(); ++c) {
                if (e < r.enabled_ns.size()) {
                    m.enabled_ns[e][slot(r.cpus[c])] += r.enabled_ns[e].at(c);
                    m.running_ns[e][slot(r.cpus[c])] += r.running_ns[e].at(c);
                }
                mean[slot(r.cpus[c])] += static_cast<double>(r.per_cpu.at(e).at(c)) / n;
                m.offline[slot(r.cpus[c])] = m.offline[slot(r.cpus[c])] || r.offline.at(c);
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

std::string thousands(std::uint64_t v)
{
    std::string out = std::to_string(v);
    for (std::size_t i = out.size(); i > 3; i -= 3)
        out.insert(i - 3, ",");
    return out;
}

std::string stat_human(const StatTotals& t, const StatFormat& f)
{
    std::ostringstream out;
    const std::string prefix = interval_prefix(f);
    if (f.interval_s < 0) {
        out << "\n Performance counter stats for ";
        if (f.task)
            out << f.target;
        else if (f.target.empty())
            out << "CPUs " << format_cpu_list(t.cpus);
        else
            out << f.target << " (CPUs " << format_cpu_list(t.cpus) << ")";
        if (t.runs > 1)
            out << " (" << t.runs << " runs)";
        out << ":\n\n";
    }
    const auto noise = [&](std::size_t e) {
        return t.runs > 1 ? format("  ( +-%6.2f%% )", t.noise_pct.at(e)) : std::string();
    };
    // perf's multiplexing note, "(NN.NN%)" of the time enabled, and "<not counted>".
    const auto running = [](double pct) {
        return pct < 100.0 ? format("  (%.2f%%)", pct) : std::string();
    };
    const auto count = [](std::uint64_t v, double pct) {
        return pct == 0.0 ? std::string("<not counted>") : thousands(v);
    };
    // perf's <not supported>: the CPU's core type lacks the event.
    const auto per_cpu_count = [&](std::size_t e, std::size_t c) {
        if (e < t.absent.size() && t.absent[e].at(c))
            return std::string("<not supported>");
        return count(t.per_cpu[e][c], t.running_pct(e, c));
    };
    for (std::size_t e = 0; e < t.events.size(); ++e) {
        const std::string counter = counter_label(t, e);
        if (f.per_cpu) {
            for (std::size_t c = 0; c < t.cpus.size(); ++c)
                out << prefix << std::left << std::setw(14) << cpu_label(t.cpus[c], t.offline[c])
                    << std::right << std::setw(20) << per_cpu_count(e, c) << "      " << std::left
                    << std::setw(24) << t.events[e].name << counter << running(t.running_pct(e, c))
                    << '\n';
        } else {
            const std::string m = metric(t, e);
            const double pct = t.running_pct(e);
            out << prefix << std::right << std::setw(20) << count(t.total(e), pct) << "      "
                << std::left << std::setw(24) << t.events[e].name;
            if (m.empty())
                out << (t.runs > 1 ? std::setw(8) : std::setw(0)) << counter
                    << (t.runs > 1 ? std::string(32, ' ') : std::string()) << noise(e)
                    << running(pct) << '\n';
            else
                out << std::setw(8) << counter << "  "
                    << (t.runs > 1 ? std::setw(30) : std::setw(0)) << m << noise(e) << running(pct)
                    << '\n';
        }
    }
    if (f.interval_s < 0) {
        out << "\n"
            << std::right << std::setw(20)
            << format("%.9f", static_cast<double>(t.elapsed_ns) / 1e9);
        if (t.runs > 1)
            out << format(" +- %.9f seconds time elapsed  ( +-%6.2f%% )\n\n",
                          t.elapsed_noise_ns / 1e9,
                          percent_of(t.elapsed_noise_ns, static_cast<double>(t.elapsed_ns)));
        else
            out << " seconds time elapsed\n\n";
    }
    return out.str();
}

std::string stat_csv(const StatTotals& t, const StatFormat& f)
{
    std::ostringstream out;
    const std::string& s = f.separator;
    const std::string prefix = f.interval_s < 0 ? std::string() : format("%.9f", f.interval_s) + s;
    for (std::size_t e = 0; e < t.events.size(); ++e) {
        const std::string counter = counter_label(t, e);
        if (f.per_cpu) {
            for (std::size_t c = 0; c < t.cpus.size(); ++c)
                out << prefix << "CPU" << t.cpus[c] << s << t.per_cpu[e][c] << s << t.events[e].name
                    << s << counter << '\n';
        } else {
            out << prefix << t.total(e) << s << t.events[e].name << s << counter;
            if (t.runs > 1)
                out << s << format("%.2f%%", t.noise_pct.at(e));
            out << '\n';
        }
    }
    return out.str();
}

std::string stat_json(const StatTotals& t, int indent)
{
    nlohmann::ordered_json doc;
    doc["elapsed_ns"] = t.elapsed_ns;
    if (t.runs > 1) {
        doc["runs"] = t.runs;
        doc["elapsed_stddev_ns"] = std::llround(t.elapsed_noise_ns);
    }
    doc["cpus"] = t.cpus;
    doc["events"] = nlohmann::ordered_json::array();
    for (std::size_t e = 0; e < t.events.size(); ++e) {
        nlohmann::ordered_json j;
        j["name"] = t.events[e].name;
        j["config"] = hex(t.events[e].config);
        j["counter"] = counter_label(t, e);
        j["value"] = t.total(e);
        nlohmann::ordered_json per_cpu = nlohmann::ordered_json::object();
        for (std::size_t c = 0; c < t.cpus.size(); ++c)
            per_cpu[std::to_string(t.cpus[c])] = t.per_cpu[e][c];
        j["per_cpu"] = std::move(per_cpu);
        if (e < t.enabled_ns.size()) {
            j["time_enabled_ns"] = sum_of(t.enabled_ns[e]);
            j["time_running_ns"] = sum_of(t.running_ns[e]);
        }
        j["running_pct"] = t.running_pct(e);
        if (t.runs > 1)
            j["stddev_pct"] = t.noise_pct.at(e);
        doc["events"].push_back(std::move(j));
    }
    return doc.dump(indent) + "\n";
}

}  // namespace archpmu
