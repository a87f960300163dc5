// SPDX-License-Identifier: MIT
#include "archpmu/events.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <optional>
#include <system_error>

#include "archpmu.h"
#include "archpmu/cache_events.hpp"
#include "archpmu/error.hpp"
#include "archpmu/pfm_events.hpp"

namespace archpmu {
namespace {

struct NamedEvent {
    std::string_view name;
    std::uint32_t code;  // event | umask << 8
};

constexpr std::uint32_t code_of(std::uint32_t event, std::uint32_t umask)
{
    return event | umask << ARCHPMU_EVTSEL_UMASK_SHIFT;
}

// The architectural events under the names the ABI header gives them.
constexpr std::array kArchEvents{
#define ARCHPMU_NAMED_EVENT(bit, name, event, umask) NamedEvent{(name), code_of((event), (umask))},
    ARCHPMU_ARCH_EVENT_TABLE(ARCHPMU_NAMED_EVENT)
#undef ARCHPMU_NAMED_EVENT
};
static_assert(kArchEvents.size() == ARCHPMU_NR_ARCH_EVENTS,
              "ARCHPMU_ARCH_EVENT_TABLE has one row per architectural event");

// The code of architectural event `bit` (ARCHPMU_EVENT_*).
constexpr std::uint32_t arch_code(unsigned bit)
{
    std::uint32_t code = ~0U;
#define ARCHPMU_CODE_IF(b, name, event, umask) \
    if ((b) == bit)                            \
        code = code_of((event), (umask));
    ARCHPMU_ARCH_EVENT_TABLE(ARCHPMU_CODE_IF)
#undef ARCHPMU_CODE_IF
    return code;
}

// The code of fixed counter j's own event.
constexpr std::uint32_t fixed_code(unsigned j)
{
    std::uint32_t code = ~0U;
#define ARCHPMU_CODE_IF(fixed, event, umask) \
    if ((fixed) == j)                        \
        code = code_of((event), (umask));
    ARCHPMU_FIXED_EVENT_TABLE(ARCHPMU_CODE_IF)
#undef ARCHPMU_CODE_IF
    return code;
}

struct Alias {
    std::uint32_t code;
    std::string_view name;
};

// perf's and Intel's other names, by code. They are looked up before the table's
// names: perf's ref-cycles is fixed counter 2's reference cycles at the TSC rate
// (00H/03H), while the table's display name ref-cycles is 3CH/01H, which perf
// calls bus-cycles.
constexpr std::array<Alias, 19> kAliases = {{
    {arch_code(ARCHPMU_EVENT_CYCLES), "cpu-cycles"},
    {arch_code(ARCHPMU_EVENT_CYCLES), "cpu_clk_unhalted.thread"},
    {arch_code(ARCHPMU_EVENT_CYCLES), "cpu_clk_unhalted.core"},
    {arch_code(ARCHPMU_EVENT_INSTRUCTIONS), "inst_retired.any"},
    {fixed_code(2), "ref-cycles"},
    {fixed_code(2), "cpu_clk_unhalted.ref_tsc"},
    {arch_code(ARCHPMU_EVENT_REF_CYCLES), "bus-cycles"},
    {arch_code(ARCHPMU_EVENT_REF_CYCLES), "cpu_clk_unhalted.ref_xclk"},
    {arch_code(ARCHPMU_EVENT_LLC_REFERENCES), "longest_lat_cache.reference"},
    {arch_code(ARCHPMU_EVENT_LLC_MISSES), "longest_lat_cache.miss"},
    {arch_code(ARCHPMU_EVENT_BRANCHES), "branch-instructions"},
    {arch_code(ARCHPMU_EVENT_BRANCHES), "br_inst_retired.all_branches"},
    {arch_code(ARCHPMU_EVENT_BRANCH_MISSES), "br_misp_retired.all_branches"},
    {arch_code(ARCHPMU_EVENT_TOPDOWN_SLOTS), "topdown-slots"},
    {arch_code(ARCHPMU_EVENT_TOPDOWN_SLOTS), "topdown.slots"},
    {arch_code(ARCHPMU_EVENT_TOPDOWN_BE_BOUND), "topdown.backend_bound_slots"},
    {arch_code(ARCHPMU_EVENT_TOPDOWN_BAD_SPEC), "topdown_bad_speculation.all"},
    {arch_code(ARCHPMU_EVENT_TOPDOWN_FE_BOUND), "topdown_fe_bound.all"},
    {arch_code(ARCHPMU_EVENT_TOPDOWN_RETIRING), "topdown_retiring.all"},
}};

// The code of a (lower-case) event name, or ~0.
constexpr std::uint32_t named_code(std::string_view name)
{
    for (const auto& a : kAliases)
        if (a.name == name)
            return a.code;
    for (const auto& e : kArchEvents)
        if (e.name == name)
            return e.code;
    return ~0U;
}

// Every alias names a code the tables have, and shadows no table name but ref-cycles.
constexpr bool aliases_consistent()
{
    for (const auto& a : kAliases) {
        if (a.code == ~0U)
            return false;
        for (const auto& e : kArchEvents)
            if (a.name == e.name && a.name != "ref-cycles")
                return false;
    }
    return true;
}
static_assert(aliases_consistent());
static_assert(named_code("ref-cycles") == 0x0300, "perf's ref-cycles: 00H/03H, fixed counter 2");
static_assert(named_code("bus-cycles") == 0x013c, "perf's bus-cycles: 3CH/01H");
static_assert(named_code("cycles") == 0x003c && named_code("instructions") == 0x00c0);

[[noreturn]] void bad(std::string_view whole, std::size_t at, std::size_t len,
                      const std::string& why)
{
    std::string msg = "bad event '" + std::string(whole) + "': " + why + "\n  " +
                      std::string(whole) + "\n  " + std::string(at, ' ') +
                      std::string(std::max<std::size_t>(len, 1), '^');
    throw Error(EINVAL, msg);
}

// An Intel model-specific name through libpfm4, its refusal shown as ours.
std::optional<std::uint64_t> model_specific_config(std::string_view whole, std::string_view base)
{
    try {
        return pfm_event_config(std::string(base));
    } catch (const Error& e) {
        bad(whole, 0, base.size(), e.reason());
    }
}

std::string lower(std::string_view s)
{
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::uint64_t parse_number(std::string_view whole, std::size_t at, std::string_view digits,
                           std::uint64_t max, const char* what)
{
    std::string text(digits);
    int base = 10;
    if (text.size() > 2 && (text.rfind("0x", 0) == 0 || text.rfind("0X", 0) == 0)) {
        text = text.substr(2);
        base = 16;
    }
    if (text.empty() || text.find_first_not_of(base == 16 ? "0123456789abcdefABCDEF"
                                                          : "0123456789") != std::string::npos)
        bad(whole, at, digits.size(),
            std::string(what) + " '" + std::string(digits) + "' is not a number");
    std::uint64_t value = 0;
    const auto result = std::from_chars(text.data(), text.data() + text.size(), value, base);
    if (result.ec != std::errc{} || value > max)
        bad(whole, at, digits.size(),
            std::string(what) + "=" + std::string(digits) + " is out of range (0-" +
                std::to_string(max) + ")");
    return value;
}

// cpu/term,term,.../ starting at whole[open]; returns the config.
std::uint64_t parse_cpu_terms(std::string_view whole, std::size_t open, std::size_t close,
                              EventSpec& spec)
{
    std::uint64_t config = 0;
    bool have_event = false;
    std::vector<std::string> seen;
    std::size_t pos = open;
    while (pos < close) {
        std::size_t end = whole.find(',', pos);
        if (end == std::string_view::npos || end > close)
            end = close;
        const std::string_view term = whole.substr(pos, end - pos);
        const std::size_t eq = term.find('=');
        const std::string key = lower(term.substr(0, eq));
        if (!key.empty() && std::find(seen.begin(), seen.end(), key) != seen.end())
            bad(whole, pos, term.size(), "term '" + key + "' given twice");
        seen.push_back(key);
        const std::string_view val =
            eq == std::string_view::npos ? std::string_view{} : term.substr(eq + 1);
        const std::size_t val_at = pos + (eq == std::string_view::npos ? 0 : eq + 1);
        if (key == "event") {
            config |= parse_number(whole, val_at, val, 0xff, "event");
            have_event = true;
        } else if (key == "umask") {
            config |= parse_number(whole, val_at, val, 0xff, "umask") << ARCHPMU_EVTSEL_UMASK_SHIFT;
        } else if (key == "umask2") {
            config |= parse_number(whole, val_at, val, 0xff, "umask2")
                      << ARCHPMU_EVTSEL_UMASK2_SHIFT;
        } else if (key == "cmask") {
            config |= parse_number(whole, val_at, val, 0xff, "cmask") << ARCHPMU_EVTSEL_CMASK_SHIFT;
        } else if (key == "inv" || key == "edge" || key == "any" || key == "eq") {
            if (eq == std::string_view::npos ||
                parse_number(whole, val_at, val, 1, key.c_str()) == 1)
                config |= key == "inv"    ? ARCHPMU_EVTSEL_INV
                          : key == "edge" ? ARCHPMU_EVTSEL_EDGE
                          : key == "eq"   ? ARCHPMU_EVTSEL_EQ
                                          : ARCHPMU_EVTSEL_ANY;
        } else if (term.empty()) {
            bad(whole, pos, 1, "empty term");
        } else {
            bad(whole, pos, term.size(),
                "unknown term '" + std::string(term) +
                    "' (known: event, umask, umask2, cmask, inv, edge, any, eq)");
        }
        pos = end + 1;
    }
    if (!have_event)
        bad(whole, open, close - open, "cpu/.../ needs event=");
    spec.flags |= ARCHPMU_EVENT_RAW;
    return config;
}

// perf's PMUs of a hybrid part's core types, as the prefix of an event for one.
constexpr std::array<std::pair<std::string_view, std::uint32_t>, 2> kHybridPmus = {{
    {"cpu_core/", ARCHPMU_CORE_TYPE_CORE},
    {"cpu_atom/", ARCHPMU_CORE_TYPE_ATOM},
}};

std::optional<std::string_view> hybrid_pmu(std::string_view text)
{
    for (const auto& [prefix, type] : kHybridPmus)
        if (lower(text.substr(0, prefix.size())) == prefix)
            return prefix;
    return std::nullopt;
}

// cpu_core/TERMS/ or cpu_core/NAME/ (perf's forms; cpu_atom alike): the event,
// for that core type only.
std::uint64_t parse_hybrid_event(std::string_view text, std::string_view prefix, EventSpec& spec)
{
    const std::size_t open = prefix.size();
    const std::size_t close = text.find('/', open);
    const std::string_view pmu = prefix.substr(0, prefix.size() - 1);
    if (close == std::string_view::npos)
        bad(text, open - 1, text.size() - open + 1, std::string(pmu) + "/ without its closing '/'");
    for (const auto& [p, type] : kHybridPmus)
        if (p == prefix)
            spec.flags |= ARCHPMU_EVENT_ON_CORE_TYPE(type);
    const std::string_view inner = text.substr(open, close - open);
    if (inner.find('=') != std::string_view::npos)
        return parse_cpu_terms(text, open, close, spec);
    if (inner.empty() || inner.find_first_of(":@") != std::string_view::npos)
        bad(text, open, std::max<std::size_t>(inner.size(), 1),
            "give " + std::string(pmu) +
                "/ an event name or event=,umask= terms; modifiers "
                "go after its closing '/'");
    try {
        const EventSpec named = parse_event(inner);
        spec.flags |= named.flags;
        spec.cache_event = named.cache_event;
        return named.config;
    } catch (const Error& e) {
        // Its reason, under the whole event: "bad event 'NAME': WHY\n...".
        const std::string& reason = e.reason();
        const std::size_t from = reason.find("': ");
        const std::size_t to = reason.find('\n');
        bad(text, open, inner.size(),
            from == std::string::npos ? reason.substr(0, to)
                                      : reason.substr(from + 3, to - from - 3));
    }
}

void apply_counter_choice(std::string_view whole, std::size_t at, std::string_view choice,
                          EventSpec& spec)
{
    const std::string c = lower(choice);
    const auto index = [&](std::size_t skip, std::uint64_t max) {
        return static_cast<std::uint32_t>(
            parse_number(whole, at + skip, choice.substr(skip), max, "counter"));
    };
    if (c == "gp") {
        spec.flags |= ARCHPMU_EVENT_GP_ONLY;
    } else if (c.rfind("gp", 0) == 0 || c.rfind("pmc", 0) == 0) {
        spec.flags |= ARCHPMU_EVENT_PIN;
        spec.counter = index(c[0] == 'g' ? 2 : 3, ARCHPMU_MAX_GP_COUNTERS - 1);
    } else if (c.rfind("fixed", 0) == 0 || c.rfind("fixc", 0) == 0) {
        spec.flags |= ARCHPMU_EVENT_PIN;
        spec.counter =
            ARCHPMU_COUNTER_FIXED | index(c[1] == 'i' && c[2] == 'x' && c[3] == 'e' ? 5 : 4,
                                          ARCHPMU_MAX_FIXED_COUNTERS - 1);
    } else {
        bad(whole, at, choice.size(),
            "unknown counter '" + std::string(choice) + "' (use gp, gpN or fixedN)");
    }
}

// Modifiers u, k and D (perf's pinned: never multiplexed out): the ring bits
// (0: none given) and whether D was.
struct Modifiers {
    std::uint64_t ring = 0;
    bool pinned = false;
};

Modifiers parse_modifiers(std::string_view whole, std::size_t at, std::string_view mods)
{
    if (mods.empty())
        bad(whole, at - 1, 1, "empty modifier after ':' (use u, k, uk or D)");
    Modifiers m;
    for (std::size_t i = 0; i < mods.size(); ++i) {
        if (mods[i] == 'D') {
            if (m.pinned)
                bad(whole, at + i, 1, "modifier 'D' given twice");
            m.pinned = true;
            continue;
        }
        const std::uint64_t bit = mods[i] == 'u'   ? ARCHPMU_EVTSEL_USR
                                  : mods[i] == 'k' ? ARCHPMU_EVTSEL_OS
                                                   : 0;
        if (!bit)
            bad(whole, at + i, 1,
                std::string("unknown modifier '") + mods[i] + "' (use u, k or D)");
        if (m.ring & bit)
            bad(whole, at + i, 1, std::string("modifier '") + mods[i] + "' given twice");
        m.ring |= bit;
    }
    return m;
}

void apply_modifiers(std::string_view whole, std::size_t at, std::string_view mods, EventSpec& spec)
{
    const Modifiers m = parse_modifiers(whole, at, mods);
    if (m.ring)
        spec.config = (spec.config & ~(ARCHPMU_EVTSEL_USR | ARCHPMU_EVTSEL_OS)) | m.ring;
    if (m.pinned)
        spec.flags |= ARCHPMU_EVENT_NO_ROTATE;
}

// Where the event starting at `from` ends: the next ',' outside cpu/.../ terms,
// or `to`.
std::size_t event_end(std::string_view text, std::size_t from, std::size_t to)
{
    bool in_cpu_terms = false;
    for (std::size_t i = from; i < to; ++i) {
        if (text[i] == '/')
            in_cpu_terms = !in_cpu_terms;  // "cpu/" opens the terms, the next '/' closes them
        else if (text[i] == ',' && !in_cpu_terms)
            return i;
    }
    return to;
}

// The comma-separated events of text[from, to) appended to out.
void parse_events_in(std::string_view text, std::size_t from, std::size_t to,
                     std::vector<EventSpec>& out)
{
    for (std::size_t at = from;;) {
        const std::size_t end = event_end(text, at, to);
        if (end == at)
            bad(text, std::min(at, text.size() - 1), 1,
                "empty event (separate events with one comma, none at either end)");
        const std::string_view one = text.substr(at, end - at);
        if (one.find_first_of("{}") != std::string_view::npos)
            bad(text, at + one.find_first_of("{}"), 1,
                "a brace inside an event (groups are {a,b}, not nested)");
        out.push_back(parse_event(one));
        if (end == to)
            return;
        at = end + 1;
    }
}

// A group {a,b}[:mods] at text[open]; returns where it ends.
std::size_t parse_group(std::string_view text, std::size_t open, std::vector<EventSpec>& out)
{
    const std::size_t close = text.find('}', open);
    if (close == std::string_view::npos)
        bad(text, open, text.size() - open, "'{' without its closing '}'");
    if (close == open + 1)
        bad(text, open, 2, "empty group (give its events: {cycles,instructions})");
    const std::size_t first = out.size();
    parse_events_in(text, open + 1, close, out);
    for (std::size_t e = first + 1; e < out.size(); ++e) {
        if (out[e].flags & ARCHPMU_EVENT_NO_ROTATE)
            bad(text, open, close + 1 - open,
                "'" + out[e].name + "': D pins a whole group: write {a,b}:D");
        if ((out[e].flags ^ out[first].flags) & ARCHPMU_EVENT_CORE_TYPE)
            bad(text, open, close + 1 - open,
                "'" + out[e].name +
                    "': a group's events are all for one core type (all "
                    "cpu_core/.../, all cpu_atom/.../ or none)");
        out[e].flags |= ARCHPMU_EVENT_GROUP;
    }
    const std::size_t end = std::min(text.find(',', close), text.size());
    if (end == close + 1 || close + 1 == text.size())
        return end;
    if (text[close + 1] != ':')
        bad(text, close + 1, end - close - 1, "unexpected text after the group's '}'");
    // The group's modifiers: u/k for the members that gave none, D for the group.
    const Modifiers m = parse_modifiers(text, close + 2, text.substr(close + 2, end - close - 2));
    for (std::size_t e = first; e < out.size(); ++e) {
        if (m.ring && !(out[e].config & (ARCHPMU_EVTSEL_USR | ARCHPMU_EVTSEL_OS)))
            out[e].config |= m.ring;
        if (out[e].name.find(':') == std::string::npos)
            out[e].name += std::string(text.substr(close + 1, end - close - 1));
    }
    if (m.pinned)
        out[first].flags |= ARCHPMU_EVENT_NO_ROTATE;
    return end;
}

}  // namespace

EventSpec parse_event(std::string_view text)
{
    EventSpec spec;
    spec.name = std::string(text);
    if (text.empty())
        bad(text, 0, 1, "empty event");

    std::size_t rest = 0;  // where modifiers may start
    if (const auto hybrid = hybrid_pmu(text)) {
        spec.config = parse_hybrid_event(text, *hybrid, spec);
        rest = text.find('/', hybrid->size()) + 1;
    } else if (lower(text.substr(0, 4)) == "cpu/") {
        const std::size_t close = text.find('/', 4);
        if (close == std::string_view::npos)
            bad(text, 3, text.size() - 3, "cpu/ without its closing '/'");
        spec.config = parse_cpu_terms(text, 4, close, spec);
        rest = close + 1;
    } else {
        const std::size_t stop = std::min(text.find(':'), text.find('@'));
        const std::string_view base = text.substr(0, stop);
        rest = base.size();
        const std::string key = lower(base);
        const std::uint32_t code = named_code(key);
        if (code != ~0U) {
            spec.config = code;
        } else if (const auto cache = cache_event_name(base); !cache.empty()) {
            spec.cache_event = std::string(cache);
        } else if (key.size() > 1 && key[0] == 'r' &&
                   key.find_first_not_of("0123456789abcdef", 1) == std::string::npos) {
            if (key.size() > 17)
                bad(text, 1, base.size() - 1, "a raw config has at most 16 hex digits");
            spec.config = parse_number(text, 1, "0x" + key.substr(1), ~0ULL, "raw config");
            spec.flags |= ARCHPMU_EVENT_RAW;
        } else if (const auto pfm = model_specific_config(text, base)) {
            // Not architectural: CPUID's availability bits say nothing about it.
            spec.config = *pfm;
            spec.flags |= ARCHPMU_EVENT_RAW;
        } else if (key.size() > 1 && key[0] == 'r') {
            // Meant raw, mistyped: say which digits are wrong.
            spec.config = parse_number(text, 1, "0x" + key.substr(1), ~0ULL, "raw config");
        } else {
            bad(text, 0, base.size(),
                "unknown event '" + std::string(base) +
                    "' (try cycles, instructions, r00c0 or cpu/event=0xc0,umask=0/; 'archpmu "
                    "list' names the events of this CPU)");
        }
    }

    bool have_modifiers = false;
    bool have_counter = false;
    while (rest < text.size()) {
        const char kind = text[rest];
        std::size_t end = text.find_first_of(":@", rest + 1);
        if (end == std::string_view::npos)
            end = text.size();
        const std::string_view part = text.substr(rest + 1, end - rest - 1);
        if (kind == ':') {
            if (have_modifiers)
                bad(text, rest, end - rest, "a second ':' (write the modifiers together, as :uk)");
            apply_modifiers(text, rest + 1, part, spec);
            have_modifiers = true;
        } else if (kind == '@') {
            if (have_counter)
                bad(text, rest, end - rest, "a second counter choice (give one '@')");
            apply_counter_choice(text, rest + 1, part, spec);
            have_counter = true;
        } else {
            bad(text, rest, text.size() - rest, "unexpected text after the event");
        }
        rest = end;
    }
    return spec;
}

std::vector<EventSpec> parse_event_list(std::string_view text)
{
    if (text.empty())
        bad(text, 0, 1, "empty event list (give an event such as cycles)");
    std::vector<EventSpec> out;
    for (std::size_t at = 0;;) {
        std::size_t end = 0;
        if (text[at] == '{') {
            end = parse_group(text, at, out);
        } else {
            end = event_end(text, at, text.size());
            parse_events_in(text, at, end, out);
        }
        if (end >= text.size())
            return out;
        at = end + 1;
        if (at == text.size())
            bad(text, end, 1, "empty event (separate events with one comma, none at either end)");
    }
}

std::vector<EventSpec> user_mode_only(std::vector<EventSpec> events)
{
    for (auto& e : events) {
        if (e.config & (ARCHPMU_EVTSEL_USR | ARCHPMU_EVTSEL_OS))
            continue;
        e.config |= ARCHPMU_EVTSEL_USR;
    }
    return events;
}

std::string counter_name(std::uint32_t counter)
{
    if (counter == ARCHPMU_NO_COUNTER)
        return "-";
    if (counter & ARCHPMU_COUNTER_FIXED)
        return "fixed" + std::to_string(counter & 0xff);
    if (counter & ARCHPMU_COUNTER_METRICS)
        return "metrics" + std::to_string(counter & 0xff);
    return "gp" + std::to_string(counter);
}

}  // namespace archpmu
