// SPDX-License-Identifier: MIT
#include "watch.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "archpmu.h"
#include "archpmu/device.hpp"
#include "archpmu/error.hpp"
#include "archpmu/events.hpp"
#include "archpmu/netlink.hpp"
#include "archpmu/regs.hpp"
#include "archpmu_netlink.h"
#include "child.hpp"
#include "notice_format.hpp"
#include "regs_format.hpp"

namespace archpmu::tool {

namespace {

// Until Ctrl-C: wait for the module to be gone (its UNLOAD event comes just
// before), then for it to be back, and join again.
std::unique_ptr<Monitor> rejoin(int old_family)
{
    std::cerr << "archpmu monitor: the module unloaded; waiting for it to come back" << std::endl;
    bool gone = false;
    while (!interrupted()) {
        const auto id = family_id();
        gone = gone || !id || *id != old_family;
        if (gone && id) {
            try {
                auto monitor = std::make_unique<Monitor>();
                std::cerr << "archpmu monitor: the module is back; listening" << std::endl;
                return monitor;
            } catch (const Error& e) {
                if (e.code().value() != ENOENT)
                    throw;
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return nullptr;
}

}  // namespace

int run_monitor(bool json)
{
    auto monitor = std::make_unique<Monitor>();
    catch_interrupt();
    // On stderr, so stdout is only events: what happens after this line is seen.
    std::cerr << "archpmu monitor: listening; Ctrl-C stops" << std::endl;
    auto last_check = std::chrono::steady_clock::now();
    while (!interrupted()) {
        pollfd pfd{monitor->fd(), POLLIN, 0};
        const int ret = ::poll(&pfd, 1, 200);
        if (ret < 0 && errno != EINTR)
            throw Error(errno, "poll on the netlink socket");
        bool unloaded = false;
        if (ret > 0) {
            for (const auto& n : monitor->receive()) {
                std::cout << (json ? notice_json(n) : notice_line(n)) << std::endl;
                unloaded = unloaded || n.cmd == ARCHPMU_GENL_EVENT_UNLOAD;
            }
        }
        // Once a second: an unload whose event was lost (an overrun) shows here.
        const auto now = std::chrono::steady_clock::now();
        if (!unloaded && now - last_check > std::chrono::seconds(1)) {
            last_check = now;
            unloaded = family_id() != monitor->family_id();
        }
        if (unloaded) {
            monitor = rejoin(monitor->family_id());
            if (!monitor)
                break;
        }
    }
    return 0;
}

namespace {

// A session's name: "pid 1234 (comm)", or "uid 1000" when its process is not ours to see.
std::string owner(const Notice& n)
{
    if (n.pid)
        return "pid " + std::to_string(*n.pid) + " (" + printable(n.comm) + ")";
    return n.uid ? "uid " + std::to_string(*n.uid) : std::string("?");
}

}  // namespace

int run_who(bool json)
{
    const auto usage = dump_pmu_usage();
    const auto sessions = dump_sessions();
    // KVM's vPMU counts through perf, whose reservation fails while a session exists.
    const bool kvm_starved = !sessions.empty() && ::access("/sys/module/kvm", F_OK) == 0;
    if (json) {
        nlohmann::json doc{{"counters", nlohmann::json::array()},
                           {"sessions", nlohmann::json::array()},
                           {"kvm_guests_count_nothing", kvm_starved}};
        for (const auto& u : usage)
            doc["counters"].push_back(nlohmann::json::parse(notice_json(u)));
        for (const auto& s : sessions)
            doc["sessions"].push_back(nlohmann::json::parse(notice_json(s)));
        std::cout << doc.dump(2) << '\n';
        return 0;
    }
    std::cout << "CPU  COUNTER   HOLDER   WHO\n";
    for (const auto& u : usage) {
        std::string who;
        const std::uint32_t holder = u.holder.value_or(0);
        if (holder == ARCHPMU_HOLDER_SESSION && u.session_id)
            who = "session " + std::to_string(*u.session_id) + ", " + owner(u);
        else if (holder == ARCHPMU_HOLDER_AGENT && u.msr && u.msr_value)
            who = register_name(*u.msr) + " = " + hex_string(*u.msr_value);
        else if (holder == ARCHPMU_HOLDER_PERF)
            who = "perf_event_open or the NMI watchdog";
        char line[160];
        (void)std::snprintf(line, sizeof(line), "%-4u %-9s %-8s %s", u.cpu.value_or(0),
                            counter_name(u.counter.value_or(0)).c_str(),
                            std::string(holder_name(holder)).c_str(), who.c_str());
        std::string text(line);
        text.erase(text.find_last_not_of(' ') + 1);
        std::cout << text << '\n';
    }
    std::cout << sessions.size() << (sessions.size() == 1 ? " session" : " sessions") << '\n';
    for (const auto& s : sessions)
        std::cout << "  " << notice_line(s) << '\n';
    if (kvm_starved)
        std::cout << "kvm is loaded: while these sessions exist, perf cannot reserve the PMU for "
                     "KVM's virtual PMU, and guests' hardware counters read 0\n";
    return 0;
}

int run_regs(const std::string& device, const std::vector<std::uint32_t>& cpus, bool json)
{
    const Device dev(device);
    std::vector<CpuRegisters> all;
    if (cpus.empty()) {
        for (const auto& c : dev.all_cpu_info())
            all.push_back({c.cpu, dev.registers(c.cpu)});
    } else {
        for (auto cpu : cpus)
            all.push_back({cpu, dev.registers(cpu)});
    }
    std::cout << (json ? registers_json(all) : registers_table(all));
    return 0;
}

}  // namespace archpmu::tool
