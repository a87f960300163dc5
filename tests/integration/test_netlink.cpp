// SPDX-License-Identifier: MIT
// The generic netlink family: `archpmu monitor --json` sees each event with its
// fields, `archpmu who` and `archpmu regs` say exactly what holds and what is
// programmed, malformed requests get the policy's errors, and an unprivileged
// user sees what uapi/archpmu_netlink.h says and nothing more.
#include <fcntl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "archpmu.h"
#include "archpmu/device.hpp"
#include "archpmu/error.hpp"
#include "archpmu/events.hpp"
#include "archpmu/netlink.hpp"
#include "archpmu/regs.hpp"
#include "archpmu/sampling.hpp"
#include "archpmu/session.hpp"
#include "archpmu_netlink.h"
#include "harness.hpp"

using namespace archpmu::itest;
using archpmu::Session;
using nlohmann::json;

namespace {

constexpr const char* kDev = "/dev/archpmu";
constexpr const char* kExact = "backend=model model_rate_percent=0 model_version=4 ";

std::vector<archpmu::EventSpec> events(const std::string& list)
{
    return archpmu::parse_event_list(list);
}

// `archpmu monitor --json` in the background, its stdout in a file.
class MonitorTool {
public:
    MonitorTool()
    {
        char out_tmpl[] = "/tmp/archpmu-mon-out-XXXXXX";
        char err_tmpl[] = "/tmp/archpmu-mon-err-XXXXXX";
        const int out = ::mkstemp(out_tmpl);
        const int err = ::mkstemp(err_tmpl);
        REQUIRE(out >= 0);
        REQUIRE(err >= 0);
        out_ = out_tmpl;
        err_ = err_tmpl;
        pid_ = ::fork();
        REQUIRE(pid_ >= 0);
        if (pid_ == 0) {
            ::dup2(out, 1);
            ::dup2(err, 2);
            ::execl(ARCHPMU_TOOL, ARCHPMU_TOOL, "monitor", "--json", static_cast<char*>(nullptr));
            ::_exit(127);
        }
        ::close(out);
        ::close(err);
        wait_for_status("listening");
    }

    // Until its stderr says `text` (at most 5 s).
    void wait_for_status(const std::string& text)
    {
        for (int i = 0; i < 500 && read_file(err_).find(text) == std::string::npos; i++)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        REQUIRE(read_file(err_).find(text) != std::string::npos);
    }
    MonitorTool(const MonitorTool&) = delete;
    MonitorTool& operator=(const MonitorTool&) = delete;
    ~MonitorTool()
    {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
        ::unlink(out_.c_str());
        ::unlink(err_.c_str());
    }

    // Ctrl-C, then every event it printed.
    std::vector<json> stop()
    {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let it read the last
        ::kill(pid_, SIGINT);
        int status = 0;
        REQUIRE(::waitpid(pid_, &status, 0) == pid_);
        pid_ = -1;
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
        std::vector<json> out;
        std::istringstream in(read_file(out_));
        for (std::string line; std::getline(in, line);)
            out.push_back(json::parse(line));
        return out;
    }

private:
    pid_t pid_ = -1;
    std::string out_, err_;
};

std::vector<std::string> types(const std::vector<json>& evs)
{
    std::vector<std::string> out;
    for (const auto& e : evs)
        out.push_back(e.at("type").get<std::string>());
    return out;
}

// Run `fn` in a child process; its exit status (0: every check there held).
template <typename Fn>
int in_child(Fn fn)
{
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        int code = 1;
        try {
            code = fn();
        } catch (...) {
            code = 99;
        }
        ::_exit(code);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

TEST_CASE("monitor --json shows a session's life, a refusal and foreign use exactly",
          "[netlink][monitor]")
{
    LoadedModule module(kExact);
    MonitorTool mon;
    // Another process opens, starts, reads, stops and closes a session.
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        try {
            Session s(events("instructions,branches"), on_cpus({0}));
            s.start();
            (void)s.read();
            s.stop();
        } catch (...) {
            ::_exit(1);
        }
        ::_exit(0);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    REQUIRE(WEXITSTATUS(status) == 0);

    // The hog holds GP 2 through perf's reservation: a refusal naming perf.
    REQUIRE(load_hog(2) == 0);
    CHECK_THROWS_AS(Session(events("branches@gp2"), on_cpus({0})), archpmu::Error);
    CHECK(unload_hog() == 0);

    // Another agent rewrites the PERFEVTSEL of a counter a session holds.
    {
        Session held(events("branches@gp1"), on_cpus({0}));
        held.start();
        archpmu::Device dev;
        model_write_msr(dev, 0, 0x186 + 1, 0xc4);  // EN and the ring bits gone
        (void)held.read();
        (void)held.read();  // reported once, not at every read
    }

    const auto evs = mon.stop();
    REQUIRE(types(evs) == std::vector<std::string>{"session-open", "session-start", "session-stop",
                                                   "session-close", "refused", "session-open",
                                                   "session-start", "foreign-use",
                                                   "session-close"});
    const json& open = evs[0];
    CHECK(open.at("pid") == child);
    CHECK(open.at("uid") == 0);
    CHECK(open.at("comm") == "archpmu_itest");
    CHECK(open.at("scope") == "cpu");
    CHECK(open.at("running") == false);
    CHECK(open.at("sampling") == false);
    CHECK(open.at("events") == json::parse(R"([{"config":192},{"config":196}])"));
    CHECK(open.at("cpus") ==
          json::parse(R"([{"cpu":0,"offline":false,"counters":["fixed0","gp0"]}])"));
    const auto id = open.at("session_id").get<uint64_t>();
    for (int i = 1; i < 4; i++) {
        CHECK(evs[i].at("session_id") == id);
        CHECK(evs[i].at("pid") == child);
    }
    const json& refused = evs[4];
    CHECK(refused.at("pid") == ::getpid());
    CHECK(refused.at("holder") == "perf");
    CHECK(refused.at("cpu") == 0);
    CHECK(refused.at("event_index") == 0);
    CHECK(refused.at("errno") == EBUSY);
    CHECK(refused.at("counter") == "gp2");
    CHECK(refused.at("counters") == 0x4);
    const json& foreign = evs[7];
    CHECK(foreign.at("session_id") == evs[5].at("session_id"));
    CHECK(foreign.at("cpu") == 0);
    CHECK(foreign.at("counter") == "gp1");
    CHECK(foreign.at("msr") == 0x187);
    CHECK(foreign.at("msr_value") == 0xc4);
    CHECK(foreign.at("expected") == 0x4300c4);  // EN, OS and USR
}

TEST_CASE("monitor shows a refusal naming the session that holds the counters",
          "[netlink][monitor]")
{
    LoadedModule module(kExact);
    Session held(events("branches,branches,branches,branches"), on_cpus({0}));
    MonitorTool mon;
    CHECK_THROWS_AS(Session(events("branches"), on_cpus({0})), archpmu::Error);
    const auto evs = mon.stop();
    REQUIRE(types(evs) == std::vector<std::string>{"refused"});
    CHECK(evs[0].at("holder") == "session");
    CHECK(evs[0].at("holder_pid") == ::getpid());
    CHECK(evs[0].at("holder_comm") == "archpmu_itest");
    CHECK(evs[0].at("holder_session_id").get<uint64_t>() >= 1);
}

TEST_CASE("monitor shows CPUs leaving and coming back, the unload, and listens again after it",
          "[netlink][monitor]")
{
    LoadedModule module(kExact);
    const unsigned cpu = online_cpus().back();
    REQUIRE(cpu > 0);
    const std::string online = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/online";
    std::vector<json> evs;
    {
        MonitorTool mon;
        {
            Session s(events("instructions"), on_cpus({cpu}));
            write_file(online, "0");
            write_file(online, "1");
        }
        REQUIRE(unload_module() == 0);
        REQUIRE(load_module(kExact) == 0);  // LoadedModule unloads it again
        mon.wait_for_status("the module is back");
        {
            Session again(events("branches"), on_cpus({0}));
        }
        evs = mon.stop();
    }
    REQUIRE(types(evs) == std::vector<std::string>{"session-open", "cpu-offline", "cpu-online",
                                                   "session-close", "unload", "session-open",
                                                   "session-close"});
    CHECK(evs[1].at("cpu") == cpu);
    CHECK(evs[2].at("cpu") == cpu);
    CHECK(evs[2].count("errno") == 0);
}

TEST_CASE("throttles, unthrottles and lost samples are told with exact totals",
          "[netlink][monitor][sampling]")
{
    // A rate the model's PMIs always outrun: at the default one, how fast they come
    // under TCG decides whether any throttle.
    LoadedModule module("backend=model model_version=4 sample_max_rate=2000");
    const unsigned cpu = online_cpus().back();
    archpmu::Monitor monitor;
    uint64_t id = 0;
    const auto stats = run_lossy_sampling(cpu, std::chrono::milliseconds(400), [&] {
        const auto sessions = archpmu::dump_sessions();
        REQUIRE(sessions.size() == 1);
        id = *sessions[0].session_id;
        CHECK(sessions[0].sampling);
        REQUIRE(sessions[0].events.size() == 1);
        CHECK(sessions[0].events[0].period == 1);
    });
    REQUIRE(stats.lost > 0);
    REQUIRE(stats.throttled > 0);
    std::map<uint8_t, uint64_t> sum, last;
    for (const auto& n : monitor.receive()) {
        if (n.cmd == ARCHPMU_GENL_EVENT_THROTTLE || n.cmd == ARCHPMU_GENL_EVENT_UNTHROTTLE ||
            n.cmd == ARCHPMU_GENL_EVENT_LOST) {
            CHECK(*n.session_id == id);
            CHECK(*n.cpu == cpu);
            sum[n.cmd] += *n.count;
            last[n.cmd] = *n.total;
        }
    }
    CHECK(sum[ARCHPMU_GENL_EVENT_LOST] == stats.lost);
    CHECK(last[ARCHPMU_GENL_EVENT_LOST] == stats.lost);
    CHECK(sum[ARCHPMU_GENL_EVENT_THROTTLE] == stats.throttled);
    CHECK(sum[ARCHPMU_GENL_EVENT_UNTHROTTLE] >= 1);
}

// The same totals, every session's, for those who may not join the events group
// (the exporter, with CAP_PERFMON only).
TEST_CASE("sysfs' throttled and lost_samples sum every session's on the CPU, across hotplug",
          "[netlink][sampling][sysfs][hotplug]")
{
    LoadedModule module("backend=model model_version=4 sample_max_rate=2000");
    const unsigned cpu = online_cpus().back();
    REQUIRE(cpu > 0);
    const auto total = [&](const char* attr) { return std::stoull(cpu_sysfs(cpu, attr)); };
    CHECK(total("throttled") == 0);
    CHECK(total("lost_samples") == 0);
    uint64_t throttled = 0;
    uint64_t lost = 0;
    for (int i = 0; i < 2; i++) {
        const auto stats = run_lossy_sampling(cpu, std::chrono::milliseconds(200));
        throttled += stats.throttled;
        lost += stats.lost;
    }
    REQUIRE(throttled > 0);
    REQUIRE(lost > 0);
    CHECK(total("throttled") == throttled);
    CHECK(total("lost_samples") == lost);
    CHECK(cpu_sysfs(0, "throttled") == "0");
    CHECK(cpu_sysfs(0, "lost_samples") == "0");
    const std::string online = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/online";
    write_file(online, "0");
    CHECK_FALSE(path_exists("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/archpmu"));
    write_file(online, "1");
    CHECK(total("throttled") == throttled);
    CHECK(total("lost_samples") == lost);
}

TEST_CASE("who names every holder exactly", "[netlink][who]")
{
    LoadedModule module(kExact);
    Session mine(events("branches@gp0,instructions"), on_cpus({0}));
    archpmu::Device dev;
    // On the last CPU: another agent counts with GP 3, and GP 1 holds what
    // perf leaves when it is done (EN clear, INT set), which is free.
    const unsigned last = online_cpus().back();
    model_write_msr(dev, last, 0x186 + 3, 0x4300c4);
    model_write_msr(dev, last, 0x186 + 1, 0x1300c4);
    REQUIRE(load_hog(2) == 0);
    const auto r = run_tool("who --json");
    model_write_msr(dev, last, 0x186 + 3, 0);
    CHECK(unload_hog() == 0);
    REQUIRE(r.status == 0);
    const json doc = json::parse(r.out);
    std::map<std::string, std::string> holder;  // "cpu/counter" -> holder
    for (const auto& c : doc.at("counters")) {
        const std::string key =
            std::to_string(c.at("cpu").get<int>()) + "/" + c.at("counter").get<std::string>();
        holder[key] = c.at("holder");
        if (c.at("holder") == "session") {
            CHECK(c.at("pid") == ::getpid());
            CHECK(c.at("comm") == "archpmu_itest");
        }
    }
    for (unsigned cpu : online_cpus()) {
        const std::string p = std::to_string(cpu) + "/";
        CHECK(holder[p + "gp0"] == (cpu == 0 ? "session" : "free"));
        CHECK(holder[p + "gp1"] == "free");
        CHECK(holder[p + "gp2"] == "perf");
        CHECK(holder[p + "gp3"] == (cpu == last ? "agent" : "free"));
        CHECK(holder[p + "fixed0"] == (cpu == 0 ? "session" : "free"));
        CHECK(holder[p + "fixed1"] == "free");
        CHECK(holder[p + "fixed2"] == "free");
    }
    CHECK(holder.size() == online_cpus().size() * 7);
    REQUIRE(doc.at("sessions").size() == 1);
    CHECK(doc.at("sessions")[0].at("pid") == ::getpid());
}

TEST_CASE("a refused stat names the holder of the counters", "[netlink][who]")
{
    LoadedModule module(kExact);
    Session mine(events("branches@gp0"), on_cpus({0}));
    const auto r = run_tool("stat -e branches@gp0 -C 0 -- true");
    CHECK(r.status != 0);
    CHECK_THAT(r.out, Catch::Contains("on CPU 0 are held: gp0 by the archpmu session of pid " +
                                      std::to_string(::getpid()) + " (archpmu_itest)"));
}

TEST_CASE("regs shows exactly what was written, decoded, on every CPU", "[netlink][regs]")
{
    LoadedModule module(kExact);
    archpmu::Device dev;
    for (unsigned cpu : online_cpus())
        model_write_msr(dev, cpu, 0x186 + 1, 0x0013'00c4ULL + (uint64_t(cpu) << 24));
    model_write_msr(dev, 0, 0x38d, 0x0b0);  // fixed 1: OS, USR and PMI
    const auto r = run_tool("regs --json");
    REQUIRE(r.status == 0);
    const json doc = json::parse(r.out);
    REQUIRE(doc.size() == online_cpus().size());
    for (const auto& c : doc) {
        const auto cpu = c.at("cpu").get<uint64_t>();
        std::map<std::string, json> regs;
        for (const auto& reg : c.at("registers"))
            regs[reg.at("name")] = reg;
        REQUIRE(regs.count("IA32_PERFEVTSEL1"));
        const json& sel = regs["IA32_PERFEVTSEL1"];
        CHECK(sel.at("value") == 0x0013'00c4ULL + (cpu << 24));
        CHECK(sel.at("fields").at("event") == 0xc4);
        CHECK(sel.at("fields").at("umask") == 0);
        CHECK(sel.at("fields").at("usr") == 1);
        CHECK(sel.at("fields").at("os") == 1);
        CHECK(sel.at("fields").at("int") == 1);
        CHECK(sel.at("fields").contains("en") == false);
        if (cpu == 0)
            CHECK(sel.at("fields").contains("cmask") == false);
        else
            CHECK(sel.at("fields").at("cmask") == cpu);
        CHECK(regs["IA32_PERFEVTSEL0"].at("value") == 0);
        for (const char* name :
             {"IA32_PMC0", "IA32_PMC3", "IA32_FIXED_CTR2", "IA32_PERF_GLOBAL_CTRL",
              "IA32_PERF_GLOBAL_STATUS", "IA32_PERF_GLOBAL_INUSE"})
            CHECK(regs.count(name) == 1);
        CHECK(regs.count("IA32_PMC4") == 0);
        const json& fixed = regs["IA32_FIXED_CTR_CTRL"];
        CHECK(fixed.at("value") == (cpu == 0 ? 0xb0 : 0));
        if (cpu == 0)
            CHECK(fixed.at("fields") ==
                  json::parse(R"({"fixed1.os":1,"fixed1.usr":1,"fixed1.pmi":1})"));
    }
    // The table prints one-bit fields by name, wider ones with their value.
    const unsigned last = online_cpus().back();
    const auto table = run_tool("regs -C " + std::to_string(last));
    REQUIRE(table.status == 0);
    CHECK_THAT(table.out, Catch::Contains("IA32_PERFEVTSEL1         0x0187  0x" +
                                          std::string(last < 16 ? "000000000" : "00000000") +
                                          (last ? std::to_string(last) : "") + "1300c4"));
    CHECK_THAT(table.out,
               Catch::Contains("event=0xc4 umask=0 usr os int" +
                               (last ? " cmask=" + archpmu::hex_string(last) : std::string())));
    // Read-only: reading changed nothing.
    CHECK(model_read_msr(dev, 0, 0x187) == 0x0013'00c4ULL);
}

TEST_CASE("10,000 malformed netlink requests get errors and leave no trace", "[netlink][fuzz]")
{
    LoadedModule module(kExact);
    Session held(events("instructions,branches"), on_cpus({}));
    std::unique_ptr<nl_sock, void (*)(nl_sock*)> sk(nl_socket_alloc(), nl_socket_free);
    REQUIRE(genl_connect(sk.get()) == 0);
    const int family = genl_ctrl_resolve(sk.get(), ARCHPMU_GENL_NAME);
    REQUIRE(family > 0);
    const int fd = nl_socket_get_fd(sk.get());
    timeval tv{2, 0};
    REQUIRE(::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0);
    std::mt19937 rng(20261122);
    std::map<int, int> errors;
    int dumps = 0;
    std::vector<uint8_t> buf(1 << 16), reply(1 << 17);
    for (int i = 0; i < 10000; i++) {
        const int kind = static_cast<int>(rng() % 6);
        auto* nlh = reinterpret_cast<nlmsghdr*>(buf.data());
        auto* gh = reinterpret_cast<genlmsghdr*>(buf.data() + NLMSG_HDRLEN);
        std::size_t len = NLMSG_HDRLEN + GENL_HDRLEN;
        std::fill(buf.begin(), buf.begin() + 64, 0);
        nlh->nlmsg_type = static_cast<uint16_t>(family);
        nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | (rng() % 4 ? NLM_F_DUMP : 0);
        nlh->nlmsg_seq = static_cast<uint32_t>(i + 1);
        gh->cmd = rng() % 2 ? ARCHPMU_GENL_CMD_GET_PMU_USAGE : ARCHPMU_GENL_CMD_GET_SESSIONS;
        gh->version = ARCHPMU_GENL_VERSION;
        if (kind == 0) {  // an unknown or reply-only command
            gh->cmd = static_cast<uint8_t>(ARCHPMU_GENL_CMD_SESSION + rng() % 250);
        } else if (kind == 1) {  // reserved header bits
            gh->reserved = static_cast<uint16_t>(1 + rng() % 0xffff);
        } else {  // attributes: unknown, mistyped, truncated or oversized
            const int nattrs = 1 + static_cast<int>(rng() % 4);
            for (int a = 0; a < nattrs && len + 8 < buf.size(); a++) {
                auto* attr = reinterpret_cast<nlattr*>(buf.data() + len);
                std::size_t payload = kind == 5 ? 1000 + rng() % 6000 : rng() % 12;
                payload = std::min(payload, buf.size() - len - NLA_HDRLEN);
                attr->nla_type = static_cast<uint16_t>(rng() % (ARCHPMU_GENL_A_MAX + 8));
                if (kind == 3)
                    attr->nla_type = ARCHPMU_GENL_A_CPU;  // the one attribute, mistyped
                attr->nla_len = static_cast<uint16_t>(NLA_HDRLEN + payload);
                for (std::size_t b = 0; b < payload; b++)
                    buf[len + NLA_HDRLEN + b] = static_cast<uint8_t>(rng());
                if (kind == 4)  // truncated: says more than there is
                    attr->nla_len = static_cast<uint16_t>(attr->nla_len + 4 + rng() % 64);
                len += NLA_ALIGN(NLA_HDRLEN + payload);
            }
        }
        nlh->nlmsg_len = static_cast<uint32_t>(len);
        REQUIRE(::send(fd, buf.data(), len, 0) == static_cast<ssize_t>(len));
        // Read until the request's error ack (or the end of its dump and its ack).
        bool done = false;
        while (!done) {
            ssize_t n = ::recv(fd, reply.data(), reply.size(), 0);
            REQUIRE(n > 0);
            for (auto* h = reinterpret_cast<nlmsghdr*>(reply.data());
                 NLMSG_OK(h, static_cast<unsigned>(n)); h = NLMSG_NEXT(h, n)) {
                if (h->nlmsg_type == NLMSG_ERROR) {
                    const int err = -static_cast<nlmsgerr*>(NLMSG_DATA(h))->error;
                    errors[err]++;
                    done = true;
                } else if (h->nlmsg_type == NLMSG_DONE) {
                    dumps++;
                    if (!(nlh->nlmsg_flags & NLM_F_ACK))
                        done = true;
                }
            }
        }
    }
    // Every refusal is one the policy or the commands give.
    const std::set<int> allowed{0, EINVAL, EOPNOTSUPP, ERANGE, ENXIO, ENODEV, EMSGSIZE};
    int refused = 0;
    for (const auto& [err, n] : errors) {
        INFO("errno " << err << " x " << n);
        CHECK(allowed.count(err) == 1);
        if (err)
            refused += n;
    }
    CHECK(refused > 7000);
    CHECK(errors[EINVAL] > 1000);
    CHECK(errors[EOPNOTSUPP] > 500);
    // The family still answers as before.
    CHECK(archpmu::dump_sessions().size() == 1);
    report_figure("netlink_malformed_requests", 10000);
}

TEST_CASE("an unprivileged user may dump but sees no other user's process, and cannot join",
          "[netlink][privilege]")
{
    LoadedModule module(kExact);
    Session mine(events("branches@gp0"), on_cpus({0}));
    const int code = in_child([] {
        if (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0)
            return 10;
        try {
            archpmu::Monitor m;
            return 11;  // joined: it must not
        } catch (const archpmu::Error& e) {
            if (e.code().value() != EPERM)
                return 12;
        }
        const auto sessions = archpmu::dump_sessions();
        if (sessions.size() != 1 || sessions[0].pid || !sessions[0].comm.empty() ||
            sessions[0].uid != 0u || sessions[0].claims.size() != 1)
            return 13;
        for (const auto& u : archpmu::dump_pmu_usage(0)) {
            if (*u.counter == 0 && (u.holder != ARCHPMU_HOLDER_SESSION || u.pid || !u.comm.empty()))
                return 14;
            // Without CAP_PERFMON no register is read and perf is not probed.
            if (*u.counter != 0 && (u.holder != ARCHPMU_HOLDER_UNKNOWN || u.msr || u.msr_value))
                return 15;
        }
        return 0;
    });
    CHECK(code == 0);
    // Its own sessions it would see in full: root's view of its own.
    const auto sessions = archpmu::dump_sessions();
    REQUIRE(sessions.size() == 1);
    CHECK(sessions[0].pid == static_cast<uint32_t>(::getpid()));
    CHECK(sessions[0].comm == "archpmu_itest");
}

TEST_CASE("ARCHPMU_IOC_REGS refuses each bad input with its errno", "[netlink][regs][errors]")
{
    LoadedModule module(kExact);
    archpmu::UniqueFd fd(::open(kDev, O_RDWR | O_CLOEXEC));
    REQUIRE(fd.get() >= 0);
    std::vector<archpmu_reg> regs(ARCHPMU_REGS_MAX);
    auto call = [&](archpmu_regs_read cmd) {
        return ::ioctl(fd.get(), ARCHPMU_IOC_REGS, &cmd) == 0 ? 0 : errno;
    };
    archpmu_regs_read good{};
    good.size = sizeof(good);
    good.nr_regs = ARCHPMU_REGS_MAX;
    good.regs = reinterpret_cast<uintptr_t>(regs.data());
    CHECK(call(good) == 0);
    auto bad = good;
    bad.flags = 1;
    CHECK(call(bad) == EINVAL);
    bad = good;
    bad.__reserved0 = 1;
    CHECK(call(bad) == EINVAL);
    bad = good;
    bad.cpu = 1U << 31;
    CHECK(call(bad) == ENXIO);
    bad = good;
    bad.regs = 8;  // unmapped
    CHECK(call(bad) == EFAULT);
    bad = good;
    bad.nr_regs = 1;
    CHECK(::ioctl(fd.get(), ARCHPMU_IOC_REGS, &bad) != 0);
    CHECK(errno == ENOSPC);
    CHECK(bad.nr_regs == 4 * 2 + 3 + 4);  // v4, 4 GP, 3 fixed: evtsel+pmc, fixed, 4 globals
    CHECK(in_child([&fd, &good] {
              if (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0)
                  return 10;
              auto cmd = good;
              return ::ioctl(fd.get(), ARCHPMU_IOC_REGS, &cmd) != 0 && errno == EPERM ? 0 : 11;
          }) == 0);
}
