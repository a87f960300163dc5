/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * archpmu: user-space ABI of /dev/archpmu.
 *
 * Every ioctl takes a pointer to a struct whose first member is
 * "__u32 size", the size of the struct as the caller compiled it. The
 * kernel accepts any size from the first published layout of that struct up
 * to one page: a shorter caller gets its known prefix back, a longer one must
 * leave the bytes the kernel does not know zeroed (else -E2BIG). Structs
 * only grow at the end; numbers are never reused; features are discovered
 * through archpmu_info.capabilities, never through the ABI version.
 *
 * Errors common to every command:
 *   -ENOTTY  unknown command
 *   -EFAULT  the argument pointer is bad
 *   -EINVAL  size below the first layout, unknown flags, non-zero reserved field
 *   -E2BIG   size above one page, or unknown trailing bytes not zero
 */
#ifndef _UAPI_LINUX_ARCHPMU_H
#define _UAPI_LINUX_ARCHPMU_H

#include <linux/ioctl.h>
#include <linux/types.h>

/*
 * 2: a session is always a file of its own (ABI 1 also had sessions of the
 * /dev/archpmu file). Until 1.0 a version may drop what an earlier one had.
 */
#define ARCHPMU_ABI_VERSION	2
#define ARCHPMU_DEVICE_PATH	"/dev/archpmu"

/* Limits of the ABI's bitmaps. */
#define ARCHPMU_MAX_GP_COUNTERS		32
#define ARCHPMU_MAX_FIXED_COUNTERS	16
#define ARCHPMU_NR_ARCH_EVENTS		13

/* archpmu_info.backend */
#define ARCHPMU_BACKEND_HW	1	/* the CPU's own PMU */
#define ARCHPMU_BACKEND_MODEL	2	/* the software model (module parameter backend=model) */

/* archpmu_info.capabilities: the commands and features this module has. */
#define ARCHPMU_CAP_INFO	0x1ULL	/* ARCHPMU_IOC_INFO */
#define ARCHPMU_CAP_CPU_INFO	0x2ULL	/* ARCHPMU_IOC_CPU_INFO */
/* 0x4ULL: reserved, ARCHPMU_CAP_MODEL_MSR of the test builds (archpmu_test.h) */
#define ARCHPMU_CAP_COUNT	0x8ULL	/* ARCHPMU_IOC_COUNT_* */
/* 0x10ULL: reserved, ARCHPMU_CAP_MODEL_INJECT of the test builds (archpmu_test.h) */
#define ARCHPMU_CAP_SESSION_FD	0x20ULL	/* ARCHPMU_COUNT_OPEN_FD: a session is its own file */
#define ARCHPMU_CAP_OPEN_START	0x40ULL	/* ARCHPMU_COUNT_OPEN_START */
#define ARCHPMU_CAP_SAMPLE	0x80ULL	/* archpmu_count_open.sample_events: sampling */
#define ARCHPMU_CAP_REGS	0x100ULL /* ARCHPMU_IOC_REGS */
#define ARCHPMU_CAP_NETLINK	0x200ULL /* the generic netlink family (archpmu_netlink.h) */
#define ARCHPMU_CAP_TASK	0x400ULL /* ARCHPMU_COUNT_OPEN_TASK */
#define ARCHPMU_CAP_ENABLE_ON_EXEC 0x800ULL /* ARCHPMU_TASK_ENABLE_ON_EXEC */
#define ARCHPMU_CAP_MULTIPLEX	0x1000ULL /* ARCHPMU_COUNT_OPEN_MULTIPLEX, event groups */
#define ARCHPMU_CAP_COUNTER_MASK 0x2000ULL /* ARCHPMU_EVENT_GP_MASK, cpu_info.cpuid_01_eax */
#define ARCHPMU_CAP_UNPRIVILEGED 0x4000ULL /* archpmu_info.privilege (without CAP_PERFMON) */
#define ARCHPMU_CAP_TASK_SAMPLE	0x8000ULL /* sampling with ARCHPMU_COUNT_OPEN_TASK */
#define ARCHPMU_CAP_CALLCHAIN	0x10000ULL /* ARCHPMU_SAMPLE_CALLCHAIN */
#define ARCHPMU_CAP_USER_STACK	0x20000ULL /* ARCHPMU_SAMPLE_USER_STACK, stack_user */
#define ARCHPMU_CAP_PERF_METRICS 0x40000ULL /* top-down metric events (see below) */
#define ARCHPMU_CAP_CORE_TYPE	0x80000ULL /* ARCHPMU_EVENT_CORE_TYPE: one core type's event */
#define ARCHPMU_CAP_CORE_TYPE_SAMPLE 0x100000ULL /* ... in sampling sessions too */
#define ARCHPMU_CAP_READ_SUM	0x200000ULL /* ARCHPMU_COUNT_READ_SUM */

/*
 * Architectural events: bit n of archpmu_cpu_info.events_mask, and of
 * CPUID.0AH:EBX (inverted there) and CPUID.(23H,3):EAX.
 */
#define ARCHPMU_EVENT_CYCLES		0	/* 3CH/00H, fixed counter 1 */
#define ARCHPMU_EVENT_INSTRUCTIONS	1	/* C0H/00H, fixed counter 0 */
#define ARCHPMU_EVENT_REF_CYCLES	2	/* 3CH/01H */
#define ARCHPMU_EVENT_LLC_REFERENCES	3	/* 2EH/4FH */
#define ARCHPMU_EVENT_LLC_MISSES	4	/* 2EH/41H */
#define ARCHPMU_EVENT_BRANCHES		5	/* C4H/00H */
#define ARCHPMU_EVENT_BRANCH_MISSES	6	/* C5H/00H */
#define ARCHPMU_EVENT_TOPDOWN_SLOTS	7	/* A4H/01H, fixed counter 3 */
#define ARCHPMU_EVENT_TOPDOWN_BE_BOUND	8	/* A4H/02H */
#define ARCHPMU_EVENT_TOPDOWN_BAD_SPEC	9	/* 73H/00H */
#define ARCHPMU_EVENT_TOPDOWN_FE_BOUND	10	/* 9CH/01H */
#define ARCHPMU_EVENT_TOPDOWN_RETIRING	11	/* C2H/02H */
#define ARCHPMU_EVENT_LBR_INSERTS	12	/* E4H/01H */

/*
 * The architectural events, written out once for the module and for user
 * space, in bit order: X(bit, name, event select, umask). The name is the
 * one sysfs and `archpmu info` print.
 */
#define ARCHPMU_ARCH_EVENT_TABLE(X)						\
	X(ARCHPMU_EVENT_CYCLES,		  "cycles",	      0x3c, 0x00)	\
	X(ARCHPMU_EVENT_INSTRUCTIONS,	  "instructions",     0xc0, 0x00)	\
	X(ARCHPMU_EVENT_REF_CYCLES,	  "ref-cycles",	      0x3c, 0x01)	\
	X(ARCHPMU_EVENT_LLC_REFERENCES,	  "cache-references", 0x2e, 0x4f)	\
	X(ARCHPMU_EVENT_LLC_MISSES,	  "cache-misses",     0x2e, 0x41)	\
	X(ARCHPMU_EVENT_BRANCHES,	  "branches",	      0xc4, 0x00)	\
	X(ARCHPMU_EVENT_BRANCH_MISSES,	  "branch-misses",    0xc5, 0x00)	\
	X(ARCHPMU_EVENT_TOPDOWN_SLOTS,	  "slots",	      0xa4, 0x01)	\
	X(ARCHPMU_EVENT_TOPDOWN_BE_BOUND, "topdown-be-bound", 0xa4, 0x02)	\
	X(ARCHPMU_EVENT_TOPDOWN_BAD_SPEC, "topdown-bad-spec", 0x73, 0x00)	\
	X(ARCHPMU_EVENT_TOPDOWN_FE_BOUND, "topdown-fe-bound", 0x9c, 0x01)	\
	X(ARCHPMU_EVENT_TOPDOWN_RETIRING, "topdown-retiring", 0xc2, 0x02)	\
	X(ARCHPMU_EVENT_LBR_INSERTS,	  "lbr-inserts",      0xe4, 0x01)

/*
 * What fixed counter j counts, in order of j: X(j, event select, umask).
 * Counters 0, 1 and 3 count the architectural events of the same encoding;
 * counter 2 counts reference cycles at the TSC rate (00H/03H); 4-6 are the
 * Atom topdown events. Event 00H with umask j+1 always names fixed counter
 * j.
 */
#define ARCHPMU_FIXED_EVENT_TABLE(X)	\
	X(0, 0xc0, 0x00)		\
	X(1, 0x3c, 0x00)		\
	X(2, 0x00, 0x03)		\
	X(3, 0xa4, 0x01)		\
	X(4, 0x73, 0x00)		\
	X(5, 0x9c, 0x01)		\
	X(6, 0xc2, 0x02)

/* IA32_PERFEVTSELx fields (archpmu_event.config is an image of it). */
#define ARCHPMU_EVTSEL_EVENT	0x00000000000000ffULL	/* event select */
#define ARCHPMU_EVTSEL_UMASK	0x000000000000ff00ULL	/* unit mask */
#define ARCHPMU_EVTSEL_USR	0x0000000000010000ULL	/* count at CPL > 0 */
#define ARCHPMU_EVTSEL_OS	0x0000000000020000ULL	/* count at CPL 0 */
#define ARCHPMU_EVTSEL_EDGE	0x0000000000040000ULL	/* count rising edges */
#define ARCHPMU_EVTSEL_PC	0x0000000000080000ULL	/* pin control (refused) */
#define ARCHPMU_EVTSEL_INT	0x0000000000100000ULL	/* PMI on overflow (refused) */
#define ARCHPMU_EVTSEL_ANY	0x0000000000200000ULL	/* AnyThread (v3-v4) */
#define ARCHPMU_EVTSEL_EN	0x0000000000400000ULL	/* enable (refused: the module sets it) */
#define ARCHPMU_EVTSEL_INV	0x0000000000800000ULL	/* invert the CMASK comparison */
#define ARCHPMU_EVTSEL_CMASK	0x00000000ff000000ULL	/* counter mask */
#define ARCHPMU_EVTSEL_EQ	0x0000001000000000ULL	/* CMASK equal (CPUID.23H) */
#define ARCHPMU_EVTSEL_UMASK2	0x0000ff0000000000ULL	/* second unit mask (CPUID.23H) */
#define ARCHPMU_EVTSEL_UMASK_SHIFT	8
#define ARCHPMU_EVTSEL_CMASK_SHIFT	24
#define ARCHPMU_EVTSEL_UMASK2_SHIFT	40

/* archpmu_cpu_info.pmu_flags */
#define ARCHPMU_PMU_ANYTHREAD_DEPRECATED 0x001U /* CPUID.0AH:EDX[15] */
#define ARCHPMU_PMU_FULL_WIDTH_WRITE	0x002U /* PERF_CAPABILITIES[13]: IA32_A_PMCx */
#define ARCHPMU_PMU_HYBRID		0x004U /* CPUID.07H:EDX[15] */
#define ARCHPMU_PMU_LEAF23		0x008U /* CPUID leaf 23H present and used */
#define ARCHPMU_PMU_PDCM		0x010U /* CPUID.01H:ECX[15]: PERF_CAPABILITIES exists */
#define ARCHPMU_PMU_FIXED_ASSUMED	0x020U /* v2-4 reported < 3 fixed counters; 3 assumed */
#define ARCHPMU_PMU_UMASK2		0x040U /* CPUID.(23H,0):EBX[0] */
#define ARCHPMU_PMU_EQ			0x080U /* CPUID.(23H,0):EBX[1] */
#define ARCHPMU_PMU_HYPERVISOR		0x100U /* CPUID.01H:ECX[31] */
#define ARCHPMU_PMU_PERF_METRICS	0x200U /* PERF_CAPABILITIES[15] */
/* CPUID.07H:EDX[13] without EDX[11]: GP counter 3 serves TSX; never allocated */
#define ARCHPMU_PMU_TSX_FORCE_ABORT	0x400U

/* archpmu_cpu_info.core_type: CPUID.1AH:EAX[31:24] on hybrid parts, else 0. */
#define ARCHPMU_CORE_TYPE_NONE	0x00
#define ARCHPMU_CORE_TYPE_ATOM	0x20
#define ARCHPMU_CORE_TYPE_CORE	0x40

struct archpmu_info {
	__u32 size;		/* in */
	__u32 flags;		/* in: must be 0 */
	__u32 abi_version;	/* out: ARCHPMU_ABI_VERSION */
	__u32 backend;		/* out: ARCHPMU_BACKEND_* */
	__u64 capabilities;	/* out: ARCHPMU_CAP_* */
	__u32 nr_cpu_ids;	/* out: every CPU number is below this */
	__u32 nr_cpus_online;	/* out */
	__u32 nr_cpus_enumerated; /* out: CPUs with enumeration data */
	__u32 max_gp_counters;	/* out: GP counters it can program per CPU (past 8: v6 only) */
	__u32 max_fixed_counters; /* out: fixed counters the module can program per CPU */
	/* out (ARCHPMU_CAP_UNPRIVILEGED): ARCHPMU_PRIVILEGE_*, what the caller may open */
	__u32 privilege;
	__u64 __reserved[4];	/* in and out: 0 */
};

/*
 * What a caller may open: everything with CAP_PERFMON or CAP_SYS_ADMIN;
 * otherwise what the module parameter unprivileged allows (perf's
 * kernel.perf_event_paranoid): nothing, task sessions (counting and sampling)
 * of tasks the caller may read with every event in user mode only (ARCHPMU_EVTSEL_USR
 * without OS or AnyThread), or everything; by default nothing. A session outside
 * it is -EPERM (bad_event: the event refused for its mode, if any). The
 * register read and the netlink events always need CAP_PERFMON.
 */
#define ARCHPMU_PRIVILEGE_NONE		0
#define ARCHPMU_PRIVILEGE_OWN_USER	1
#define ARCHPMU_PRIVILEGE_ALL		2

/*
 * One logical CPU's PMU, as enumerated on that CPU. gp_mask and fixed_mask
 * are the counters that exist (CPUID.0AH, with the v5 rule "ECX[i] or
 * EDX[4:0] > i", or CPUID.(23H,1) where present). Extra errors:
 *   -ENXIO   cpu >= nr_cpu_ids
 *   -ENODEV  the CPU is offline or has not been enumerated
 */
struct archpmu_cpu_info {
	__u32 size;		/* in */
	__u32 flags;		/* in: must be 0 */
	__u32 cpu;		/* in */
	__u32 version;		/* out: CPUID.0AH:EAX[7:0]; 0 = no architectural PMU */
	__u32 pmu_flags;	/* out: ARCHPMU_PMU_* */
	__u32 core_type;	/* out: ARCHPMU_CORE_TYPE_* */
	__u32 native_model_id;	/* out: CPUID.1AH:EAX[23:0] on hybrid parts */
	__u32 nr_gp;		/* out: number of GP counters */
	__u32 gp_width;		/* out: bits */
	__u32 nr_fixed;		/* out: number of fixed counters */
	__u32 fixed_width;	/* out: bits */
	__u32 events_len;	/* out: CPUID.0AH:EAX[31:24] */
	__u64 gp_mask;		/* out: bit i = GP counter i exists */
	__u64 fixed_mask;	/* out: bit j = fixed counter j exists */
	__u64 events_mask;	/* out: bit n = architectural event n available */
	__u64 perf_capabilities; /* out: IA32_PERF_CAPABILITIES, 0 without PDCM */
	__u32 cpuid_0a[4];	/* out: raw CPUID.0AH EAX, EBX, ECX, EDX */
	__u32 cpuid_01_eax;	/* out (ARCHPMU_CAP_COUNTER_MASK): CPUID.1:EAX, the signature
				 * (family, model, stepping) the CPU reports
				 */
	__u32 __reserved0;	/* in and out: 0 */
	__u64 __reserved[3];	/* in and out: 0 */
};

/*
 * Counting. COUNT_OPEN describes a set of events and a set of CPUs,
 * validates every event against every CPU's enumeration, allocates counters
 * and programs them (stopped), all or nothing. COUNT_START/STOP/RESET act on
 * every CPU of the session; COUNT_READ returns
 * every event on every CPU as 64-bit counts in one call. Each operation
 * reaches all of the session's CPUs in one round of cross-calls: opening
 * takes two (read every CPU's PMU, then program), one with
 * ARCHPMU_COUNT_OPEN_START, which opens the session started. Needs
 * CAP_PERFMON or CAP_SYS_ADMIN, or no more than archpmu_info.privilege says.
 *
 * The session is a file of its own (ARCHPMU_CAP_SESSION_FD): COUNT_OPEN
 * returns a new file descriptor (close-on-exec), and COUNT_START, STOP,
 * RESET and READ act on that descriptor only, so one process may hold
 * several sessions and pass them on. Closing its last reference releases
 * the counters and restores what the PMU held before, whether /dev/archpmu
 * is still open or not. ARCHPMU_COUNT_OPEN_FD asked for this in ABI 1; it
 * is implied since ABI 2, and still accepted.
 *
 * archpmu_event.config is an IA32_PERFEVTSELx image: event select [7:0],
 * umask [15:8], USR [16], OS [17], edge [18], INV [23], CMASK [31:24],
 * AnyThread [21] (v3-v4 only), UMASK2 [47:40] and EQ [36] where CPUID.23H
 * enumerates them. EN [22], INT [20] and PC [19] must be 0. Neither USR nor
 * OS means both. Event 00H with umask j+1 is fixed counter j's own event
 * (00H/03H: reference cycles at the TSC rate, fixed counter 2 only).
 *
 * Allocation: instructions (C0H/00H), cycles (3CH/00H), 00H/03H and topdown
 * slots (A4H/01H) go to their fixed counter when the CPU has it and the event
 * has no edge, INV, CMASK or AnyThread; everything else to the lowest free
 * GP counter. ARCHPMU_EVENT_GP_ONLY keeps an event off the fixed counters;
 * ARCHPMU_EVENT_PIN asks for exactly archpmu_event.counter.
 *
 * COUNT_OPEN errors, each its own cause:
 *   -EPERM       no CAP_PERFMON or CAP_SYS_ADMIN, and the session is more
 *                than archpmu_info.privilege allows (bad_event: an event
 *                that counts kernel mode or AnyThread)
 *   -EMFILE      no free file descriptor
 *   -ENFILE      the system's limit of open files is reached
 *   -EINVAL      reserved, EN, INT or PC bits in config; unknown flags;
 *                nr_events 0; a CPU listed twice; a counter pinned twice; a
 *                group member for another core type than its leader
 *   -E2BIG       nr_events > ARCHPMU_MAX_EVENTS or nr_cpus > nr_cpu_ids
 *   -EDOM        INV or EQ without CMASK (both change only the CMASK comparison)
 *   -EOPNOTSUPP  AnyThread where the CPU lacks it (v1-v2) or deprecates it
 *   -ENOENT      an architectural event the CPU marks unavailable (without
 *                ARCHPMU_EVENT_RAW), or a fixed-counter event without its counter;
 *                an event for a core type no CPU of the session has (bad_cpu ~0)
 *   -ECHRNG      a pinned counter the CPU does not have, or a fixed counter
 *                pinned for an event it does not count; a GP counter pinned
 *                outside the event's ARCHPMU_EVENT_GP_MASK, or a mask with
 *                none of the CPU's GP counters
 *   -EMEDIUMTYPE edge, INV, CMASK or AnyThread on a fixed counter
 *   -ENOSPC      more events than free counters on a CPU
 *   -EBUSY       a needed counter is held: by another session, by perf (the NMI
 *                watchdog included), or counting for another agent (EN set,
 *                a fixed counter's ring bits). busy_holder says which, dmesg names
 *                the holder and the fix. archpmu and perf never share the PMU:
 *                while perf holds every GP counter (it reserves them all for
 *                its first hardware event) every session is refused, and while
 *                any session exists archpmu holds a GP counter's reservation,
 *                so perf_event_open() of a hardware event fails with EBUSY.
 *                The reservation covers GP 0-7: while perf holds any, GP 8 and
 *                up are taken as its too. A kernel that drives a v6 PMU at
 *                1900H reserves nothing there, and perf is not kept out.
 *   -ENXIO, -ENODEV  a CPU out of range; a CPU offline or without an
 *                architectural PMU; -ENODEV with bad_cpu ~0 also while an
 *                unload is asked for (/sys/class/misc/archpmu/unloading is 1)
 *   -EFAULT      a bad events or cpus pointer, or the counters or this
 *                struct cannot be written back
 *   -ENOMEM      an allocation failed
 *   -EIO         a PMU MSR access raised #GP (a hypervisor that does not
 *                emulate it, say); every CPU's PMU is put back as found
 * On these errors bad_event and bad_cpu say which event and CPU (else ~0).
 */
#define ARCHPMU_MAX_EVENTS	32

/*
 * Task scope (ARCHPMU_COUNT_OPEN_TASK, capability ARCHPMU_CAP_TASK). The
 * session counts only while one of its tasks runs: the thread task_pid (0:
 * the caller's), every thread of its process with ARCHPMU_TASK_PROCESS, and
 * with ARCHPMU_TASK_INHERIT every thread and child those create after the
 * open, exited ones included (perf's inherit). The counters are allocated
 * on every CPU of the session as for any session, and each CPU's are started
 * when one of the tasks is switched in there and stopped when it is switched
 * out, so a task that migrates keeps one count: the sum over the CPUs.
 * time_enabled and time_running of a CPU are the time the tasks ran there
 * while the session was started. A CPU that is not in the session (offline
 * at the open, or left out of cpus) does not count the tasks.
 *
 * Privilege: CAP_PERFMON (or CAP_SYS_ADMIN), or without it what the module
 * parameter unprivileged allows (ARCHPMU_PRIVILEGE_*), and for each task
 * access of ptrace's "read" kind by the module's own rule (the kernel's
 * ptrace_may_access() is not available to modules), after ptrace's
 * PTRACE_MODE_READ_REALCREDS: the task is in the caller's thread group; or
 * the caller's real uid equals the task's real, effective and saved uids,
 * likewise its real gid the task's gids, and the task is dumpable; or the
 * caller has CAP_SYS_PTRACE in the task's user namespace. With
 * ARCHPMU_TASK_PROCESS every thread is checked. Security modules (Yama's
 * ptrace_scope) are not asked. A task that later execs a set-id (not
 * dumpable) image leaves the session there, as it would leave perf's
 * events. With ARCHPMU_TASK_ENABLE_ON_EXEC (capability
 * ARCHPMU_CAP_ENABLE_ON_EXEC), COUNT_START (or ARCHPMU_COUNT_OPEN_START)
 * only arms the session: it starts at the first exec of one of its tasks,
 * so a command started held before its exec is counted from its first
 * instruction on and nothing before (perf's enable_on_exec); until then
 * time_enabled stays 0. Its other tasks then running on other CPUs start at
 * their next switch-in; a STOP and START after that exec start at once.
 * Children created faster than the module can follow them (it keeps a pool
 * of entries for them, grown from process context) are not counted, and
 * ARCHPMU_VALUE_INCOMPLETE in COUNT_READ says so. Without CAP_PERFMON, with
 * the module parameter unprivileged=own-user, a caller counts and samples the
 * tasks it may read in user mode only, as perf_event_paranoid 2 lets perf's
 * users; AnyThread, which counts the sibling hardware thread too, stays
 * CAP_PERFMON's.
 *
 * Sampling (capability ARCHPMU_CAP_TASK_SAMPLE): samples come only from the
 * session's tasks, into the ring of the CPU they ran on, with their pid and
 * tid. Each task keeps what is left of each sampling period as it leaves a
 * CPU and goes on with it on the next (perf's per-task period_left); a new
 * task starts a whole period.
 *
 * Extra COUNT_OPEN errors:
 *   -EINVAL      task_pid or task_flags without ARCHPMU_COUNT_OPEN_TASK;
 *                unknown task_flags
 *   -ESRCH       no task task_pid in the caller's PID namespace, a kernel
 *                thread, or it (with ARCHPMU_TASK_PROCESS: its process) is
 *                exiting
 *   -EACCES      the caller may not read the task by the rule above
 *   -EOPNOTSUPP  task scope on a CPU whose PMU is version 1 (no
 *                IA32_PERF_GLOBAL_CTRL), or sampling by a module without
 *                ARCHPMU_CAP_TASK_SAMPLE
 *
 * Groups and multiplexing (capability ARCHPMU_CAP_MULTIPLEX). An event with
 * ARCHPMU_EVENT_GROUP belongs to the group of the event before it; any other
 * event leads a group (of one, if the next event has no ARCHPMU_EVENT_GROUP):
 * perf's {a,b}. A group's events are on the PMU together or not at all.
 *
 * With ARCHPMU_COUNT_OPEN_MULTIPLEX, a CPU whose free counters cannot take
 * every event at once takes the groups in turns, as perf multiplexes: every
 * mux_interval_ms (module parameter, default 4) the groups that were left
 * out come first. The session then holds every free counter its rotating
 * events can use on that CPU, and at its turns takes up those that others
 * let go later (one another agent counts with, EN set, it leaves alone): a
 * group crowded out until then comes on, and its values stay
 * ARCHPMU_VALUE_MULTIPLEXED, as do those of groups that need no more
 * turns then. A
 * group whose leader has ARCHPMU_EVENT_NO_ROTATE, or with an
 * ARCHPMU_EVENT_PIN member, is on the PMU all the time (perf's pinned).
 * Each value's time_running is then the time that event was on the PMU, so
 * value * time_enabled / time_running estimates the full count, as perf
 * scales; an event off the PMU at the read has counter ARCHPMU_NO_COUNTER,
 * and the values of events that take turns have ARCHPMU_VALUE_MULTIPLEXED.
 * Their time_enabled leaves out the time their CPU was offline (it could
 * not count then), so that the scaling estimates what the CPU would have
 * counted online. On a CPU where everything fits, nothing rotates. Without
 * the flag nothing rotates anywhere: too many events are -ENOSPC, as
 * before.
 *
 * A rotating group that only counters others hold could take is not on
 * that CPU's PMU until they let go of them: its time_running stays 0 there
 * while time_enabled grows (perf's <not counted>), and its values have
 * ARCHPMU_VALUE_CROWDED_OUT.
 * Likewise on a hybrid part an event one core type lacks (an architectural
 * event it marks unavailable, or a fixed counter's own event without that
 * counter) is not refused: its group counts on the CPUs that have it, and
 * on the others has time_running 0 and ARCHPMU_VALUE_ABSENT (perf's
 * cpu_core/cpu_atom events). There, in a task session time_enabled is the
 * time the tasks ran there, so time_running over time_enabled is the share
 * of their time the event counted; in a CPU session it is 0. An event no
 * CPU of the session has is still -ENOENT, and so is one in a never-rotated
 * group on a CPU that lacks it.
 *
 * Extra COUNT_OPEN errors:
 *   -EINVAL      ARCHPMU_EVENT_GROUP on the first event; ARCHPMU_EVENT_NO_ROTATE
 *                on an event that does not lead its group
 *   -ENOSPC      with ARCHPMU_COUNT_OPEN_MULTIPLEX: a group that does not fit
 *                the CPU's counters even alone (with the never-rotated
 *                groups); bad_event is one of its events
 *   -EBUSY       a never-rotated group that does not fit because of counters
 *                others hold
 *   -EOPNOTSUPP  ARCHPMU_COUNT_OPEN_MULTIPLEX in a sampling session
 */

/* archpmu_count_open.flags */
#define ARCHPMU_COUNT_OPEN_FD	0x001U	/* implied since ABI 2: see above */
#define ARCHPMU_COUNT_OPEN_START 0x002U	/* program the counters started (as COUNT_START) */
#define ARCHPMU_COUNT_OPEN_TASK	0x004U	/* count only while the session's tasks run */
#define ARCHPMU_COUNT_OPEN_MULTIPLEX 0x008U /* rotate groups that do not fit at once */

/* archpmu_count_open.task_flags */
#define ARCHPMU_TASK_INHERIT	0x001U	/* and the threads and children they create */
#define ARCHPMU_TASK_PROCESS	0x002U	/* every thread of task_pid's process */
#define ARCHPMU_TASK_ENABLE_ON_EXEC 0x004U /* start at the first exec, not at COUNT_START */

#define ARCHPMU_EVENT_GP_ONLY	0x001U	/* never a fixed counter */
#define ARCHPMU_EVENT_PIN	0x002U	/* exactly the counter in .counter */
#define ARCHPMU_EVENT_RAW	0x004U	/* accept architectural events CPUID marks unavailable */
#define ARCHPMU_EVENT_GROUP	0x008U	/* in the group of the event before it */
#define ARCHPMU_EVENT_NO_ROTATE	0x010U	/* group leader: never rotated out (perf's pinned) */
/*
 * Counter constraints (capability ARCHPMU_CAP_COUNTER_MASK). Many model-
 * specific events count only on some GP counters (Golden Cove: most on
 * PMC0-3, some on PMC0 alone); elsewhere they count nothing, silently. Bits
 * 16-31 of flags: the GP counters the event may use (bit 16 + n: GP counter
 * n); none set: any. Fixed counters are not concerned. An event whose mask
 * leaves it no GP counter of a CPU, or pinned to a GP counter outside its
 * mask, is refused with -ECHRNG. Events with fewer allowed counters are
 * placed first. Kernels without the capability refuse these bits (-EINVAL).
 */
#define ARCHPMU_EVENT_GP_MASK_SHIFT	16
#define ARCHPMU_EVENT_GP_MASK	0xffff0000U
#define ARCHPMU_EVENT_GP_COUNTERS(mask)	(((__u32)(mask) & 0xffffU) << ARCHPMU_EVENT_GP_MASK_SHIFT)
/*
 * Core types (capability ARCHPMU_CAP_CORE_TYPE). A hybrid part's core types
 * encode many model-specific events differently, so perf has an event per
 * core type (cpu_core/.../, cpu_atom/.../). Bits 8-15 of flags: the core
 * type the event counts on, ARCHPMU_CORE_TYPE_CORE or _ATOM as
 * archpmu_cpu_info.core_type gives it; 0: every CPU. On a CPU of another
 * type the event gets no counter and reads ARCHPMU_VALUE_ABSENT with
 * time_enabled and time_running 0, in any session, so its value is what the
 * CPUs of its type counted, unscaled. One whose type no CPU of the session
 * has is -ENOENT. A group's events have its leader's type (-EINVAL
 * otherwise). Sampling sessions take it where ARCHPMU_CAP_CORE_TYPE_SAMPLE
 * says so (-EOPNOTSUPP before): it samples on its type's CPUs only, and a
 * SAMPLE_READ value of it elsewhere is 0. Kernels without the capability
 * refuse these bits (-EINVAL).
 */
#define ARCHPMU_EVENT_CORE_TYPE_SHIFT	8
#define ARCHPMU_EVENT_CORE_TYPE	0xff00U
#define ARCHPMU_EVENT_ON_CORE_TYPE(type) \
	(((__u32)(type) & 0xffU) << ARCHPMU_EVENT_CORE_TYPE_SHIFT)

/* archpmu_count_open.busy_holder: who holds what an -EBUSY refusal needed. */
#define ARCHPMU_HOLDER_UNKNOWN	0	/* older kernels; netlink: not for this caller to know */
#define ARCHPMU_HOLDER_SESSION	1	/* another archpmu session, of process busy_pid */
#define ARCHPMU_HOLDER_PERF	2	/* perf: a perf_event_open() user or the NMI watchdog */
#define ARCHPMU_HOLDER_AGENT	3	/* another agent counts with it (EN, fixed ring bits) */
#define ARCHPMU_HOLDER_NONE	4	/* free (netlink's GET_PMU_USAGE only) */

/*
 * Top-down metrics (capability ARCHPMU_CAP_PERF_METRICS). Where
 * IA32_PERF_CAPABILITIES[15] says IA32_PERF_METRICS exists (Ice Lake and later
 * P-cores), perf's metric events count the slots of one top-down category:
 * event 00H with umask 80H + i, i = 0 retiring, 1 bad speculation,
 * 2 frontend bound, 3 backend bound, and, where the CPU fills them (Sapphire
 * Rapids, Alder Lake P-cores and later; 0 elsewhere), 4 heavy operations,
 * 5 branch mispredicts, 6 fetch latency, 7 memory bound (perf's
 * topdown-retiring ... topdown-mem-bound). They are not counters: each fold
 * (a read, the periodic fold, a multiplexing turn that takes them off)
 * adds field i of PERF_METRICS times the slots fixed counter 3 counted
 * since both were last 0, over 0xFF; a read and the periodic fold then
 * reset both (paused), as perf does, and a turn programs them 0 when it
 * brings them back. So a
 * metric event must be in a group led by the slots event (A4H/01H, or the
 * pseudo-encoding 00H/04H) with the same USR/OS, which must get fixed
 * counter 3; its value's counter is ARCHPMU_COUNTER_METRICS | i. On a CPU
 * without PERF_METRICS the event is -ENOENT (in a multiplexing session:
 * absent there). Refused with -EINVAL: other PERFEVTSEL bits than USR/OS,
 * ARCHPMU_EVENT_PIN, _GP_ONLY or a GP mask, or no such group; -EOPNOTSUPP
 * in a sampling session; -EBUSY when fixed counter 3 or PERF_METRICS is
 * held, -ENOSPC when the slots event does not get fixed counter 3 (pinned
 * elsewhere).
 */
#define ARCHPMU_METRIC_UMASK	0x80U
#define ARCHPMU_NR_METRICS	8

/* A counter: GP counter i is i; fixed counter j is ARCHPMU_COUNTER_FIXED | j. */
#define ARCHPMU_COUNTER_FIXED	0x100U
/* PERF_METRICS' field i: a top-down metric event (see above). */
#define ARCHPMU_COUNTER_METRICS	0x200U
/*
 * No counter (archpmu_count_value.counter): the event is multiplexed off the
 * PMU, or absent on the CPU (ARCHPMU_VALUE_ABSENT).
 */
#define ARCHPMU_NO_COUNTER	0xffffffffU

struct archpmu_event {
	__u64 config;		/* in: IA32_PERFEVTSELx image (see above) */
	__u32 flags;		/* in: ARCHPMU_EVENT_* */
	__u32 counter;		/* in with PIN; out: the counter used on the first CPU
				 * (ARCHPMU_NO_COUNTER: multiplexed off the PMU, or
				 * absent there)
				 */
};

struct archpmu_count_open {
	__u32 size;		/* in */
	__u32 flags;		/* in: ARCHPMU_COUNT_OPEN_* */
	__u32 nr_events;	/* in: 1..ARCHPMU_MAX_EVENTS */
	__u32 nr_cpus;		/* in: entries at cpus; 0 = every online CPU */
	__u64 events;		/* in: user pointer to struct archpmu_event[nr_events] */
	__u64 cpus;		/* in: user pointer to __u32[nr_cpus] */
	__u32 bad_event;	/* out on error: the offending event, or ~0 */
	__u32 bad_cpu;		/* out on error: the offending CPU, or ~0 */
	__u32 nr_cpus_opened;	/* out: CPUs in the session (0 on error) */
	__u32 __reserved0;	/* in and out: 0 */
	/*
	 * Retired: never given a meaning, kept so that the fields after them
	 * stay where they are. Must be 0 (-EINVAL otherwise); a field that
	 * takes them over comes with a capability bit of its own, so a module
	 * that checks them as 0 refuses it rather than ignores it.
	 */
	__u64 __reserved[2];
	/* Since ABI 1's second layout (72 bytes); ignored on input. */
	__u32 busy_holder;	/* out on -EBUSY: ARCHPMU_HOLDER_*, who holds the counters */
	__u32 busy_pid;		/* out with ARCHPMU_HOLDER_SESSION: its process (in the
				 * caller's PID namespace; 0 if not visible there)
				 */
	/* Since the third layout (96 bytes), capability ARCHPMU_CAP_SAMPLE. */
	__u64 sample_events;	/* in: user pointer to struct archpmu_sample_event[nr_events];
				 * 0: a counting session, as before
				 */
	__u32 sample_flags;	/* in: ARCHPMU_SAMPLE_* */
	__u32 ring_pages;	/* in: data pages of each CPU's ring, a power of 2 up to
				 * ARCHPMU_RING_MAX_PAGES; 0: ARCHPMU_RING_DEFAULT_PAGES
				 */
	__u32 wakeup_bytes;	/* in: poll() is ready once a ring holds this many bytes;
				 * 0: a quarter of the ring
				 */
	__u32 stack_user;	/* in with ARCHPMU_SAMPLE_USER_STACK (capability
				 * ARCHPMU_CAP_USER_STACK): bytes of user stack each
				 * sample copies, a multiple of 8 up to
				 * ARCHPMU_STACK_USER_MAX and half a ring's data;
				 * else 0 (this was __reserved1)
				 */
	/* Since the fourth layout (104 bytes), capability ARCHPMU_CAP_TASK. */
	__u32 task_pid;		/* in with ARCHPMU_COUNT_OPEN_TASK: a thread (a TID in the
				 * caller's PID namespace); 0: the calling thread
				 */
	__u32 task_flags;	/* in: ARCHPMU_TASK_*, only with ARCHPMU_COUNT_OPEN_TASK */
};

/*
 * Sampling. A session with sample_events has
 * one entry per event: a period of 0 only counts; any other makes the event
 * sample, and its counter raises a PMI every @period events (or, with
 * ARCHPMU_SAMPLE_FREQ, @period times a second: the period is re-estimated
 * every sampling tick from the observed rate). The records of the event on
 * CPU n carry @id + n, so that each event on each CPU has its own id, as
 * perf's per-CPU events do (space the ids of a session's events by at least
 * nr_cpu_ids). Periods go up to 2^width - 1 of the counter the
 * event gets (2^31 - 1 on GP counters without full-width writes, half
 * of either on v1, which has no status MSR);
 * frequencies up to the module parameter sample_max_rate.
 *
 * Each CPU of the session has a ring, mapped with mmap() on the session
 * file: CPU number i of the session (in ascending CPU order) is at offset
 * i * (1 + ring_pages) * page size, length (1 + ring_pages) * page size: a
 * struct archpmu_ring_page, then the data pages. The protocol is perf's
 * (struct perf_event_mmap_page): read data_head, then (after a read
 * barrier, or as an acquire load) the records between data_tail and
 * data_head, modulo data_size; then store data_tail with release semantics.
 * The module publishes data_head with release semantics. poll() reports
 * EPOLLIN when any ring holds wakeup_bytes or more. The page's samples,
 * lost and throttled counts are plain 64-bit stores on the ring's CPU: read
 * them with relaxed loads; they are final once the session is stopped.
 *
 * Records are perf's (include/uapi/linux/perf_event.h), so they can be
 * copied into a perf.data file whose attributes have sample_id_all = 1,
 * read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID and sample_type =
 * IDENTIFIER | IP | TID | TIME | ID | CPU | PERIOD (| READ with
 * ARCHPMU_SAMPLE_READ) (| CALLCHAIN with ARCHPMU_SAMPLE_CALLCHAIN) (|
 * REGS_USER | STACK_USER with ARCHPMU_SAMPLE_USER_STACK). Each
 * begins with struct perf_event_header
 * { __u32 type; __u16 misc; __u16 size; } and is 8-byte aligned:
 *
 *   ARCHPMU_RECORD_SAMPLE: u64 id; u64 ip; u32 pid, tid; u64 time (CLOCK_MONOTONIC
 *       ns); u64 id; u32 cpu, 0; u64 period; with ARCHPMU_SAMPLE_READ then
 *       u64 nr; { u64 value; u64 id; } [nr], every event of the session on
 *       this CPU in COUNT_OPEN order, 64-bit counts as COUNT_READ gives them.
 *       misc: ARCHPMU_RECORD_MISC_KERNEL or _USER, the interrupted mode.
 *       An event counting in user mode only whose PMI came after its task
 *       had entered the kernel (skid) samples where user mode left off.
 *       With ARCHPMU_SAMPLE_CALLCHAIN (capability ARCHPMU_CAP_CALLCHAIN)
 *       then u64 nr; u64 ips[nr]: perf's call chain, PERF_CONTEXT_KERNEL
 *       and the kernel's frames (the sampled ip first, then the return
 *       addresses the kernel's unwinder finds), then PERF_CONTEXT_USER and
 *       the user frames (the ip where user mode left off, then the return
 *       addresses along the frame pointers); sample_max_stack frames at
 *       most (module parameter, default 127, perf's
 *       kernel.perf_event_max_stack). A frame pointer that cannot be read
 *       ends the chain. With ARCHPMU_SAMPLE_USER_STACK too, the chain is
 *       the kernel's part only (perf's exclude_callchain_user): the user's
 *       is unwound from the stack.
 *       With ARCHPMU_SAMPLE_USER_STACK then perf's REGS_USER and
 *       STACK_USER: u64 abi (PERF_SAMPLE_REGS_ABI_64, or 0 and no
 *       registers when the sample has no user context: a kernel thread);
 *       u64 regs[], the registers of ARCHPMU_SAMPLE_REGS_USER_MASK in bit
 *       order, where user mode left off; u64 size; u8 data[size], the user
 *       stack from the stack pointer up (stack_user bytes, fewer near the
 *       top of the address space); u64 dyn_size, the bytes of data that
 *       could be read (the rest is zero); size 0 and no data or dyn_size
 *       without registers.
 *   ARCHPMU_RECORD_LOST: u64 id; u64 lost; sample_id. Samples dropped
 *       because the ring was full, written as soon as there is room again.
 *   ARCHPMU_RECORD_THROTTLE, ARCHPMU_RECORD_UNTHROTTLE: u64 time; u64 id;
 *       u64 stream_id (= id); sample_id. The CPU's samples went over
 *       sample_max_rate, or its handler over its time budget: the event's
 *       counter stopped until the next sampling tick. (Dropped, uncounted,
 *       when the ring is full.)
 *   sample_id: u32 pid, tid; u64 time; u64 id; u32 cpu, 0; u64 id.
 *
 * COUNT_OPEN errors for sampling, besides those above:
 *   -EINVAL   sample_flags, ring_pages, wakeup_bytes or stack_user without
 *             sample_events; stack_user without ARCHPMU_SAMPLE_USER_STACK,
 *             or not a multiple of 8 from 8 to ARCHPMU_STACK_USER_MAX and
 *             half a ring's data, with it; unknown sample_flags or
 *             archpmu_sample_event.flags; a frequency of 0;
 *             ARCHPMU_SAMPLE_READ without a sampling event; ring_pages
 *             not a power of 2 or above ARCHPMU_RING_MAX_PAGES
 *   -ERANGE   a period above what the event's counter takes (bad_event
 *             and bad_cpu say which), or a frequency above sample_max_rate
 *             (bad_event)
 *   -EFAULT   a bad sample_events pointer
 *   -ENOMEM   the rings are over the caller's locked-memory limits, bounded
 *             as perf bounds its rings: the module parameter ring_mlock_kb
 *             per online CPU for each user, then RLIMIT_MEMLOCK on the
 *             user's locked memory unless the caller has CAP_IPC_LOCK; or
 *             the caller's memory cgroup cannot hold them (ring pages are
 *             charged to it, and a shortage refuses, never OOM-kills)
 * mmap: -ENODEV on a session that does not sample; -EINVAL for a private
 * mapping, or a length or offset that is not one whole ring.
 */
#define ARCHPMU_SAMPLE_READ	0x001U	/* sample_flags: samples carry every event's count */
#define ARCHPMU_SAMPLE_CALLCHAIN 0x002U	/* sample_flags: samples carry their call chain */
/* sample_flags: samples carry the user registers and stack (perf's --call-graph dwarf) */
#define ARCHPMU_SAMPLE_USER_STACK 0x004U
/* The user registers a sample carries: perf's PERF_REGS_MASK of x86-64 (no DS, ES, FS, GS). */
#define ARCHPMU_SAMPLE_REGS_USER_MASK	0xff0fffULL
#define ARCHPMU_STACK_USER_MAX		32768
#define ARCHPMU_SAMPLE_FREQ	0x001U	/* archpmu_sample_event.flags: period is in Hz */

#define ARCHPMU_RING_DEFAULT_PAGES	64
#define ARCHPMU_RING_MAX_PAGES		4096

struct archpmu_sample_event {
	__u64 period;		/* 0: counting only; else events (or Hz) per sample */
	__u64 id;		/* in the event's records on CPU n: id + n */
	__u32 flags;		/* ARCHPMU_SAMPLE_FREQ */
	__u32 __reserved;	/* 0 */
};

/* perf's record types and header.misc bits, as the rings carry them. */
#define ARCHPMU_RECORD_LOST		2
#define ARCHPMU_RECORD_THROTTLE		5
#define ARCHPMU_RECORD_UNTHROTTLE	6
#define ARCHPMU_RECORD_SAMPLE		9
#define ARCHPMU_RECORD_MISC_KERNEL	1
#define ARCHPMU_RECORD_MISC_USER	2

/* The first page of each ring; data_head and the rest at perf's offsets. */
struct archpmu_ring_page {
	__u32 version;		/* 1 */
	__u32 cpu;		/* the CPU this ring belongs to */
	__u64 samples;		/* samples written */
	__u64 lost;		/* samples dropped: the ring was full */
	__u64 throttled;	/* times a counter of this ring was throttled */
	__u8 __reserved[1024 - 32];
	__u64 data_head;	/* written by the module */
	__u64 data_tail;	/* written by the reader */
	__u64 data_offset;	/* where the data pages begin (one page) */
	__u64 data_size;	/* ring_pages * page size */
};

/*
 * COUNT_START, COUNT_STOP, COUNT_RESET: -EINVAL for non-zero flags. These
 * and COUNT_READ are a session file's only commands, and /dev/archpmu has
 * none of them (-ENOTTY).
 */
struct archpmu_count_ctl {
	__u32 size;		/* in */
	__u32 flags;		/* in: must be 0 */
};

#define ARCHPMU_VALUE_OFFLINE	0x001U	/* the CPU is offline: its last count */
#define ARCHPMU_VALUE_INCOMPLETE 0x002U	/* task scope: children were created faster than
					 * the module could follow them; some are not
					 * counted
					 */
#define ARCHPMU_VALUE_MULTIPLEXED 0x004U /* the event takes turns on this CPU's counters
					  * (ARCHPMU_COUNT_OPEN_MULTIPLEX)
					  */
#define ARCHPMU_VALUE_CROWDED_OUT 0x008U /* others hold every counter its group could use
					  * on this CPU: it does not count here (until
					  * they let go of them)
					  */
#define ARCHPMU_VALUE_ABSENT	0x010U	/* this CPU's core type lacks the event (hybrid),
					 * or the event is for another core type: it
					 * never counts here
					 */

struct archpmu_count_value {
	__u32 cpu;		/* ARCHPMU_ALL_CPUS: summed (ARCHPMU_COUNT_READ_SUM) */
	__u32 event;		/* index into COUNT_OPEN's events */
	__u32 counter;		/* the counter used on this CPU, or ARCHPMU_NO_COUNTER */
	__u32 flags;		/* ARCHPMU_VALUE_* */
	__u64 value;		/* 64-bit count, never wraps */
	__u64 time_enabled;	/* ns the session was started on this CPU (where its
				 * groups take turns: and online; 0 for an absent
				 * event of a CPU session, and for an event of
				 * another core type; see multiplexing above)
				 */
	__u64 time_running;	/* ns the counter counted (less while the CPU was offline,
				 * and while the event was multiplexed off the PMU)
				 */
};

/*
 * ARCHPMU_COUNT_READ_SUM: one entry per event, in the session's order, summed
 * over its CPUs as perf's aggregate count (perf stat without -A): value,
 * time_enabled and time_running are the sums; flags the union of the CPUs',
 * but ARCHPMU_VALUE_ABSENT only where every CPU lacks the event; counter the
 * one every CPU used, else ARCHPMU_NO_COUNTER; cpu ARCHPMU_ALL_CPUS. What a
 * thread's own counter reads, whatever the number of CPUs.
 */
#define ARCHPMU_COUNT_READ_SUM	0x1U
#define ARCHPMU_ALL_CPUS	0xffffffffU

/*
 * A snapshot of every event on every CPU of the session: nr_events * nr_cpus
 * entries, CPU-major (with ARCHPMU_COUNT_READ_SUM, nr_events). -ENOSPC (with
 * nr_values set to what is needed) when nr_values is too small; -EINVAL for
 * unknown flags or non-zero reserved fields; -EFAULT for a bad values pointer.
 */
struct archpmu_count_read {
	__u32 size;		/* in */
	__u32 flags;		/* in: ARCHPMU_COUNT_READ_* */
	__u32 nr_values;	/* in: entries at values; out: entries written */
	__u32 __reserved0;	/* in and out: 0 */
	__u64 values;		/* in: user pointer to struct archpmu_count_value[] */
	__u64 timestamp_ns;	/* out: CLOCK_MONOTONIC at the snapshot */
};

/*
 * Every architectural PMU register of one CPU as it holds it now, read on
 * that CPU through the backend in use (read-only: nothing is written), so
 * a user can see what another tool left programmed. Needs CAP_PERFMON or
 * CAP_SYS_ADMIN. The registers, in this order, where the CPU has them:
 * IA32_PERFEVTSELx and IA32_PMCx of each GP counter (up to 16; from 8 on,
 * v6's IA32_PMC_GPx_CFG_A and IA32_PMC_GPx_CTR at 1901H/1900H + 4x), IA32_FIXED_CTRx
 * (up to 7), IA32_FIXED_CTR_CTRL, IA32_PERF_GLOBAL_CTRL and _STATUS (v2+),
 * IA32_PERF_GLOBAL_INUSE (v4+), IA32_PERF_CAPABILITIES (PDCM) and
 * MSR_PERF_METRICS. Extra errors:
 *   -EPERM   no CAP_PERFMON or CAP_SYS_ADMIN
 *   -ENXIO, -ENODEV as for ARCHPMU_IOC_CPU_INFO
 *   -ENOSPC  nr_regs is too small (nr_regs is set to what is needed)
 *   -EIO     a read raised #GP (nr_regs: the registers read before it)
 *   -EFAULT  a bad regs pointer
 */
#define ARCHPMU_REGS_MAX	48

struct archpmu_reg {
	__u32 msr;
	__u32 __reserved;	/* 0 */
	__u64 value;
};

struct archpmu_regs_read {
	__u32 size;		/* in */
	__u32 flags;		/* in: must be 0 */
	__u32 cpu;		/* in */
	__u32 nr_regs;		/* in: entries at regs; out: entries written (or needed) */
	__u64 regs;		/* in: user pointer to struct archpmu_reg[nr_regs] */
	__u32 version;		/* out: the CPU's PMU version */
	__u32 __reserved0;	/* in and out: 0 */
	__u64 timestamp_ns;	/* out: CLOCK_MONOTONIC when the registers were read */
};

#define ARCHPMU_IOC_TYPE	0xB8
#define ARCHPMU_IOC_INFO	_IO(ARCHPMU_IOC_TYPE, 0x00)
#define ARCHPMU_IOC_CPU_INFO	_IO(ARCHPMU_IOC_TYPE, 0x01)
/* 0x02: reserved, ARCHPMU_IOC_MODEL_MSR of the test builds (archpmu_test.h) */
#define ARCHPMU_IOC_COUNT_OPEN	_IO(ARCHPMU_IOC_TYPE, 0x10)
#define ARCHPMU_IOC_COUNT_START	_IO(ARCHPMU_IOC_TYPE, 0x11)
#define ARCHPMU_IOC_COUNT_STOP	_IO(ARCHPMU_IOC_TYPE, 0x12)
#define ARCHPMU_IOC_COUNT_RESET	_IO(ARCHPMU_IOC_TYPE, 0x13)
#define ARCHPMU_IOC_COUNT_READ	_IO(ARCHPMU_IOC_TYPE, 0x14)
/* 0x15: reserved, ARCHPMU_IOC_MODEL_INJECT of the test builds (archpmu_test.h) */
#define ARCHPMU_IOC_REGS	_IO(ARCHPMU_IOC_TYPE, 0x16)

#endif /* _UAPI_LINUX_ARCHPMU_H */
