// SPDX-License-Identifier: MIT
#include "archpmu/stat_report.hpp"

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

StatTotals stat_totals(const Session& session, const Snapshot* from, const Snapshot& to,
                       std::uint64_t elapsed_ns)
{
    StatTotals t;
    t.events = session.events();
    t.counters = session.counters();
    t.elapsed_ns = elapsed_ns;
    const std::size_t n_events = t.events.size();
    const std::size_t n_cpus = n_events ? to.values.size() / n_events : 0;
    t.per_cpu.assign(n_events, std::vector<std::uint64_t>(n_cpus, 0));
    t.offline.assign(n_cpus, false);
    for (std::size_t c = 0; c < n_cpus; ++c) {
        t.cpus.push_back(to.values[c * n_events].cpu);
        for (std::size_t e = 0; e < n_events; ++e) {
            const auto& v = to.values[c * n_events + e];
            const std::uint64_t before = from ? from->values.at(c * n_events + e).value : 0;
            t.per_cpu[e][c] = v.value - before;
            t.offline[c] = t.offline[c] || v.offline;
        }
    }
    return t;
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
            out << f.target << ":\n\n";
        else if (f.target.empty())
            out << "CPUs " << format_cpu_list(t.cpus) << ":\n\n";
        else
            out << f.target << " (CPUs " << format_cpu_list(t.cpus) << "):\n\n";
    }
    for (std::size_t e = 0; e < t.events.size(); ++e) {
        const std::string counter = counter_name(t.counters.at(e));
        if (f.per_cpu) {
            for (std::size_t c = 0; c < t.cpus.size(); ++c)
                out << prefix << std::left << std::setw(14) << cpu_label(t.cpus[c], t.offline[c])
                    << std::right << std::setw(20) << thousands(t.per_cpu[e][c]) << "      "
                    << std::left << std::setw(24) << t.events[e].name << counter << '\n';
        } else {
            const std::string m = metric(t, e);
            out << prefix << std::right << std::setw(20) << thousands(t.total(e)) << "      "
                << std::left << std::setw(24) << t.events[e].name;
            if (m.empty())
                out << counter << '\n';
            else
                out << std::setw(8) << counter << "  " << m << '\n';
        }
    }
    if (f.interval_s < 0) {
        out << "\n"
            << std::right << std::setw(20)
            << format("%.9f", static_cast<double>(t.elapsed_ns) / 1e9)
            << " seconds time elapsed\n\n";
    }
    return out.str();
}

std::string stat_csv(const StatTotals& t, const StatFormat& f)
{
    std::ostringstream out;
    const std::string& s = f.separator;
    const std::string prefix = f.interval_s < 0 ? std::string() : format("%.9f", f.interval_s) + s;
    for (std::size_t e = 0; e < t.events.size(); ++e) {
        const std::string counter = counter_name(t.counters.at(e));
        if (f.per_cpu) {
            for (std::size_t c = 0; c < t.cpus.size(); ++c)
                out << prefix << "CPU" << t.cpus[c] << s << t.per_cpu[e][c] << s << t.events[e].name
                    << s << counter << '\n';
        } else {
            out << prefix << t.total(e) << s << t.events[e].name << s << counter << '\n';
        }
    }
    return out.str();
}

std::string stat_json(const StatTotals& t, int indent)
{
    nlohmann::ordered_json doc;
    doc["elapsed_ns"] = t.elapsed_ns;
    doc["cpus"] = t.cpus;
    doc["events"] = nlohmann::ordered_json::array();
    for (std::size_t e = 0; e < t.events.size(); ++e) {
        nlohmann::ordered_json j;
        j["name"] = t.events[e].name;
        j["config"] = hex(t.events[e].config);
        j["counter"] = counter_name(t.counters.at(e));
        j["value"] = t.total(e);
        nlohmann::ordered_json per_cpu = nlohmann::ordered_json::object();
        for (std::size_t c = 0; c < t.cpus.size(); ++c)
            per_cpu[std::to_string(t.cpus[c])] = t.per_cpu[e][c];
        j["per_cpu"] = std::move(per_cpu);
        doc["events"].push_back(std::move(j));
    }
    return doc.dump(indent) + "\n";
}

}  // namespace archpmu
