// SPDX-License-Identifier: MIT
#include "archpmu/netlink.hpp"

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include <cerrno>
#include <nlohmann/json.hpp>

#include "archpmu.h"
#include "archpmu/error.hpp"
#include "archpmu/events.hpp"
#include "archpmu/regs.hpp"
#include "archpmu_netlink.h"

namespace archpmu {
namespace {

struct SockDeleter {
    void operator()(nl_sock* sk) const { nl_socket_free(sk); }
};
using Sock = std::unique_ptr<nl_sock, SockDeleter>;

struct MsgDeleter {
    void operator()(nl_msg* m) const { nlmsg_free(m); }
};

// libnl's error codes lose the errno; the family's own refusals keep it (on_error).
Error nl_error(int nlerr, const std::string& what)
{
    const int err = nlerr == -NLE_PERM ? EPERM : nlerr == -NLE_NOMEM ? ENOMEM : EIO;
    return {err, what + ": " + nl_geterror(nlerr)};
}

struct Connection {
    Sock sock;
    int family = 0;
};

// A listener's buffer: a burst of throttle events from many CPUs must not overrun it
// (the kernel caps it at net.core.rmem_max).
constexpr int kEventBufferBytes = 4 << 20;

Connection connect_family(int rcvbuf = 0)
{
    Connection c;
    c.sock.reset(nl_socket_alloc());
    if (!c.sock)
        throw Error(ENOMEM, "cannot allocate a netlink socket");
    int ret = genl_connect(c.sock.get());
    if (ret == 0 && rcvbuf)
        ret = nl_socket_set_buffer_size(c.sock.get(), rcvbuf, 0);
    if (ret < 0)
        throw nl_error(ret, "cannot open a generic netlink socket");
    c.family = genl_ctrl_resolve(c.sock.get(), ARCHPMU_GENL_NAME);
    if (c.family < 0)
        throw Error(ENOENT, "the generic netlink family '" ARCHPMU_GENL_NAME
                            "' does not exist: is the archpmu module loaded?");
    return c;
}

nla_policy attr_policy(int type)
{
    nla_policy p{};
    p.type = static_cast<std::uint16_t>(type);
    return p;
}

struct Policy {
    nla_policy attrs[ARCHPMU_GENL_A_MAX + 1]{};
    Policy()
    {
        for (int a : {ARCHPMU_GENL_A_VERSION, ARCHPMU_GENL_A_PID, ARCHPMU_GENL_A_UID,
                      ARCHPMU_GENL_A_SCOPE, ARCHPMU_GENL_A_CPU, ARCHPMU_GENL_A_COUNTER,
                      ARCHPMU_GENL_A_EVENT_INDEX, ARCHPMU_GENL_A_ERRNO, ARCHPMU_GENL_A_HOLDER,
                      ARCHPMU_GENL_A_HOLDER_PID, ARCHPMU_GENL_A_MSR})
            attrs[a] = attr_policy(NLA_U32);
        for (int a :
             {ARCHPMU_GENL_A_SESSION_ID, ARCHPMU_GENL_A_EVENT_CONFIG, ARCHPMU_GENL_A_PERIOD,
              ARCHPMU_GENL_A_HOLDER_SESSION_ID, ARCHPMU_GENL_A_MSR_VALUE, ARCHPMU_GENL_A_EXPECTED,
              ARCHPMU_GENL_A_COUNTERS, ARCHPMU_GENL_A_COUNT, ARCHPMU_GENL_A_TOTAL})
            attrs[a] = attr_policy(NLA_U64);
        for (int a : {ARCHPMU_GENL_A_RUNNING, ARCHPMU_GENL_A_SAMPLING, ARCHPMU_GENL_A_FREQ,
                      ARCHPMU_GENL_A_OFFLINE})
            attrs[a] = attr_policy(NLA_FLAG);
        for (int a : {ARCHPMU_GENL_A_COMM, ARCHPMU_GENL_A_HOLDER_COMM})
            attrs[a] = attr_policy(NLA_STRING);
        for (int a : {ARCHPMU_GENL_A_EVENT, ARCHPMU_GENL_A_CLAIM})
            attrs[a] = attr_policy(NLA_NESTED);
    }
};

Policy& policy()
{
    static Policy p;
    return p;
}

void parse_event(nlattr* nest, Notice& n)
{
    NoticeEvent ev;
    nlattr* a = nullptr;
    int rem = 0;
    nla_for_each_nested(a, nest, rem)
    {
        switch (nla_type(a)) {
            case ARCHPMU_GENL_A_EVENT_CONFIG:
                ev.config = nla_get_u64(a);
                break;
            case ARCHPMU_GENL_A_PERIOD:
                ev.period = nla_get_u64(a);
                break;
            case ARCHPMU_GENL_A_FREQ:
                ev.freq = true;
                break;
            default:
                break;
        }
    }
    n.events.push_back(ev);
}

void parse_claim(nlattr* nest, Notice& n)
{
    NoticeClaim claim;
    nlattr* a = nullptr;
    int rem = 0;
    nla_for_each_nested(a, nest, rem)
    {
        switch (nla_type(a)) {
            case ARCHPMU_GENL_A_CPU:
                claim.cpu = nla_get_u32(a);
                break;
            case ARCHPMU_GENL_A_OFFLINE:
                claim.offline = true;
                break;
            case ARCHPMU_GENL_A_COUNTER:
                claim.counters.push_back(nla_get_u32(a));
                break;
            default:
                break;
        }
    }
    n.claims.push_back(std::move(claim));
}

std::optional<std::uint32_t> get_u32(nlattr* a)
{
    return a ? std::optional<std::uint32_t>(nla_get_u32(a)) : std::nullopt;
}

std::optional<std::uint64_t> get_u64(nlattr* a)
{
    return a ? std::optional<std::uint64_t>(nla_get_u64(a)) : std::nullopt;
}

int parse_notice(nl_msg* msg, Notice& n)
{
    nlmsghdr* nlh = nlmsg_hdr(msg);
    auto* gh = static_cast<genlmsghdr*>(nlmsg_data(nlh));
    nlattr* tb[ARCHPMU_GENL_A_MAX + 1] = {};
    const int ret = genlmsg_parse(nlh, 0, tb, ARCHPMU_GENL_A_MAX, policy().attrs);
    if (ret < 0)
        return ret;
    n.cmd = gh->cmd;
    n.session_id = get_u64(tb[ARCHPMU_GENL_A_SESSION_ID]);
    n.pid = get_u32(tb[ARCHPMU_GENL_A_PID]);
    n.uid = get_u32(tb[ARCHPMU_GENL_A_UID]);
    n.scope = get_u32(tb[ARCHPMU_GENL_A_SCOPE]);
    n.cpu = get_u32(tb[ARCHPMU_GENL_A_CPU]);
    n.counter = get_u32(tb[ARCHPMU_GENL_A_COUNTER]);
    n.event_index = get_u32(tb[ARCHPMU_GENL_A_EVENT_INDEX]);
    n.error = get_u32(tb[ARCHPMU_GENL_A_ERRNO]);
    n.holder = get_u32(tb[ARCHPMU_GENL_A_HOLDER]);
    n.holder_pid = get_u32(tb[ARCHPMU_GENL_A_HOLDER_PID]);
    n.msr = get_u32(tb[ARCHPMU_GENL_A_MSR]);
    n.holder_session_id = get_u64(tb[ARCHPMU_GENL_A_HOLDER_SESSION_ID]);
    n.msr_value = get_u64(tb[ARCHPMU_GENL_A_MSR_VALUE]);
    n.expected = get_u64(tb[ARCHPMU_GENL_A_EXPECTED]);
    n.counters = get_u64(tb[ARCHPMU_GENL_A_COUNTERS]);
    n.count = get_u64(tb[ARCHPMU_GENL_A_COUNT]);
    n.total = get_u64(tb[ARCHPMU_GENL_A_TOTAL]);
    if (tb[ARCHPMU_GENL_A_COMM])
        n.comm = nla_get_string(tb[ARCHPMU_GENL_A_COMM]);
    if (tb[ARCHPMU_GENL_A_HOLDER_COMM])
        n.holder_comm = nla_get_string(tb[ARCHPMU_GENL_A_HOLDER_COMM]);
    n.running = tb[ARCHPMU_GENL_A_RUNNING] != nullptr;
    n.sampling = tb[ARCHPMU_GENL_A_SAMPLING] != nullptr;
    nlattr* a = nullptr;
    int rem = 0;
    nlmsg_for_each_attr(a, nlh, GENL_HDRLEN, rem)
    {
        if (nla_type(a) == ARCHPMU_GENL_A_EVENT)
            parse_event(a, n);
        else if (nla_type(a) == ARCHPMU_GENL_A_CLAIM)
            parse_claim(a, n);
    }
    return 0;
}

struct Receiver {
    std::vector<Notice> notices;
    int error = 0;  // a positive errno from the family's error ack
};

int on_valid(nl_msg* msg, void* arg)
{
    auto* r = static_cast<Receiver*>(arg);
    Notice n;
    if (parse_notice(msg, n) == 0)
        r->notices.push_back(std::move(n));
    return NL_OK;
}

int on_error(sockaddr_nl* /*who*/, nlmsgerr* e, void* arg)
{
    static_cast<Receiver*>(arg)->error = -e->error;
    return NL_STOP;
}

std::vector<Notice> dump(std::uint8_t cmd, std::optional<std::uint32_t> cpu)
{
    Connection c = connect_family();
    std::unique_ptr<nl_msg, MsgDeleter> msg(nlmsg_alloc());
    if (!msg)
        throw Error(ENOMEM, "cannot allocate a netlink message");
    if (!genlmsg_put(msg.get(), NL_AUTO_PORT, NL_AUTO_SEQ, c.family, 0, NLM_F_DUMP, cmd,
                     ARCHPMU_GENL_VERSION) ||
        (cpu && nla_put_u32(msg.get(), ARCHPMU_GENL_A_CPU, *cpu) < 0))
        throw Error(ENOMEM, "cannot build a netlink request");
    Receiver r;
    nl_socket_modify_cb(c.sock.get(), NL_CB_VALID, NL_CB_CUSTOM, on_valid, &r);
    nl_socket_modify_err_cb(c.sock.get(), NL_CB_CUSTOM, on_error, &r);
    int ret = nl_send_auto(c.sock.get(), msg.get());
    if (ret >= 0)
        ret = nl_recvmsgs_default(c.sock.get());
    const std::string what =
        std::string("netlink ") +
        (cmd == ARCHPMU_GENL_CMD_GET_SESSIONS ? "GET_SESSIONS" : "GET_PMU_USAGE");
    if (r.error)
        throw Error(r.error, what + " was refused");
    if (ret < 0)
        throw nl_error(ret, what);
    return std::move(r.notices);
}

}  // namespace

std::string printable(const std::string& text)
{
    std::string out = text;
    for (char& c : out)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
            c = '?';
    return out;
}

std::string_view notice_name(std::uint8_t cmd)
{
    switch (cmd) {
        case ARCHPMU_GENL_CMD_SESSION:
            return "session";
        case ARCHPMU_GENL_CMD_COUNTER:
            return "counter";
        case ARCHPMU_GENL_EVENT_SESSION_OPEN:
            return "session-open";
        case ARCHPMU_GENL_EVENT_SESSION_CLOSE:
            return "session-close";
        case ARCHPMU_GENL_EVENT_SESSION_START:
            return "session-start";
        case ARCHPMU_GENL_EVENT_SESSION_STOP:
            return "session-stop";
        case ARCHPMU_GENL_EVENT_REFUSED:
            return "refused";
        case ARCHPMU_GENL_EVENT_FOREIGN_USE:
            return "foreign-use";
        case ARCHPMU_GENL_EVENT_CPU_OFFLINE:
            return "cpu-offline";
        case ARCHPMU_GENL_EVENT_CPU_ONLINE:
            return "cpu-online";
        case ARCHPMU_GENL_EVENT_THROTTLE:
            return "throttle";
        case ARCHPMU_GENL_EVENT_UNTHROTTLE:
            return "unthrottle";
        case ARCHPMU_GENL_EVENT_LOST:
            return "lost";
        case ARCHPMU_GENL_EVENT_UNLOAD:
            return "unload";
        case 0:
            return "overrun";
        default:
            return "unknown";
    }
}

std::string_view holder_name(std::uint32_t holder)
{
    switch (holder) {
        case ARCHPMU_HOLDER_SESSION:
            return "session";
        case ARCHPMU_HOLDER_PERF:
            return "perf";
        case ARCHPMU_HOLDER_AGENT:
            return "agent";
        case ARCHPMU_HOLDER_NONE:
            return "free";
        default:
            return "unknown";
    }
}

struct Monitor::Impl {
    Connection conn;
    Receiver receiver;
};

Monitor::Monitor() : impl_(std::make_unique<Impl>())
{
    impl_->conn = connect_family(kEventBufferBytes);
    nl_sock* sk = impl_->conn.sock.get();
    const int group = genl_ctrl_resolve_grp(sk, ARCHPMU_GENL_NAME, ARCHPMU_GENL_EVENTS_GROUP);
    if (group == -NLE_OBJ_NOTFOUND)  // the module is going away as we join
        throw Error(ENOENT, "the generic netlink family '" ARCHPMU_GENL_NAME "' is gone");
    if (group < 0)
        throw nl_error(group, "the archpmu family has no '" ARCHPMU_GENL_EVENTS_GROUP "' group");
    const int ret = nl_socket_add_membership(sk, group);
    if (ret == -NLE_PERM)
        throw Error(EPERM, "joining the archpmu events group needs CAP_SYS_ADMIN (run as root)");
    if (ret < 0)
        throw nl_error(ret, "cannot join the archpmu events group");
    nl_socket_disable_seq_check(sk);
    nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, on_valid, &impl_->receiver);
    if (nl_socket_set_nonblocking(sk) < 0)
        throw Error(errno, "cannot make the netlink socket non-blocking");
}

Monitor::Monitor(Monitor&&) noexcept = default;
Monitor& Monitor::operator=(Monitor&&) noexcept = default;
Monitor::~Monitor() = default;

int Monitor::family_id() const
{
    return impl_->conn.family;
}

std::optional<int> family_id()
{
    try {
        return connect_family().family;
    } catch (const Error&) {
        return std::nullopt;
    }
}

int Monitor::fd() const
{
    return nl_socket_get_fd(impl_->conn.sock.get());
}

std::vector<Notice> Monitor::receive()
{
    for (;;) {
        const int ret = nl_recvmsgs_default(impl_->conn.sock.get());
        if (ret == -NLE_AGAIN)
            break;
        if (ret >= 0)
            continue;
        if (ret == -NLE_NOMEM) {  // ENOBUFS: the kernel dropped events for us
            impl_->receiver.notices.push_back(Notice{});
            continue;
        }
        throw nl_error(ret, "reading archpmu events");
    }
    return std::exchange(impl_->receiver.notices, {});
}

std::vector<Notice> dump_sessions()
{
    // A session with more CLAIMs than one message holds goes on in the next
    // messages, which repeat its identity: one Notice per session.
    std::vector<Notice> sessions;
    for (auto& n : dump(ARCHPMU_GENL_CMD_GET_SESSIONS, std::nullopt)) {
        if (!sessions.empty() && sessions.back().session_id == n.session_id) {
            auto& claims = sessions.back().claims;
            claims.insert(claims.end(), n.claims.begin(), n.claims.end());
            continue;
        }
        sessions.push_back(std::move(n));
    }
    return sessions;
}

std::vector<Notice> dump_pmu_usage(std::optional<std::uint32_t> cpu)
{
    return dump(ARCHPMU_GENL_CMD_GET_PMU_USAGE, cpu);
}

}  // namespace archpmu
