// SPDX-License-Identifier: MIT
#include "stat_format.hpp"

#include "archpmu/cache_events.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <tuple>

#include <nlohmann/json.hpp>

#include "archpmu/pmu.hpp"
#include "stat_topdown.hpp"

namespace archpmu {
namespace {

std::uint64_t sum_of(const std::vector<std::uint64_t>& xs)
{
    std::uint64_t sum = 0;
    for (const std::uint64_t x : xs)
        sum += x;
    return sum;
}

using Scope = StatScope;

// -r's spread of a line, as perf's of its event: a core type's own; 0 on -A's
// per-CPU lines, where perf keeps none (perf_stat_process_counter: AGGR_GLOBAL only).
double spread(const StatTotals& t, std::size_t e, const StatScope& c)
{
    return c.one_cpu ? 0 : t.noise_pct_over(e, c.cpus);
}

// perf's human form of a spread (print_noise_pct): nothing when it is 0.
std::string noise_text(double pct)
{
    return pct != 0 ? fmt::format("  ( +-{:6.2f}% )", pct) : std::string();
}

// Every CPU of the totals, as one scope.
Scope whole(const StatTotals& t)
{
    Scope all;
    for (std::size_t c = 0; c < t.cpus.size(); ++c)
        all.cpus.push_back(c);
    return all;
}

std::uint64_t sum_over(const std::vector<std::vector<std::uint64_t>>& xs, std::size_t e,
                       const Scope& sc)
{
    if (e >= xs.size())
        return 0;
    std::uint64_t sum = 0;
    for (const std::size_t c : sc.cpus)
        sum += xs[e].at(c);
    return sum;
}

std::uint64_t value_of(const StatTotals& t, std::size_t e, const Scope& sc)
{
    return sum_over(t.per_cpu, e, sc);
}

// perf's "(NN.NN%)": the time on the PMU in percent of the time enabled; 100 when
// never enabled (StatTotals::running_pct over the scope's CPUs).
double pct_of(const StatTotals& t, std::size_t e, const Scope& sc)
{
    if (e >= t.enabled_ns.size())
        return 100.0;
    const std::uint64_t ena = sum_over(t.enabled_ns, e, sc);
    return ena == 0 ? 100.0
                    : 100.0 * static_cast<double>(sum_over(t.running_ns, e, sc)) /
                          static_cast<double>(ena);
}

// perf's <not supported>: the core type lacks the event (on every CPU of the scope).
bool absent(const StatTotals& t, std::size_t e, const Scope& sc)
{
    if (e >= t.absent.size() || t.absent[e].empty() || sc.cpus.empty())
        return false;
    return std::all_of(sc.cpus.begin(), sc.cpus.end(),
                       [&](std::size_t c) { return static_cast<bool>(t.absent[e].at(c)); });
}

// perf's <not counted>: the event never was on the PMU in the scope (perf: run
// or ena 0), as for the core type a command never ran on, or a task that slept
// through an interval. Totals made without times (none recorded) always counted.
bool never_on_pmu(const StatTotals& t, std::size_t e, const Scope& sc)
{
    return e < t.running_ns.size() && sum_over(t.running_ns, e, sc) == 0;
}

// The count as perf shows it: the number, <not supported> or <not counted>.
std::string shown_count(const StatTotals& t, std::size_t e, const Scope& sc, bool grouped)
{
    if (absent(t, e, sc))
        return "<not supported>";
    if (never_on_pmu(t, e, sc))
        return "<not counted>";
    const std::uint64_t v = value_of(t, e, sc);
    return grouped ? thousands(v) : std::to_string(v);
}

bool counted(const StatTotals& t, std::size_t e, const Scope& sc)
{
    return !absent(t, e, sc) && !never_on_pmu(t, e, sc);
}

}  // namespace

std::tuple<std::string_view, std::string_view, std::string_view> split_event_name(
    std::string_view full)
{
    // In any case, as the event parser takes it.
    const auto same = [](std::string_view a, std::string_view b) {
        return a.size() == b.size() &&
               std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
                   return std::tolower(static_cast<unsigned char>(x)) == y;
               });
    };
    for (const std::string_view pmu : {"cpu_core/", "cpu_atom/"}) {
        const std::size_t close = full.find('/', pmu.size());
        if (same(full.substr(0, pmu.size()), pmu) && close != std::string_view::npos)
            return {full.substr(0, pmu.size() - 1), full.substr(pmu.size(), close - pmu.size()),
                    full.substr(close + 1)};
    }
    const std::size_t colon = full.find(':');
    return {std::string_view(), full.substr(0, colon),
            colon == std::string_view::npos ? std::string_view() : full.substr(colon)};
}

namespace {

// An event for one core type (perf's cpu_core/.../) has no line for the other's CPUs.
bool other_types_line(const StatTotals& t, const StatFormat& f, std::size_t e, const Scope& sc)
{
    const auto type = event_core_type(t.events[e].flags);
    if (!type)
        return false;
    std::string_view line_type = sc.core_type;
    if (sc.one_cpu) {
        const auto it = f.core_types.find(t.cpus[sc.cpus[0]]);
        line_type = it == f.core_types.end() ? std::string_view() : it->second;
    }
    return !line_type.empty() && line_type != to_string(*type);
}

// The event's name on a line: for one core type's sum perf's cpu_core/NAME/MODS.
std::string event_name(const StatTotals& t, std::size_t e, const Scope& sc)
{
    return name_on_core_type(t.events[e].name, sc.core_type);
}

// The event of `code` that event `of` takes a ratio against: one of its core type, or of
// none.
int find_event(const StatTotals& t, std::uint32_t code, std::size_t of)
{
    const auto type = event_core_type(t.events[of].flags);
    for (std::size_t e = 0; e < t.events.size(); ++e) {
        const auto here = event_core_type(t.events[e].flags);
        if ((t.events[e].config & 0xffff) == code && (!here || here == type))
            return static_cast<int>(e);
    }
    return -1;
}

// perf's shadow metric of an event: IPC beside instructions, miss ratios beside
// misses. unit empty: the event has none; value empty: its base was not counted.
struct Metric {
    std::string unit;
    std::string value;  // as perf's CSV prints it: "1.23"
    double ratio = 0;
    std::string human;  // "#  1.23 insn per cycle"
};

Metric metric_of(const StatTotals& t, std::size_t e, const Scope& c)
{
    // As perf 6.1's stat-shadow.c: IPC needs cycles that counted; the miss ratios
    // need their base event in the list (a zero base gives 0).
    struct Shadow {
        std::uint32_t code;
        std::uint32_t base;
        const char* unit;
        bool percent;
        bool base_nonzero;
        int decimals;
    };
    static constexpr Shadow kShadows[] = {
        {0x00c0, 0x003c, "insn per cycle", false, true, 2},
        {0x00c5, 0x00c4, "of all branches", true, false, 2},
        {0x412e, 0x4f2e, "of all cache refs", true, false, 3},
    };
    // perf's generic cache events (-d) by name: their encodings vary by CPU model.
    struct NamedShadow {
        std::string_view name;
        std::string_view base;
        const char* unit;
    };
    static constexpr NamedShadow kNamedShadows[] = {
        {"L1-dcache-load-misses", "L1-dcache-loads", "of all L1-dcache accesses"},
        {"LLC-load-misses", "LLC-loads", "of all LL-cache accesses"},
        {"L1-icache-load-misses", "L1-icache-loads", "of all L1-icache accesses"},
        {"dTLB-load-misses", "dTLB-loads", "of all dTLB cache accesses"},
        {"iTLB-load-misses", "iTLB-loads", "of all iTLB cache accesses"},
    };
    // Not a structured binding: C++17 lambdas cannot capture one.
    const auto parts = split_event_name(t.events[e].name);
    const std::string_view pmu = std::get<0>(parts);
    const std::string_view name = std::get<1>(parts);
    const std::string_view mods = std::get<2>(parts);
    Metric m;
    // perf's cache events in any case, as the event parser takes them.
    const std::string_view cache_name = cache_event_name(name);
    for (const auto& s : kNamedShadows) {
        if (cache_name != s.name)
            continue;
        m.unit = s.unit;
        // The loads of the same core type (by name or flags) and modifiers.
        const auto base = std::find_if(t.events.begin(), t.events.end(), [&](const EventSpec& ev) {
            const auto [ev_pmu, ev_name, ev_mods] = split_event_name(ev.name);
            return ev_pmu == pmu && cache_event_name(ev_name) == s.base && ev_mods == mods &&
                   event_core_type(ev.flags) == event_core_type(t.events[e].flags);
        });
        if (base == t.events.end())
            return m;
        const auto b = static_cast<std::size_t>(base - t.events.begin());
        if (!counted(t, b, c) || !counted(t, e, c))
            return m;
        const auto of = static_cast<double>(value_of(t, b, c));
        m.ratio = of > 0 ? static_cast<double>(value_of(t, e, c)) / of * 100.0 : 0.0;
        m.value = fmt::format("{:.2f}", m.ratio);
        m.human = fmt::format("#  {:5.2f}% {}", m.ratio, s.unit);
        return m;
    }
    // A detailed event's encoding may be another's (iTLB-loads is C0H on Goldmont): it
    // has only the ratios of its name, as perf matches them by event type.
    if (!cache_name.empty())
        return m;
    for (const auto& s : kShadows) {
        if ((t.events[e].config & 0xffff) != s.code)
            continue;
        m.unit = s.unit;
        const int base = find_event(t, s.base, e);
        if (base < 0)
            return m;
        const auto of = static_cast<double>(value_of(t, static_cast<std::size_t>(base), c));
        if (s.base_nonzero && !(of > 0))
            return m;
        const auto v = static_cast<double>(value_of(t, e, c));
        m.ratio = of > 0 ? v / of * (s.percent ? 100.0 : 1.0) : 0.0;
        m.value = fmt::format("{:.{}f}", m.ratio, s.decimals);
        m.human = fmt::format(s.percent ? "#  {:5.{}f}% {}" : "#  {:5.{}f} {}", m.ratio, s.decimals,
                              s.unit);
        return m;
    }
    return m;
}

// The counter column: "mux" for an event that takes turns on the counters.
std::string counter_label(const StatTotals& t, std::size_t e)
{
    if (e < t.multiplexed.size() && t.multiplexed[e])
        return "mux";
    return counter_name(t.counters.at(e));
}

// perf's pct-running in -x and -j: 100 * run / ena in whole numbers (u64 division).
std::string machine_pct(std::uint64_t run, std::uint64_t ena)
{
    const std::uint64_t pct = (run == ena || ena == 0) ? 100 : 100 * run / ena;
    return fmt::format("{}.00", pct);
}

}  // namespace

std::vector<StatScope> stat_scopes(const StatTotals& t, const StatFormat& f)
{
    std::vector<Scope> out;
    if (f.per_cpu) {
        for (std::size_t c = 0; c < t.cpus.size(); ++c)
            out.push_back({{c}, true, ""});
        return out;
    }
    for (const char* type : {"core", "atom"}) {
        Scope sc{{}, false, type};
        for (std::size_t c = 0; c < t.cpus.size(); ++c) {
            const auto it = f.core_types.find(t.cpus[c]);
            if (it != f.core_types.end() && it->second == type)
                sc.cpus.push_back(c);
        }
        if (!sc.cpus.empty())
            out.push_back(std::move(sc));
    }
    std::size_t split = 0;
    for (const auto& sc : out)
        split += sc.cpus.size();
    if (out.size() > 1 && split == t.cpus.size())
        return out;
    return {whole(t)};
}

std::string stat_interval_stamp(std::int64_t ns)
{
    return fmt::format("{:6}.{:09}", ns / 1000000000, ns % 1000000000);
}

std::string thousands(std::uint64_t v)
{
    return fmt::format("{}", fmt::group_digits(v));
}

std::string stat_human_header(const StatTotals& t, const StatFormat& f)
{
    std::string head = "\n Performance counter stats for ";
    if (f.task)
        head += f.target;
    else if (f.target.empty())
        head += "CPUs " + format_cpu_list(t.cpus);
    else
        head += fmt::format("{} (CPUs {})", f.target, format_cpu_list(t.cpus));
    if (t.runs > 1)
        head += fmt::format(" ({} runs)", t.runs);
    return head + ":\n\n";
}

std::string stat_footer(const StatTotals& t)
{
    const double elapsed = static_cast<double>(t.elapsed_ns) / 1e9;
    if (t.runs > 1) {
        const double sd = t.elapsed_noise_ns / 1e9;
        const double pct = t.elapsed_ns ? 100.0 * sd / elapsed : 0;
        // perf's: two digits past the spread's first significant one (get_precision
        // + 2); perf's get_precision(0) comes out 0 on x86-64, so two digits then.
        const int digits =
            2 + (sd > 1 || sd <= 0 ? 0 : static_cast<int>(std::ceil(-std::log10(sd))));
        return fmt::format("\n{:>20.{}f} +- {:.{}f} seconds time elapsed{}\n\n", elapsed, digits,
                           sd, digits, noise_text(pct));
    }
    std::string out = fmt::format("\n{:>20.9f}", elapsed);
    if (t.command_times) {
        out += fmt::format(
            " seconds time elapsed\n\n{:>20.9f} seconds user\n"
            "{:>20.9f} seconds sys\n\n\n",
            static_cast<double>(t.command_times->user_ns) / 1e9,
            static_cast<double>(t.command_times->sys_ns) / 1e9);
    } else {
        out += " seconds time elapsed\n\n";
    }
    return out;
}

std::string stat_human(const StatTotals& t, const StatFormat& f)
{
    fmt::memory_buffer out;
    auto it = std::back_inserter(out);
    const bool interval = f.interval_ns >= 0;
    const std::string prefix = interval ? stat_interval_stamp(f.interval_ns) + " " : std::string();
    if (interval && f.interval_header) {
        fmt::format_to(it, f.per_cpu
                               ? "#           time CPU                    counts unit events\n"
                               : "#           time             counts unit events\n");
    } else if (!interval) {
        fmt::format_to(it, "{}", stat_human_header(t, f));
    }
    // perf's multiplexing note: "(NN.NN%)" of the time enabled; none beside <...>.
    const auto running = [&](std::size_t e, const Scope& c) {
        const double pct = pct_of(t, e, c);
        return counted(t, e, c) && pct < 100.0 ? fmt::format("  ({:.2f}%)", pct) : std::string();
    };
    const auto noise = [&](std::size_t e, const Scope& c) {
        return t.runs > 1 && !absent(t, e, whole(t)) ? noise_text(spread(t, e, c)) : std::string();
    };
    for (std::size_t e = 0; e < t.events.size(); ++e) {
        const std::string counter = counter_label(t, e);
        for (const Scope& c : stat_scopes(t, f)) {
            if (other_types_line(t, f, e, c))
                continue;
            fmt::format_to(it, "{}", prefix);
            if (c.one_cpu)
                fmt::format_to(it, "{:<14}",
                               "CPU" + std::to_string(t.cpus[c.cpus[0]]) +
                                   (t.offline[c.cpus[0]] ? "(offline)" : ""));
            // A name as wide as the column still has a space before the counter.
            const std::string name = event_name(t, e, c);
            fmt::format_to(it, "{:>20}      {:<24}{}", shown_count(t, e, c, true), name,
                           name.size() >= 24 ? " " : "");
            const Metric m = counted(t, e, c) ? metric_of(t, e, c) : Metric{};
            if (c.one_cpu || m.human.empty())
                fmt::format_to(it, "{}{}{}{}\n",
                               t.runs > 1 ? fmt::format("{:<8}", counter) : counter,
                               t.runs > 1 && !c.one_cpu ? std::string(32, ' ') : std::string(),
                               noise(e, c), running(e, c));
            else
                fmt::format_to(it, "{:<8}  {}{}{}\n", counter,
                               t.runs > 1 ? fmt::format("{:<30}", m.human) : m.human, noise(e, c),
                               running(e, c));
        }
    }
    if (!interval)
        fmt::format_to(it, "{}", stat_footer(t));
    return fmt::to_string(out);
}

std::string stat_csv(const StatTotals& t, const StatFormat& f)
{
    fmt::memory_buffer out;
    auto it = std::back_inserter(out);
    const std::string& s = f.separator;
    for (std::size_t e = 0; e < t.events.size(); ++e) {
        for (const Scope& c : stat_scopes(t, f)) {
            if (other_types_line(t, f, e, c))
                continue;
            if (f.interval_ns >= 0)
                fmt::format_to(it, "{}{}", stat_interval_stamp(f.interval_ns), s);
            if (c.one_cpu)
                fmt::format_to(it, "CPU{}{}", t.cpus[c.cpus[0]], s);
            fmt::format_to(it, "{}{}{}{}", shown_count(t, e, c, false), s, s, event_name(t, e, c));
            if (t.runs > 1)
                fmt::format_to(it, "{}{:.2f}%", s, spread(t, e, c));
            const std::uint64_t run = sum_over(t.running_ns, e, c);
            const std::uint64_t ena = sum_over(t.enabled_ns, e, c);
            fmt::format_to(it, "{}{}{}{}", s, run, s, machine_pct(run, ena));
            const Metric m = counted(t, e, c) ? metric_of(t, e, c) : Metric{};
            fmt::format_to(it, "{}{}{}{}", s, m.value, s, m.value.empty() ? "" : m.unit);
            fmt::format_to(it, "{}{}\n", s, counter_label(t, e));
        }
    }
    return fmt::to_string(out);
}

std::string stat_json_lines(const StatTotals& t, const StatFormat& f)
{
    fmt::memory_buffer out;
    auto it = std::back_inserter(out);
    for (std::size_t e = 0; e < t.events.size(); ++e) {
        for (const Scope& c : stat_scopes(t, f)) {
            if (other_types_line(t, f, e, c))
                continue;
            if (f.interval_ns >= 0)
                fmt::format_to(it, "{{\"interval\" : {}.{:09}, ", f.interval_ns / 1000000000,
                               f.interval_ns % 1000000000);
            else
                fmt::format_to(it, "{{");
            if (c.one_cpu)
                fmt::format_to(it, R"("cpu" : "{}", )", t.cpus[c.cpus[0]]);
            const bool is_counted = counted(t, e, c);
            const std::string value =
                is_counted ? fmt::format("{:f}", static_cast<double>(value_of(t, e, c)))
                           : shown_count(t, e, c, false);
            fmt::format_to(it, R"("counter-value" : "{}", "unit" : "", "event" : {}, )", value,
                           nlohmann::json(event_name(t, e, c)).dump());
            if (t.runs > 1)
                fmt::format_to(it, "\"variance\" : {:.2f}, ", spread(t, e, c));
            const std::uint64_t run = sum_over(t.running_ns, e, c);
            const std::uint64_t ena = sum_over(t.enabled_ns, e, c);
            fmt::format_to(it, R"("event-runtime" : {}, "pcnt-running" : {}, )", run,
                           machine_pct(run, ena));
            // perf prints a missing metric's unit as printf prints a null string.
            const Metric m = is_counted ? metric_of(t, e, c) : Metric{"", "", 0, ""};
            const std::string unit = !is_counted ? "" : m.unit.empty() ? "(null)" : m.unit;
            fmt::format_to(it, R"("metric-value" : {:f}, "metric-unit" : "{}", )", m.ratio, unit);
            fmt::format_to(it, "\"counter\" : \"{}\"}}\n", counter_label(t, e));
        }
    }
    return fmt::to_string(out);
}

std::string stat_json(const StatTotals& t, const StatFormat& f)
{
    nlohmann::ordered_json doc;
    if (f.interval_ns >= 0)
        doc["interval"] = static_cast<double>(f.interval_ns) / 1e9;
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
        if (const auto type = event_core_type(t.events[e].flags))
            j["core_type"] = to_string(*type);
        // An event no CPU has (perf's <not supported> everywhere) has no value.
        const bool supported = !absent(t, e, whole(t));
        j["config"] =
            supported ? nlohmann::ordered_json(fmt::format("{:#x}", t.events[e].config)) : nullptr;
        j["counter"] = counter_label(t, e);
        j["value"] = supported ? nlohmann::ordered_json(t.total(e)) : nullptr;
        nlohmann::ordered_json per_cpu = nlohmann::ordered_json::object();
        for (std::size_t c = 0; c < t.cpus.size(); ++c)
            per_cpu[std::to_string(t.cpus[c])] =
                supported ? nlohmann::ordered_json(t.per_cpu[e][c]) : nullptr;
        j["per_cpu"] = std::move(per_cpu);
        if (e < t.enabled_ns.size()) {
            j["time_enabled_ns"] = sum_of(t.enabled_ns[e]);
            j["time_running_ns"] = sum_of(t.running_ns[e]);
        }
        j["running_pct"] = t.running_pct(e);
        const auto split = stat_scopes(t, f);
        if (!f.per_cpu && split.size() > 1) {
            nlohmann::ordered_json by_type;
            for (const auto& sc : split)
                by_type[sc.core_type] = absent(t, e, sc)
                                            ? nlohmann::ordered_json(nullptr)
                                            : nlohmann::ordered_json(value_of(t, e, sc));
            j["per_core_type"] = std::move(by_type);
        }
        if (t.runs > 1)
            j["stddev_pct"] = t.noise_pct.at(e);
        doc["events"].push_back(std::move(j));
    }
    return doc.dump(f.interval_ns >= 0 ? -1 : 2) + "\n";
}

std::string stat_report(const StatTotals& t, const StatFormat& f)
{
    if (f.topdown_level)
        return stat_topdown(t, f);
    switch (f.style) {
        case StatFormat::Style::csv:
            return stat_csv(t, f);
        case StatFormat::Style::json_lines:
            return stat_json_lines(t, f);
        case StatFormat::Style::json:
            return stat_json(t, f);
        case StatFormat::Style::human:
            break;
    }
    return stat_human(t, f);
}

std::string name_on_core_type(const std::string& name, std::string_view core_type)
{
    if (core_type.empty() || !std::get<0>(split_event_name(name)).empty())
        return name;
    std::string base = name;
    std::string mods;
    const std::size_t close = name.rfind('/');
    const std::size_t cut = name.find_first_of(":@", close == std::string::npos ? 0 : close);
    if (cut != std::string::npos) {
        base = name.substr(0, cut);
        mods = name.substr(name[cut] == ':' ? cut + 1 : cut);
    }
    if (base.size() > 5 && base.compare(0, 4, "cpu/") == 0 && base.back() == '/')
        base = base.substr(4, base.size() - 5);
    return "cpu_" + std::string(core_type) + "/" + base + "/" + mods;
}

}  // namespace archpmu
