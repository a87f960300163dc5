// SPDX-License-Identifier: GPL-2.0
/*
 * Notifications: the dmesg line and the netlink event of each thing a user
 * should hear about, from one call (notify.h). Refusals, foreign use and a
 * failed resume are warnings; CPUs leaving and coming back, throttling and
 * lost samples are information. Refusals and information are rate-limited in
 * dmesg, so that a loop of refused opens cannot wrap the kernel log; every
 * one still goes out as an event. The session lifecycle is dmesg debug only.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/compiler.h>
#include <linux/printk.h>
#include <linux/ratelimit.h>

#include "notify.h"

static archpmu_note_sink note_sink;

void archpmu_notify_set_sink(archpmu_note_sink sink)
{
	WRITE_ONCE(note_sink, sink);
}

static void send(const struct archpmu_note *note)
{
	archpmu_note_sink sink = READ_ONCE(note_sink);

	if (sink)
		sink(note);
}

static const char perf_fix[] =
	"a perf_event_open user, or the NMI watchdog: 'sysctl kernel.nmi_watchdog=0' frees it";

void archpmu_notify_session(const struct archpmu_claims *cl, u8 cmd, bool running)
{
	struct archpmu_note note = { .cmd = cmd, .cl = cl, .running = running };
	static const char * const what[] = {
		[ARCHPMU_GENL_EVENT_SESSION_OPEN] = "opened",
		[ARCHPMU_GENL_EVENT_SESSION_CLOSE] = "closed",
		[ARCHPMU_GENL_EVENT_SESSION_START] = "started",
		[ARCHPMU_GENL_EVENT_SESSION_STOP] = "stopped",
	};

	if (WARN_ON_ONCE(cmd >= ARRAY_SIZE(what) || !what[cmd]))
		return;
	pr_debug("session %llu of pid %d (%s): %s, %u events on %u CPUs\n",
		 cl->holder->id, cl->holder->pid, cl->holder->comm, what[cmd],
		 cl->nr_events, cl->nr_cpus);
	send(&note);
}

/* All refusal lines together: 10 every 5 s, then a count of those left out. */
static DEFINE_RATELIMIT_STATE(refusal_ratelimit, 5 * HZ, 10);

static void print_refusal(const struct archpmu_refusal *r)
{
	if (r->kind == ARCHPMU_REFUSED_NONE || !__ratelimit(&refusal_ratelimit))
		return;
	switch (r->kind) {
	case ARCHPMU_REFUSED_SESSION:
		pr_warn("CPU %u: event %u does not fit: the counters it could use are held by the archpmu session of pid %d (%s)\n",
			r->cpu, r->event, r->holder_pid, r->holder_comm);
		break;
	case ARCHPMU_REFUSED_PERF_PINNED:
		pr_warn("CPU %u: event %u: GP counter %u is held by perf (%s)\n",
			r->cpu, r->event, r->counter, perf_fix);
		break;
	case ARCHPMU_REFUSED_PERF:
		pr_warn("CPU %u: event %u does not fit: GP counters %#llx are held by perf (%s)\n",
			r->cpu, r->event, r->counters, perf_fix);
		break;
	case ARCHPMU_REFUSED_PERF_ALL:
		pr_warn("perf holds every GP counter (%s); archpmu and perf cannot share the PMU: stop perf first\n",
			perf_fix);
		break;
	case ARCHPMU_REFUSED_AGENT_EVTSEL:
		pr_warn("CPU %u: GP counter %u is in use by another agent (IA32_PERFEVTSEL%u = %#llx has EN set); stop that tool first\n",
			r->cpu, r->counter, r->counter, r->msr_value);
		break;
	case ARCHPMU_REFUSED_AGENT_FIXED:
		pr_warn("CPU %u: a fixed counter is in use by another agent (IA32_FIXED_CTR_CTRL = %#llx); stop that tool first\n",
			r->cpu, r->msr_value);
		break;
	case ARCHPMU_REFUSED_NONE:
		break;
	}
}

void archpmu_notify_refused(const struct archpmu_claims *cl)
{
	struct archpmu_note note = {
		.cmd = ARCHPMU_GENL_EVENT_REFUSED, .cl = cl, .refusal = &cl->refusal,
	};

	print_refusal(&cl->refusal);
	send(&note);
}

void archpmu_notify_foreign(const struct archpmu_claims *cl, u32 cpu, u32 counter, u32 msr,
			    u64 seen, u64 expected)
{
	struct archpmu_note note = {
		.cmd = ARCHPMU_GENL_EVENT_FOREIGN_USE, .cl = cl, .cpu = cpu,
		.counter = counter, .msr = msr, .seen = seen, .expected = expected,
	};

	pr_warn_ratelimited("CPU %u: another agent rewrote MSR %#x of %s counter %u, held by the archpmu session of pid %d (%s): found %#llx, programmed %#llx; its counts cannot be trusted\n",
			    cpu, msr, counter & ARCHPMU_COUNTER_FIXED ? "fixed" : "GP",
			    counter & ~ARCHPMU_COUNTER_FIXED, cl->holder->pid, cl->holder->comm,
			    seen, expected);
	send(&note);
}

void archpmu_notify_cpu(const struct archpmu_claims *cl, u32 cpu, bool online, int err)
{
	struct archpmu_note note = {
		.cmd = online ? ARCHPMU_GENL_EVENT_CPU_ONLINE : ARCHPMU_GENL_EVENT_CPU_OFFLINE,
		.cl = cl, .cpu = cpu, .err = err,
	};

	if (err)
		pr_warn("CPU %u: session of pid %d (%s) could not be resumed here (%d); its counts stay as they were\n",
			cpu, cl->holder->pid, cl->holder->comm, err);
	else
		pr_info_ratelimited("CPU %u %s: session of pid %d (%s) %s\n", cpu,
				    online ? "is back" : "went offline", cl->holder->pid,
				    cl->holder->comm,
				    online ? "counts there again" : "keeps its counts from there");
	send(&note);
}

void archpmu_notify_sampling(const struct archpmu_claims *cl, u8 cmd, u32 cpu, u64 count,
			     u64 total)
{
	struct archpmu_note note = {
		.cmd = cmd, .cl = cl, .cpu = cpu, .count = count, .total = total,
	};

	if (cmd == ARCHPMU_GENL_EVENT_THROTTLE)
		pr_info_ratelimited("CPU %u: session of pid %d (%s) throttled %llu more times (%llu in all): over sample_max_rate or sample_cpu_percent\n",
				    cpu, cl->holder->pid, cl->holder->comm, count, total);
	else if (cmd == ARCHPMU_GENL_EVENT_LOST)
		pr_info_ratelimited("CPU %u: session of pid %d (%s) lost %llu more samples (%llu in all): its ring was full\n",
				    cpu, cl->holder->pid, cl->holder->comm, count, total);
	send(&note);
}

void archpmu_notify_unload(void)
{
	struct archpmu_note note = { .cmd = ARCHPMU_GENL_EVENT_UNLOAD };

	send(&note);
}
