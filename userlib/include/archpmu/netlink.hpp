// SPDX-License-Identifier: MIT
// archpmu: the module's generic netlink family (uapi/archpmu_netlink.h) through
// libnl-genl-3: events as they happen, and who holds the PMU now.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace archpmu {

// One event of a session, as the module reports it.
struct NoticeEvent {
    std::uint64_t config = 0;
    std::uint64_t period = 0;  // 0: counting only; Hz with freq
    bool freq = false;
};

// One CPU of a session: the counter each event got there.
struct NoticeClaim {
    std::uint32_t cpu = 0;
    bool offline = false;
    std::vector<std::uint32_t> counters;  // ARCHPMU_COUNTER_* encoding, one per event
};

// One message of the family: an event from the "events" group, a session
// (GET_SESSIONS) or a counter (GET_PMU_USAGE). Which fields are set depends on
// cmd, as uapi/archpmu_netlink.h lists them.
struct Notice {
    std::uint8_t cmd = 0;  // ARCHPMU_GENL_CMD_* or ARCHPMU_GENL_EVENT_*; 0: events were lost
    std::optional<std::uint64_t> session_id;
    std::optional<std::uint32_t> pid, uid, scope, cpu, counter, event_index, error, holder,
        holder_pid, msr;
    std::optional<std::uint64_t> holder_session_id, msr_value, expected, counters, count, total;
    std::string comm, holder_comm;
    bool running = false, sampling = false;
    std::vector<NoticeEvent> events;
    std::vector<NoticeClaim> claims;
};

// "session-open", "refused", ... ("overrun" for cmd 0).
std::string_view notice_name(std::uint8_t cmd);
// "session", "perf", "agent", "free", "unknown".
std::string_view holder_name(std::uint32_t holder);
// A comm as a line may show it: control characters (any process may put them in
// its name) become '?'.
std::string printable(const std::string& text);

// A member of the "events" group. Throws archpmu::Error: ENOENT when the module
// is not loaded, EPERM without CAP_SYS_ADMIN.
class Monitor {
public:
    Monitor();
    Monitor(const Monitor&) = delete;
    Monitor& operator=(const Monitor&) = delete;
    Monitor(Monitor&& other) noexcept;
    Monitor& operator=(Monitor&& other) noexcept;
    ~Monitor();

    // Readable (poll) when events are waiting.
    [[nodiscard]] int fd() const;
    // The family's id when it joined: another id (or none) means the module was
    // reloaded (or unloaded) since, and this monitor hears nothing any more.
    [[nodiscard]] int family_id() const;
    // Every event waiting now (none if none); never blocks. When the socket's
    // buffer overran, a Notice with cmd 0 says so, in its place.
    std::vector<Notice> receive();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// The family's id now, or nothing when the module is not loaded.
std::optional<int> family_id();

// Every live session (ARCHPMU_GENL_CMD_GET_SESSIONS).
std::vector<Notice> dump_sessions();
// Every counter of every CPU (or of `cpu`) and its holder (GET_PMU_USAGE).
std::vector<Notice> dump_pmu_usage(std::optional<std::uint32_t> cpu = std::nullopt);

}  // namespace archpmu
