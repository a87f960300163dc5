// SPDX-License-Identifier: MIT
#include "notice_format.hpp"

#include <nlohmann/json.hpp>
#include <string>

#include "archpmu.h"
#include "archpmu/events.hpp"
#include "archpmu/regs.hpp"
#include "archpmu_netlink.h"

namespace archpmu {
namespace {

std::string who(const Notice& n)
{
    std::string s = "session " + (n.session_id ? std::to_string(*n.session_id) : "?");
    if (n.pid)
        s += " (pid " + std::to_string(*n.pid) + " " + printable(n.comm) + ")";
    else if (n.uid)
        s += " (uid " + std::to_string(*n.uid) + ")";
    return s;
}

// A bit mask of counters (busy-mask bits: GP i is bit i, fixed j is bit 32 + j).
std::string counter_list(std::uint64_t mask)
{
    std::string s;
    for (unsigned bit = 0; bit < 64; ++bit)
        if (mask & (1ULL << bit))
            s += (s.empty() ? "" : ",") +
                 counter_name(bit < 32 ? bit : ARCHPMU_COUNTER_FIXED | (bit - 32));
    return s;
}

std::string holder_text(const Notice& n)
{
    const std::uint32_t h = n.holder.value_or(ARCHPMU_HOLDER_UNKNOWN);
    if (h == ARCHPMU_HOLDER_SESSION) {
        if (n.holder_pid)  // a refusal names the holder apart from the asker
            return "the archpmu session of pid " + std::to_string(*n.holder_pid) + " (" +
                   printable(n.holder_comm) + ")";
        if (n.cmd == ARCHPMU_GENL_CMD_COUNTER)  // a counter's holder is the notice's session
            return "the archpmu " + who(n);
        return "an archpmu session";
    }
    if (h == ARCHPMU_HOLDER_PERF)
        return "perf";
    if (h == ARCHPMU_HOLDER_AGENT && n.msr)
        return "another agent (" + register_name(*n.msr) + " = " +
               hex_string(n.msr_value.value_or(0)) + ")";
    return std::string(holder_name(h));
}

}  // namespace

std::string notice_line(const Notice& n)
{
    std::string s(notice_name(n.cmd));
    const std::string on = n.cpu ? " CPU " + std::to_string(*n.cpu) : std::string();
    switch (n.cmd) {
        case 0:
            return s + ": events were lost (the listener's socket buffer overran)";
        case ARCHPMU_GENL_EVENT_UNLOAD:
            return s + ": the archpmu module is unloading";
        case ARCHPMU_GENL_EVENT_REFUSED:
            return s + ":" + on + " pid " + std::to_string(n.pid.value_or(0)) + " (" +
                   printable(n.comm) + ") was refused" +
                   (n.event_index ? " event " + std::to_string(*n.event_index) : std::string()) +
                   ": " +
                   (n.counter    ? counter_name(*n.counter)
                    : n.counters ? counter_list(*n.counters)
                                 : std::string("its counters")) +
                   " held by " + holder_text(n);
        case ARCHPMU_GENL_EVENT_FOREIGN_USE:
            return s + ":" + on + " " + counter_name(n.counter.value_or(0)) + " of " + who(n) +
                   ": MSR " + hex_string(n.msr.value_or(0)) + " = " +
                   hex_string(n.msr_value.value_or(0)) + ", programmed " +
                   hex_string(n.expected.value_or(0));
        case ARCHPMU_GENL_EVENT_CPU_OFFLINE:
        case ARCHPMU_GENL_EVENT_CPU_ONLINE:
            return s + ":" + on + " " + who(n) +
                   (n.error ? " not resumed (errno " + std::to_string(*n.error) + ")"
                            : std::string());
        case ARCHPMU_GENL_EVENT_THROTTLE:
        case ARCHPMU_GENL_EVENT_UNTHROTTLE:
        case ARCHPMU_GENL_EVENT_LOST:
            return s + ":" + on + " " + who(n) + " +" + std::to_string(n.count.value_or(0)) + " (" +
                   std::to_string(n.total.value_or(0)) + " in all)";
        case ARCHPMU_GENL_CMD_COUNTER:
            return s + ":" + on + " " + counter_name(n.counter.value_or(0)) + " " + holder_text(n);
        default:
            break;
    }
    s += ": " + who(n);
    if (n.cmd == ARCHPMU_GENL_EVENT_SESSION_OPEN || n.cmd == ARCHPMU_GENL_CMD_SESSION) {
        s += n.sampling ? " sampling" : " counting";
        s += n.running ? ", started," : ",";
        s += " " + std::to_string(n.events.size()) + " events on CPUs";
        for (const auto& c : n.claims)
            s += " " + std::to_string(c.cpu) + (c.offline ? "(offline)" : "");
    }
    return s;
}

std::string notice_json(const Notice& n)
{
    nlohmann::json j;
    j["type"] = notice_name(n.cmd);
    auto put = [&j](const char* key, const auto& opt) {
        if (opt)
            j[key] = *opt;
    };
    put("session_id", n.session_id);
    put("pid", n.pid);
    if (!n.comm.empty())
        j["comm"] = n.comm;
    put("uid", n.uid);
    put("cpu", n.cpu);
    if (n.counter)
        j["counter"] = counter_name(*n.counter);
    put("event_index", n.event_index);
    put("errno", n.error);
    if (n.holder)
        j["holder"] = holder_name(*n.holder);
    put("holder_session_id", n.holder_session_id);
    put("holder_pid", n.holder_pid);
    if (!n.holder_comm.empty())
        j["holder_comm"] = n.holder_comm;
    put("msr", n.msr);
    put("msr_value", n.msr_value);
    put("expected", n.expected);
    put("counters", n.counters);
    put("count", n.count);
    put("total", n.total);
    if (n.scope)
        j["scope"] = *n.scope == ARCHPMU_GENL_SCOPE_CPU ? "cpu" : "unknown";
    if (n.cmd == ARCHPMU_GENL_EVENT_SESSION_OPEN || n.cmd == ARCHPMU_GENL_CMD_SESSION) {
        j["running"] = n.running;
        j["sampling"] = n.sampling;
        j["events"] = nlohmann::json::array();
        for (const auto& e : n.events) {
            nlohmann::json je{{"config", e.config}};
            if (e.period)
                je[e.freq ? "freq" : "period"] = e.period;
            j["events"].push_back(je);
        }
        j["cpus"] = nlohmann::json::array();
        for (const auto& c : n.claims) {
            nlohmann::json jc{{"cpu", c.cpu}, {"offline", c.offline}};
            jc["counters"] = nlohmann::json::array();
            for (auto ctr : c.counters)
                jc["counters"].push_back(counter_name(ctr));
            j["cpus"].push_back(jc);
        }
    }
    // A comm need not be UTF-8 (15 bytes may cut a character): replace, never throw.
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace archpmu
