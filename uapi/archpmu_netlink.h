/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * archpmu: the generic netlink family "archpmu". Events as they happen go to
 * the multicast group "events"; two dumps say who holds the PMU now.
 *
 * Every message carries ARCHPMU_GENL_A_VERSION. Attributes are only ever
 * added, never renumbered; a listener skips those it does not know.
 *
 * Privilege:
 *   - Joining "events" needs CAP_SYS_ADMIN (the only capability, besides
 *     CAP_NET_ADMIN, that generic netlink checks at a group join). Its
 *     messages name every session's process: pid (initial PID namespace),
 *     comm and uid.
 *   - The dumps are open to every user. A caller without CAP_PERFMON (or
 *     CAP_SYS_ADMIN; both the socket's opener and the sender need it) sees
 *     pid and comm only of its own user's sessions; other users' sessions
 *     show their uid and nothing of their process. Its GET_PMU_USAGE reads
 *     no register and probes nothing: counters no session holds are
 *     "unknown". Pids are in the caller's PID namespace (0 if not visible
 *     there).
 *   - The family exists in the initial network namespace only.
 *
 * Requests are validated strictly: unknown attributes, wrong types or
 * lengths, reserved header bits, and attributes a command does not take
 * are refused with EINVAL (and an extended ack naming the attribute);
 * commands that are not requests with EOPNOTSUPP.
 */
#ifndef _UAPI_LINUX_ARCHPMU_NETLINK_H
#define _UAPI_LINUX_ARCHPMU_NETLINK_H

#define ARCHPMU_GENL_NAME		"archpmu"
#define ARCHPMU_GENL_VERSION		1
#define ARCHPMU_GENL_EVENTS_GROUP	"events"

enum archpmu_genl_cmd {
	ARCHPMU_GENL_CMD_UNSPEC,
	/*
	 * Dump (NLM_F_DUMP): ARCHPMU_GENL_CMD_SESSION messages, every live
	 * session in ascending SESSION_ID. A session whose CLAIMs do not fit in
	 * one message goes on in the next ones, which repeat its identity and
	 * carry only further CLAIMs. Takes no attribute.
	 */
	ARCHPMU_GENL_CMD_GET_SESSIONS,
	/*
	 * Dump: one ARCHPMU_GENL_CMD_COUNTER per counter per online CPU with an
	 * architectural PMU, in CPU order, GP counters before fixed ones.
	 * Optional ARCHPMU_GENL_A_CPU: that CPU only (ENXIO beyond nr_cpu_ids,
	 * ENODEV offline or without a PMU; these two come without an extended
	 * ack). Without CAP_PERFMON no register is read: counters no session
	 * holds are ARCHPMU_HOLDER_UNKNOWN.
	 */
	ARCHPMU_GENL_CMD_GET_PMU_USAGE,
	/*
	 * A session: SESSION_ID, PID, COMM, UID, SCOPE, RUNNING and SAMPLING
	 * flags, one EVENT per event and one CLAIM per CPU.
	 */
	ARCHPMU_GENL_CMD_SESSION,
	/*
	 * A counter: CPU, COUNTER, HOLDER; for ARCHPMU_HOLDER_SESSION the
	 * session's SESSION_ID, UID, PID and COMM (as privilege allows); for
	 * ARCHPMU_HOLDER_AGENT the MSR and MSR_VALUE that showed it.
	 */
	ARCHPMU_GENL_CMD_COUNTER,

	/* Events on "events". Each names its session as CMD_SESSION does. */
	ARCHPMU_GENL_EVENT_SESSION_OPEN,	/* as CMD_SESSION */
	ARCHPMU_GENL_EVENT_SESSION_CLOSE,	/* SESSION_ID, PID, COMM, UID */
	ARCHPMU_GENL_EVENT_SESSION_START,	/* SESSION_ID, PID, COMM, UID */
	ARCHPMU_GENL_EVENT_SESSION_STOP,	/* SESSION_ID, PID, COMM, UID */
	/*
	 * A COUNT_OPEN refused with EBUSY: the asker's PID, COMM, UID (no
	 * SESSION_ID: it never existed); CPU, ERRNO, EVENT_INDEX (unless the
	 * refusal is not about one event); HOLDER, and
	 *   for a session: HOLDER_SESSION_ID, HOLDER_PID, HOLDER_COMM;
	 *   for perf: COUNTERS (the GP counters perf holds that the event could
	 *     use, as a bit mask; all of them when perf holds every one), and
	 *     COUNTER for a pinned event;
	 *   for an agent: COUNTER (EN in its PERFEVTSEL, or a ring bit in its
	 *     FIXED_CTR_CTRL nibble), with the MSR and MSR_VALUE that showed it.
	 */
	ARCHPMU_GENL_EVENT_REFUSED,
	/*
	 * Another agent rewrote a control register of a counter a session holds
	 * (seen at a fold or a read): session, CPU, COUNTER, MSR, MSR_VALUE (what
	 * was found) and EXPECTED (what the session programmed), both masked to
	 * the session's bits. Once per counter until the session programs it
	 * again (a CPU coming back online, a resume).
	 */
	ARCHPMU_GENL_EVENT_FOREIGN_USE,
	/* A CPU of a session went offline / came back (ERRNO: not resumed). */
	ARCHPMU_GENL_EVENT_CPU_OFFLINE,
	ARCHPMU_GENL_EVENT_CPU_ONLINE,
	/*
	 * Sampling, at most one of each per session and CPU every 100 ms:
	 * session, CPU, COUNT (since the last such event) and TOTAL.
	 */
	ARCHPMU_GENL_EVENT_THROTTLE,
	ARCHPMU_GENL_EVENT_UNTHROTTLE,
	ARCHPMU_GENL_EVENT_LOST,
	ARCHPMU_GENL_EVENT_UNLOAD,		/* the module is going away */
	__ARCHPMU_GENL_CMD_MAX,
};

#define ARCHPMU_GENL_CMD_MAX (__ARCHPMU_GENL_CMD_MAX - 1)

enum archpmu_genl_attr {
	ARCHPMU_GENL_A_UNSPEC,
	ARCHPMU_GENL_A_PAD,
	ARCHPMU_GENL_A_VERSION,		/* u32: ARCHPMU_GENL_VERSION */
	ARCHPMU_GENL_A_SESSION_ID,	/* u64: unique until the module unloads */
	ARCHPMU_GENL_A_PID,		/* u32: the session's (or asker's) process */
	ARCHPMU_GENL_A_COMM,		/* string */
	ARCHPMU_GENL_A_UID,		/* u32 */
	ARCHPMU_GENL_A_SCOPE,		/* u32: ARCHPMU_GENL_SCOPE_* */
	ARCHPMU_GENL_A_RUNNING,		/* flag: started */
	ARCHPMU_GENL_A_SAMPLING,	/* flag: a sampling session */
	ARCHPMU_GENL_A_EVENT,		/* nested, one per event: EVENT_CONFIG, PERIOD */
	ARCHPMU_GENL_A_EVENT_CONFIG,	/* u64: the IA32_PERFEVTSELx image asked for */
	ARCHPMU_GENL_A_PERIOD,		/* u64: events (or Hz with FREQ) per sample */
	ARCHPMU_GENL_A_FREQ,		/* flag */
	ARCHPMU_GENL_A_CLAIM,		/* nested, per CPU: CPU, OFFLINE, COUNTER per event */
	ARCHPMU_GENL_A_CPU,		/* u32 */
	ARCHPMU_GENL_A_OFFLINE,		/* flag: the CPU is offline, counts kept */
	ARCHPMU_GENL_A_COUNTER,		/* u32: ARCHPMU_COUNTER_* encoding; in a CLAIM,
					 * ARCHPMU_NO_COUNTER for an event multiplexed
					 * off the PMU
					 */
	ARCHPMU_GENL_A_EVENT_INDEX,	/* u32 */
	ARCHPMU_GENL_A_ERRNO,		/* u32: a positive errno */
	ARCHPMU_GENL_A_HOLDER,		/* u32: ARCHPMU_HOLDER_* (uapi/archpmu.h) */
	ARCHPMU_GENL_A_HOLDER_SESSION_ID, /* u64 */
	ARCHPMU_GENL_A_HOLDER_PID,	/* u32 */
	ARCHPMU_GENL_A_HOLDER_COMM,	/* string */
	ARCHPMU_GENL_A_MSR,		/* u32: an MSR address */
	ARCHPMU_GENL_A_MSR_VALUE,	/* u64 */
	ARCHPMU_GENL_A_EXPECTED,	/* u64 */
	ARCHPMU_GENL_A_COUNTERS,	/* u64: busy-mask bits (GP i is bit i) */
	ARCHPMU_GENL_A_COUNT,		/* u64 */
	ARCHPMU_GENL_A_TOTAL,		/* u64 */
	__ARCHPMU_GENL_A_MAX,
};

#define ARCHPMU_GENL_A_MAX (__ARCHPMU_GENL_A_MAX - 1)

#define ARCHPMU_GENL_SCOPE_CPU	1	/* counts whatever runs on its CPUs */

#endif /* _UAPI_LINUX_ARCHPMU_NETLINK_H */
