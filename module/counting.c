// SPDX-License-Identifier: GPL-2.0
/*
 * Counting sessions (uapi/archpmu.h, ARCHPMU_IOC_COUNT_*).
 *
 * A session belongs to an open file. COUNT_OPEN validates every event
 * against every CPU's enumeration, allocates counters per CPU, reserves the
 * GP counters against perf, then on each CPU reads what the PMU holds
 * (refusing counters another agent uses) and programs the counters stopped,
 * all or nothing. Every operation on a CPU is one batch in one cross-call.
 * Hardware counts are folded into 64-bit totals on every read and by a
 * periodic fold, so they never wrap. Release stops the counters and puts
 * back what the PMU held before.
 *
 * Locking: archpmu_file.lock (one open file's ioctls), then
 * cpus_read_lock(), then count_lock. Hotplug callbacks take count_lock.
 * User memory is never touched under cpus_read_lock() or count_lock: a
 * page that faults slowly (userfaultfd, a network file) would stall every
 * other session and all CPU hotplug. Inputs are copied in before the locks
 * are taken, results copied out after they are dropped.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <asm/nmi.h>
#include <linux/capability.h>
#include <linux/cpu.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/mutex.h>
#include <linux/nospec.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/suspend.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#include "alloc.h"
#include "archpmu.h"
#include "compat.h"

#define GP_BITS		GENMASK_ULL(ARCHPMU_LEGACY_GP - 1, 0)
#define RING_BITS	(ARCHPMU_EVTSEL_USR | ARCHPMU_EVTSEL_OS)
/* Fold at least this often; faster for narrow counters (see fold_period()). */
#define FOLD_MAX_MS	1000
#define FOLD_MIN_MS	10
/* No counter counts faster than this many events per second. */
#define FASTEST_RATE	20000000000ULL

struct count_slot {
	u32 counter;
	u64 prev;		/* raw counter value at the last fold */
	u64 total;		/* 64-bit count */
};

struct count_cpu {
	unsigned int cpu;
	bool programmed;	/* our counters are on the CPU (false while offline) */
	struct archpmu_pmu_desc desc;
	u64 used;		/* our counters: GP i = bit i, fixed j = bit 32 + j */
	u64 agent_busy;		/* of those, the ones cpu_save() found in use */
	struct count_slot slot[ARCHPMU_MAX_EVENTS];
	u64 saved_evtsel[ARCHPMU_LEGACY_GP];
	u64 saved_pmc[ARCHPMU_LEGACY_GP];
	u64 saved_fixed[ARCHPMU_LEGACY_FIXED];
	u64 saved_fixed_ctrl;
	u64 saved_global_ctrl;
	u64 enabled_ns;
	u64 running_ns;
	u64 since;		/* start of the current started interval */
};

struct archpmu_session {
	struct list_head node;
	pid_t pid;		/* in the initial namespace, for dmesg */
	struct pid *tgid;	/* the opener, for busy_pid in the caller's namespace */
	char comm[TASK_COMM_LEN];
	unsigned int nr_events;
	struct archpmu_event ev[ARCHPMU_MAX_EVENTS];
	unsigned int nr_cpus;
	struct count_cpu *cpus;
	u64 gp_reserved;	/* GP counters whose perf reservation we hold (perf_share.c) */
	bool running;
	unsigned long fold_period;
	struct delayed_work fold_work;
	/* Preallocated so that reads allocate nothing; under count_lock. */
	struct archpmu_batch_buf *buf;
	/* The snapshot COUNT_READ copies out; under archpmu_file.lock. */
	struct archpmu_count_value *vals;
};

struct archpmu_file {
	struct mutex lock;	/* serialises the ioctls of one open file */
	struct archpmu_session *session;
};

static DEFINE_MUTEX(count_lock);
static LIST_HEAD(count_sessions);
static u64 *cpu_taken;		/* per CPU: counters held by any session */

static u64 used_gp(const struct count_cpu *cc)
{
	return cc->used & GP_BITS;
}

static u64 used_fixed(const struct count_cpu *cc)
{
	return cc->used >> ARCHPMU_BUSY_FIXED_SHIFT;
}

static bool is_fixed(u32 counter)
{
	return counter & ARCHPMU_COUNTER_FIXED;
}

static u32 counter_msr(const struct count_cpu *cc, u32 counter, bool write)
{
	if (is_fixed(counter))
		return ARCHPMU_MSR_FIXED_CTR0 + (counter & 0xff);
	if (write && (cc->desc.flags & ARCHPMU_PMU_FULL_WIDTH_WRITE))
		return ARCHPMU_MSR_A_PMC0 + counter;
	return ARCHPMU_MSR_PMC0 + counter;
}

static u64 counter_width_mask(const struct count_cpu *cc, u32 counter)
{
	return archpmu_width_mask(is_fixed(counter) ? cc->desc.fixed_width :
				  cc->desc.gp_width);
}

/* USR/OS of an event; neither means both. */
static u64 ring_bits(u64 config)
{
	return config & RING_BITS ? config & RING_BITS : RING_BITS;
}

static u64 evtsel_image(u64 config, bool enable)
{
	u64 v = (config & ~RING_BITS) | ring_bits(config);

	return enable ? v | ARCHPMU_EVTSEL_EN : v;
}

static u64 fixed_nibble(u64 config)
{
	u64 r = ring_bits(config);

	return (r & ARCHPMU_EVTSEL_OS ? ARCHPMU_FIXED_OS : 0) |
	       (r & ARCHPMU_EVTSEL_USR ? ARCHPMU_FIXED_USR : 0);
}

static u64 fixed_ctrl_mask(const struct count_cpu *cc)
{
	u64 mask = 0;
	u32 j;

	for (j = 0; j < ARCHPMU_LEGACY_FIXED; j++)
		if (used_fixed(cc) & BIT_ULL(j))
			mask |= 0xfULL << ARCHPMU_FIXED_SHIFT(j);
	return mask;
}

static u64 fixed_ctrl_value(const struct archpmu_session *s,
			    const struct count_cpu *cc)
{
	u64 v = 0;
	unsigned int i;

	for (i = 0; i < s->nr_events; i++)
		if (is_fixed(cc->slot[i].counter))
			v |= fixed_nibble(s->ev[i].config) <<
			     ARCHPMU_FIXED_SHIFT(cc->slot[i].counter & 0xff);
	return v;
}

static bool has_global(const struct count_cpu *cc)
{
	return cc->desc.version >= 2;
}

/* Our fixed counters (as busy-mask bits) that IA32_FIXED_CTR_CTRL enables or arms. */
static u64 fixed_in_use(const struct count_cpu *cc, u64 fixed_ctrl)
{
	u64 live = ARCHPMU_FIXED_OS | ARCHPMU_FIXED_USR | ARCHPMU_FIXED_PMI;
	u64 busy = 0;
	u32 j;

	for (j = 0; j < ARCHPMU_LEGACY_FIXED; j++)
		if ((used_fixed(cc) & BIT_ULL(j)) &&
		    (fixed_ctrl >> ARCHPMU_FIXED_SHIFT(j)) & live)
			busy |= BIT_ULL(ARCHPMU_BUSY_FIXED_SHIFT + j);
	return busy;
}

/* --- per-CPU operations, each one batch in one cross-call ---------------- */

/* Read what the PMU holds in our counters; refuse counters in use (cc->agent_busy). */
static int cpu_save(struct archpmu_session *s, struct count_cpu *cc)
{
	struct archpmu_batch_buf *b = s->buf;
	unsigned int n = 0;
	u64 fixed_ctrl = 0, inuse = 0, busy_fixed;
	int ret;
	u32 i;

	b->nr = 0;
	for (i = 0; i < ARCHPMU_LEGACY_GP; i++) {
		if (!(used_gp(cc) & BIT_ULL(i)))
			continue;
		archpmu_batch_add(b, ARCHPMU_MSR_READ, ARCHPMU_MSR_PERFEVTSEL0 + i, 0, 0);
		archpmu_batch_add(b, ARCHPMU_MSR_READ, ARCHPMU_MSR_PMC0 + i, 0, 0);
	}
	for (i = 0; i < ARCHPMU_LEGACY_FIXED; i++)
		if (used_fixed(cc) & BIT_ULL(i))
			archpmu_batch_add(b, ARCHPMU_MSR_READ, ARCHPMU_MSR_FIXED_CTR0 + i, 0, 0);
	if (has_global(cc)) {
		archpmu_batch_add(b, ARCHPMU_MSR_READ, ARCHPMU_MSR_FIXED_CTR_CTRL, 0, 0);
		archpmu_batch_add(b, ARCHPMU_MSR_READ, ARCHPMU_MSR_GLOBAL_CTRL, 0, 0);
	}
	if (cc->desc.version >= 4)
		archpmu_batch_add(b, ARCHPMU_MSR_READ, ARCHPMU_MSR_GLOBAL_INUSE, 0, 0);
	cc->agent_busy = 0;
	ret = archpmu_batch_buf_run(cc->cpu, b);
	if (ret) {
		pr_err("CPU %u: reading the PMU failed (%d)\n", cc->cpu, ret);
		return ret;
	}

	for (i = 0; i < ARCHPMU_LEGACY_GP; i++) {
		if (!(used_gp(cc) & BIT_ULL(i)))
			continue;
		cc->saved_evtsel[i] = b->ops[n++].val;
		cc->saved_pmc[i] = b->ops[n++].val;
		if (cc->saved_evtsel[i] & (ARCHPMU_EVTSEL_EN | ARCHPMU_EVTSEL_INT)) {
			pr_warn("CPU %u: GP counter %u is in use by another agent (IA32_PERFEVTSEL%u = %#llx has EN or INT set); stop that tool first\n",
				cc->cpu, i, i, cc->saved_evtsel[i]);
			cc->agent_busy |= BIT_ULL(i);
		}
	}
	for (i = 0; i < ARCHPMU_LEGACY_FIXED; i++)
		if (used_fixed(cc) & BIT_ULL(i))
			cc->saved_fixed[i] = b->ops[n++].val;
	if (has_global(cc)) {
		fixed_ctrl = b->ops[n++].val;
		cc->saved_fixed_ctrl = fixed_ctrl;
		cc->saved_global_ctrl = b->ops[n++].val;
		busy_fixed = fixed_in_use(cc, fixed_ctrl);
		if (busy_fixed) {
			pr_warn("CPU %u: a fixed counter is in use by another agent (IA32_FIXED_CTR_CTRL = %#llx); stop that tool first\n",
				cc->cpu, fixed_ctrl);
			cc->agent_busy |= busy_fixed;
		}
	}
	if (cc->desc.version >= 4) {
		inuse = b->ops[n++].val;
		if (inuse & cc->used) {
			pr_warn("CPU %u: counters %#llx are in use by another agent (IA32_PERF_GLOBAL_INUSE = %#llx); stop that tool first\n",
				cc->cpu, inuse & cc->used, inuse);
			cc->agent_busy |= inuse & cc->used;
		}
	}
	return cc->agent_busy ? -EBUSY : 0;
}

static int cpu_restore(struct archpmu_session *s, struct count_cpu *cc);

/*
 * Program our counters from zero; counting if @start. A failure part-way
 * puts back everything cpu_save() read, so the CPU is left as found.
 */
static int cpu_program(struct archpmu_session *s, struct count_cpu *cc, bool start)
{
	struct archpmu_batch_buf *b = s->buf;
	unsigned int i;
	int ret;

	b->nr = 0;
	if (has_global(cc))
		archpmu_batch_add(b, ARCHPMU_MSR_MODIFY, ARCHPMU_MSR_GLOBAL_CTRL, 0, cc->used);
	for (i = 0; i < s->nr_events; i++) {
		u32 c = cc->slot[i].counter;

		if (!is_fixed(c))
			archpmu_batch_add(b, ARCHPMU_MSR_WRITE, ARCHPMU_MSR_PERFEVTSEL0 + c,
					  evtsel_image(s->ev[i].config, start), 0);
		archpmu_batch_add(b, ARCHPMU_MSR_WRITE, counter_msr(cc, c, true), 0, 0);
		cc->slot[i].prev = 0;
	}
	if (used_fixed(cc))
		archpmu_batch_add(b, ARCHPMU_MSR_MODIFY, ARCHPMU_MSR_FIXED_CTR_CTRL,
				  start ? fixed_ctrl_value(s, cc) : 0, fixed_ctrl_mask(cc));
	if (has_global(cc)) {
		archpmu_batch_add(b, ARCHPMU_MSR_ACK, 0, 0, cc->used);
		if (start)
			archpmu_batch_add(b, ARCHPMU_MSR_MODIFY, ARCHPMU_MSR_GLOBAL_CTRL,
					  cc->used, cc->used);
	}
	ret = archpmu_batch_buf_run(cc->cpu, b);
	cc->programmed = true;	/* if only in part: cpu_restore() undoes it */
	if (ret) {
		pr_err("CPU %u: programming the counters failed (%d); the PMU is put back as it was\n",
		       cc->cpu, ret);
		cpu_restore(s, cc);
	}
	return ret;
}

/*
 * Start or stop our counters. Each is gated by its own enable (EN, or its
 * nibble of IA32_FIXED_CTR_CTRL) and on v2+ by its GLOBAL_CTRL bit as well:
 * an agent that rewrites GLOBAL_CTRL wholesale, as perf does, then neither
 * starts a stopped session nor keeps a running one stopped once it enables
 * again.
 */
static void add_enable(const struct archpmu_session *s, const struct count_cpu *cc,
		       struct archpmu_batch_buf *b, bool enable)
{
	unsigned int i;

	if (has_global(cc) && !enable)
		archpmu_batch_add(b, ARCHPMU_MSR_MODIFY, ARCHPMU_MSR_GLOBAL_CTRL, 0, cc->used);
	for (i = 0; i < s->nr_events; i++)
		if (!is_fixed(cc->slot[i].counter))
			archpmu_batch_add(b, ARCHPMU_MSR_WRITE,
					  ARCHPMU_MSR_PERFEVTSEL0 + cc->slot[i].counter,
					  evtsel_image(s->ev[i].config, enable), 0);
	if (used_fixed(cc))
		archpmu_batch_add(b, ARCHPMU_MSR_MODIFY, ARCHPMU_MSR_FIXED_CTR_CTRL,
				  enable ? fixed_ctrl_value(s, cc) : 0, fixed_ctrl_mask(cc));
	if (has_global(cc) && enable)
		archpmu_batch_add(b, ARCHPMU_MSR_MODIFY, ARCHPMU_MSR_GLOBAL_CTRL,
				  cc->used, cc->used);
}

static void fold(struct count_slot *slot, u64 raw, u64 width_mask)
{
	slot->total += (raw - slot->prev) & width_mask;
	slot->prev = raw;
}

/*
 * Fold the counters into the totals; also change their state first when
 * @change (to enabled if @enable). Counter reads follow the state change in
 * the same cross-call.
 */
static int cpu_read(struct archpmu_session *s, struct count_cpu *cc, bool change,
		    bool enable)
{
	struct archpmu_batch_buf *b = s->buf;
	unsigned int i, first;
	int ret;

	if (!cc->programmed)
		return 0;
	b->nr = 0;
	if (change)
		add_enable(s, cc, b, enable);
	first = b->nr;
	for (i = 0; i < s->nr_events; i++)
		archpmu_batch_add(b, ARCHPMU_MSR_READ,
				  counter_msr(cc, cc->slot[i].counter, false), 0, 0);
	if (has_global(cc))
		archpmu_batch_add(b, ARCHPMU_MSR_ACK, 0, 0, cc->used);
	ret = archpmu_batch_buf_run(cc->cpu, b);
	if (!ret)
		for (i = 0; i < s->nr_events; i++)
			fold(&cc->slot[i], b->ops[first + i].val,
			     counter_width_mask(cc, cc->slot[i].counter));
	return ret;
}

static int cpu_zero(struct archpmu_session *s, struct count_cpu *cc)
{
	struct archpmu_batch_buf *b = s->buf;
	unsigned int i;
	int ret = 0;

	if (cc->programmed) {
		b->nr = 0;
		for (i = 0; i < s->nr_events; i++)
			archpmu_batch_add(b, ARCHPMU_MSR_WRITE,
					  counter_msr(cc, cc->slot[i].counter, true), 0, 0);
		ret = archpmu_batch_buf_run(cc->cpu, b);
	}
	for (i = 0; i < s->nr_events; i++) {
		cc->slot[i].prev = 0;
		cc->slot[i].total = 0;
	}
	return ret;
}

/* Put back what the PMU held before the session. */
static int cpu_restore(struct archpmu_session *s, struct count_cpu *cc)
{
	struct archpmu_batch_buf *b = s->buf;
	int ret;
	u32 i;

	if (!cc->programmed)
		return 0;
	b->nr = 0;
	if (has_global(cc))
		archpmu_batch_add(b, ARCHPMU_MSR_MODIFY, ARCHPMU_MSR_GLOBAL_CTRL, 0, cc->used);
	for (i = 0; i < ARCHPMU_LEGACY_GP; i++) {
		if (!(used_gp(cc) & BIT_ULL(i)))
			continue;
		archpmu_batch_add(b, ARCHPMU_MSR_WRITE, ARCHPMU_MSR_PERFEVTSEL0 + i,
				  cc->saved_evtsel[i], 0);
		archpmu_batch_add(b, ARCHPMU_MSR_WRITE, counter_msr(cc, i, true),
				  cc->saved_pmc[i], 0);
	}
	for (i = 0; i < ARCHPMU_LEGACY_FIXED; i++)
		if (used_fixed(cc) & BIT_ULL(i))
			archpmu_batch_add(b, ARCHPMU_MSR_WRITE, ARCHPMU_MSR_FIXED_CTR0 + i,
					  cc->saved_fixed[i], 0);
	if (has_global(cc)) {
		if (used_fixed(cc))
			archpmu_batch_add(b, ARCHPMU_MSR_MODIFY, ARCHPMU_MSR_FIXED_CTR_CTRL,
					  cc->saved_fixed_ctrl, fixed_ctrl_mask(cc));
		archpmu_batch_add(b, ARCHPMU_MSR_ACK, 0, 0, cc->used);
		archpmu_batch_add(b, ARCHPMU_MSR_MODIFY, ARCHPMU_MSR_GLOBAL_CTRL,
				  cc->saved_global_ctrl, cc->used);
	}
	ret = archpmu_batch_buf_run_all(cc->cpu, b);
	if (ret)
		pr_err("CPU %u: restoring the PMU failed (%d)\n", cc->cpu, ret);
	cc->programmed = false;
	return ret;
}

/* --- time accounting ---------------------------------------------------- */

static void times_stop(struct count_cpu *cc, u64 now)
{
	cc->enabled_ns += now - cc->since;
	if (cc->programmed)
		cc->running_ns += now - cc->since;
	cc->since = now;
}

/* --- sessions ------------------------------------------------------------ */

static struct count_cpu *session_cpu(struct archpmu_session *s, unsigned int cpu)
{
	unsigned int i;

	for (i = 0; i < s->nr_cpus; i++)
		if (s->cpus[i].cpu == cpu)
			return &s->cpus[i];
	return NULL;
}

static unsigned long fold_period(const struct archpmu_session *s)
{
	u64 ms = FOLD_MAX_MS;
	unsigned int i;

	for (i = 0; i < s->nr_cpus; i++) {
		const struct archpmu_pmu_desc *d = &s->cpus[i].desc;
		u32 width = min_not_zero(d->gp_width, d->fixed_width ?: d->gp_width);
		/* A quarter of the time the narrowest counter takes to wrap. */
		u64 wrap_ms = width >= 64 ? U64_MAX :
			      div64_u64(BIT_ULL(width), FASTEST_RATE * 4 / MSEC_PER_SEC);

		ms = min(ms, wrap_ms);
	}
	return msecs_to_jiffies(max_t(u64, ms, FOLD_MIN_MS));
}

static void fold_work_fn(struct work_struct *work)
{
	struct archpmu_session *s =
		container_of(to_delayed_work(work), struct archpmu_session, fold_work);
	unsigned int i;

	cpus_read_lock();
	mutex_lock(&count_lock);
	for (i = 0; i < s->nr_cpus; i++)
		cpu_read(s, &s->cpus[i], false, false);
	if (s->running)
		schedule_delayed_work(&s->fold_work, s->fold_period);
	mutex_unlock(&count_lock);
	cpus_read_unlock();
}

static void session_teardown(struct archpmu_session *s)
{
	unsigned int i;

	lockdep_assert_held(&count_lock);
	for (i = 0; i < s->nr_cpus; i++) {
		struct count_cpu *cc = &s->cpus[i];

		cpu_restore(s, cc);
		/* Allocation kept cc->used clear of every other session's counters. */
		cpu_taken[cc->cpu] &= ~cc->used;
	}
	archpmu_release_gp(s->gp_reserved);
	s->gp_reserved = 0;
}

static void session_free(struct archpmu_session *s)
{
	if (!s)
		return;
	kvfree(s->vals);
	kfree(s->buf);
	kvfree(s->cpus);
	put_pid(s->tgid);
	kfree(s);
}

/* Stop, restore and free a session that is on count_sessions. */
static void session_destroy(struct archpmu_session *s)
{
	cpus_read_lock();
	mutex_lock(&count_lock);
	s->running = false;
	list_del(&s->node);
	session_teardown(s);
	mutex_unlock(&count_lock);
	cpus_read_unlock();
	/* Not running any more: a fold still queued finds nothing to do. */
	cancel_delayed_work_sync(&s->fold_work);
	session_free(s);
}

/* The session's CPUs, ascending: @cpus (already copied in) or every online CPU. */
static int session_cpus(struct archpmu_session *s, const u32 *cpus, u32 nr_cpus,
			struct archpmu_count_open *out)
{
	unsigned int i, n = 0;
	cpumask_var_t mask;
	int ret = 0;

	lockdep_assert_held(&count_lock);	/* and cpus_read_lock() */
	if (!zalloc_cpumask_var(&mask, GFP_KERNEL))
		return -ENOMEM;
	if (!nr_cpus)
		cpumask_copy(mask, cpu_online_mask);
	for (i = 0; i < nr_cpus; i++) {
		u32 cpu = cpus[i];

		out->bad_cpu = cpu;
		if (cpu >= nr_cpu_ids) {
			ret = -ENXIO;
			goto out;
		}
		cpu = array_index_nospec(cpu, nr_cpu_ids);
		if (cpumask_test_and_set_cpu(cpu, mask)) {
			ret = -EINVAL;
			goto out;
		}
		if (!cpu_online(cpu)) {
			ret = -ENODEV;
			goto out;
		}
	}
	out->bad_cpu = ~0U;
	s->cpus = kvcalloc(cpumask_weight(mask), sizeof(*s->cpus), GFP_KERNEL);
	if (!s->cpus) {
		ret = -ENOMEM;
		goto out;
	}
	for_each_cpu(i, mask)
		s->cpus[n++].cpu = i;
	s->nr_cpus = n;
out:
	free_cpumask_var(mask);
	return ret;
}

/* The session that holds any of @bits on @cpu, for the refusal's dmesg line. */
static struct archpmu_session *holder_of(unsigned int cpu, u64 bits)
{
	struct archpmu_session *s;
	struct count_cpu *cc;

	list_for_each_entry(s, &count_sessions, node) {
		cc = session_cpu(s, cpu);
		if (cc && (cc->used & bits))
			return s;
	}
	return NULL;
}

/* The first event of @s whose counter on @cc is one of @bits. */
static unsigned int event_on(const struct archpmu_session *s, const struct count_cpu *cc,
			     u64 bits)
{
	unsigned int e;

	for (e = 0; e < s->nr_events; e++)
		if (archpmu_counter_bit(cc->slot[e].counter) & bits)
			return e;
	return ~0U;
}

static const char perf_fix[] =
	"a perf_event_open user, or the NMI watchdog: 'sysctl kernel.nmi_watchdog=0' frees it";

/* Say who holds the counters that event @bad could have used on @cc's CPU. */
static void name_holder(const struct archpmu_session *s, const struct count_cpu *cc,
			u64 perf_held, unsigned int bad, struct archpmu_count_open *out)
{
	const struct archpmu_event *ev = &s->ev[bad];
	u64 wanted = archpmu_candidate_counters(&cc->desc, ev);
	struct archpmu_session *holder;

	if (wanted & perf_held) {
		out->busy_holder = ARCHPMU_HOLDER_PERF;
		if (ev->flags & ARCHPMU_EVENT_PIN)
			pr_warn("CPU %u: event %u: GP counter %u is held by perf (%s)\n",
				cc->cpu, bad, ev->counter, perf_fix);
		else
			pr_warn("CPU %u: event %u does not fit: GP counters %#llx are held by perf (%s)\n",
				cc->cpu, bad, wanted & perf_held, perf_fix);
		return;
	}
	holder = holder_of(cc->cpu, wanted & cpu_taken[cc->cpu]);
	if (!holder)
		return;
	out->busy_holder = ARCHPMU_HOLDER_SESSION;
	out->busy_pid = pid_vnr(holder->tgid);
	pr_warn("CPU %u: event %u does not fit: the counters it could use are held by the archpmu session of pid %d (%s)\n",
		cc->cpu, bad, holder->pid, holder->comm);
}

/* Allocate on every CPU around other sessions' counters and @perf_held. */
static int session_allocate(struct archpmu_session *s, u64 perf_held,
			    struct archpmu_count_open *out)
{
	u32 counters[ARCHPMU_MAX_EVENTS];
	unsigned int c, e, bad = 0;
	int ret;

	for (c = 0; c < s->nr_cpus; c++) {
		struct count_cpu *cc = &s->cpus[c];

		out->bad_cpu = cc->cpu;
		ret = archpmu_allocate(&cc->desc, s->ev, s->nr_events,
				       cpu_taken[cc->cpu] | perf_held, counters, &bad);
		/* Held counters matter only if the events fit on a free PMU. */
		if (ret == -EBUSY)
			ret = archpmu_allocate(&cc->desc, s->ev, s->nr_events, 0, counters,
					       &bad) ?: -EBUSY;
		if (ret) {
			out->bad_event = bad;
			if (ret == -EBUSY)
				name_holder(s, cc, perf_held, bad, out);
			return ret;
		}
		cc->used = 0;
		for (e = 0; e < s->nr_events; e++) {
			cc->slot[e].counter = counters[e];
			cc->used |= archpmu_counter_bit(counters[e]);
		}
	}
	out->bad_cpu = ~0U;
	return 0;
}

/*
 * Validate, allocate and take perf's reservation of the GP counters the
 * session needs: those it uses, or, for a session of fixed counters only,
 * one more, so perf stays out (perf_share.c). A counter perf turns out to
 * hold is allocated around and the plan made again; nothing is programmed.
 */
static int session_plan(struct archpmu_session *s, struct archpmu_count_open *out)
{
	u64 perf_held = 0, exists = 0, gp;
	unsigned int c, e;
	u32 failed;
	int ret;

	lockdep_assert_held(&count_lock);
	for (c = 0; c < s->nr_cpus; c++) {
		struct count_cpu *cc = &s->cpus[c];

		out->bad_cpu = cc->cpu;
		ret = archpmu_enum_get(cc->cpu, &cc->desc);
		if (ret)
			return ret;
		for (e = 0; e < s->nr_events; e++) {
			ret = archpmu_check_event(&cc->desc, &s->ev[e]);
			if (ret) {
				out->bad_event = e;
				return ret;
			}
		}
		exists |= cc->desc.gp_mask & GP_BITS;
	}
	out->bad_cpu = ~0U;

	for (;;) {
		if (exists && !(exists & ~perf_held)) {
			out->busy_holder = ARCHPMU_HOLDER_PERF;
			out->bad_cpu = s->cpus[0].cpu;
			pr_warn("perf holds every GP counter (%s); archpmu and perf cannot share the PMU: stop perf first\n",
				perf_fix);
			return -EBUSY;
		}
		ret = session_allocate(s, perf_held, out);
		if (ret)
			return ret;
		gp = 0;
		for (c = 0; c < s->nr_cpus; c++)
			gp |= used_gp(&s->cpus[c]);
		if (!gp && exists)
			gp = BIT_ULL(__ffs64(exists & ~perf_held));
		ret = archpmu_reserve_gp(gp, &failed);
		if (!ret) {
			s->gp_reserved = gp;
			return 0;
		}
		perf_held |= BIT_ULL(failed);	/* at most one round per counter */
	}
}

/*
 * Create, check and program a session (not yet the file's); on any error
 * nothing of it is left. @cmd's out fields say what was refused.
 */
static int session_create(struct archpmu_file *f, struct archpmu_count_open *cmd,
			  struct archpmu_session **out)
{
	struct archpmu_event __user *uev = u64_to_user_ptr(cmd->events);
	struct archpmu_session *s;
	u32 *cpus = NULL;
	unsigned int c;
	int ret;

	cmd->bad_event = ~0U;
	cmd->bad_cpu = ~0U;
	cmd->busy_holder = ARCHPMU_HOLDER_UNKNOWN;
	cmd->busy_pid = 0;
	if (!perfmon_capable())
		return -EPERM;
	if (cmd->flags || cmd->__reserved0 || cmd->__reserved[0] || cmd->__reserved[1] ||
	    !cmd->nr_events)
		return -EINVAL;
	if (cmd->nr_events > ARCHPMU_MAX_EVENTS || cmd->nr_cpus > nr_cpu_ids)
		return -E2BIG;
	if (f->session)
		return -EALREADY;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	s->pid = task_tgid_nr(current);
	s->tgid = get_task_pid(current, PIDTYPE_TGID);
	get_task_comm(s->comm, current);
	s->nr_events = cmd->nr_events;
	INIT_DELAYED_WORK(&s->fold_work, fold_work_fn);
	s->buf = kzalloc(sizeof(*s->buf), GFP_KERNEL);
	if (!s->buf) {
		ret = -ENOMEM;
		goto err_free;
	}
	/* Every user input is in before the locks (see the top of this file). */
	if (copy_from_user(s->ev, uev, s->nr_events * sizeof(*s->ev))) {
		ret = -EFAULT;
		goto err_free;
	}
	if (cmd->nr_cpus) {
		cpus = vmemdup_user(u64_to_user_ptr(cmd->cpus),
				    array_size(cmd->nr_cpus, sizeof(*cpus)));
		if (IS_ERR(cpus)) {
			ret = PTR_ERR(cpus);
			cpus = NULL;
			goto err_free;
		}
	}

	cpus_read_lock();
	mutex_lock(&count_lock);
	ret = session_cpus(s, cpus, cmd->nr_cpus, cmd);
	if (ret)
		goto err_unlock;
	ret = session_plan(s, cmd);
	if (ret)
		goto err_unlock;
	s->vals = kvcalloc(s->nr_cpus * s->nr_events, sizeof(*s->vals), GFP_KERNEL);
	if (!s->vals) {
		ret = -ENOMEM;
		goto err_release;
	}
	for (c = 0; c < s->nr_cpus; c++) {
		struct count_cpu *cc = &s->cpus[c];

		cmd->bad_cpu = cc->cpu;
		ret = cpu_save(s, cc);
		if (ret) {
			if (ret == -EBUSY) {
				cmd->busy_holder = ARCHPMU_HOLDER_AGENT;
				cmd->bad_event = event_on(s, cc, cc->agent_busy);
			}
			goto err_release;
		}
	}
	for (c = 0; c < s->nr_cpus; c++) {
		cmd->bad_cpu = s->cpus[c].cpu;
		ret = cpu_program(s, &s->cpus[c], false);
		if (ret)
			goto err_release;
		cpu_taken[s->cpus[c].cpu] |= s->cpus[c].used;
	}
	cmd->bad_cpu = ~0U;
	cmd->nr_cpus_opened = s->nr_cpus;
	s->fold_period = fold_period(s);
	list_add(&s->node, &count_sessions);
	mutex_unlock(&count_lock);
	cpus_read_unlock();
	kvfree(cpus);
	*out = s;
	return 0;

err_release:
	session_teardown(s);
err_unlock:
	mutex_unlock(&count_lock);
	cpus_read_unlock();
err_free:
	kvfree(cpus);
	session_free(s);
	return ret;
}

/*
 * COUNT_OPEN. The session becomes the file's only once everything the
 * caller is told has been written back: a failure there (EFAULT) destroys it
 * like any other refusal.
 */
static int count_open(struct archpmu_file *f, struct archpmu_count_open *cmd,
		      void __user *ubuf, u32 user_size)
{
	struct archpmu_event __user *uev = u64_to_user_ptr(cmd->events);
	struct archpmu_session *s = NULL;
	unsigned int e;
	int ret;

	ret = session_create(f, cmd, &s);
	for (e = 0; !ret && e < s->nr_events; e++)
		if (put_user(s->cpus[0].slot[e].counter, &uev[e].counter))
			ret = -EFAULT;
	if (ret)
		cmd->nr_cpus_opened = 0;
	/* The out fields say which event and CPU, even on a refusal. */
	if (copy_to_user(ubuf, cmd, min_t(size_t, user_size, sizeof(*cmd))))
		ret = -EFAULT;
	if (ret) {
		if (s)
			session_destroy(s);
		return ret;
	}
	f->session = s;
	return 0;
}

static int session_ctl(struct archpmu_session *s, unsigned int cmd)
{
	u64 now = ktime_get_ns();
	unsigned int c;
	int ret = 0, err;

	cpus_read_lock();
	mutex_lock(&count_lock);
	for (c = 0; c < s->nr_cpus; c++) {
		struct count_cpu *cc = &s->cpus[c];

		err = 0;
		switch (cmd) {
		case ARCHPMU_IOC_COUNT_START:
			if (s->running)
				break;
			err = cpu_read(s, cc, true, true);
			cc->since = now;
			break;
		case ARCHPMU_IOC_COUNT_STOP:
			if (!s->running)
				break;
			err = cpu_read(s, cc, true, false);
			times_stop(cc, now);
			break;
		default:	/* ARCHPMU_IOC_COUNT_RESET */
			err = cpu_zero(s, cc);
			cc->enabled_ns = 0;
			cc->running_ns = 0;
			cc->since = now;
			break;
		}
		if (!ret)
			ret = err;
	}
	if (cmd == ARCHPMU_IOC_COUNT_START && !s->running) {
		s->running = true;
		schedule_delayed_work(&s->fold_work, s->fold_period);
	} else if (cmd == ARCHPMU_IOC_COUNT_STOP) {
		s->running = false;
	}
	mutex_unlock(&count_lock);
	cpus_read_unlock();
	return ret;
}

static int session_read(struct archpmu_session *s, struct archpmu_count_read *cmd)
{
	struct archpmu_count_value __user *uval = u64_to_user_ptr(cmd->values);
	u32 needed = s->nr_events * s->nr_cpus;
	struct archpmu_count_value *vals = s->vals;
	unsigned int c, e, n = 0;
	u64 now;
	int ret = 0;

	if (cmd->nr_values < needed) {
		cmd->nr_values = needed;
		return -ENOSPC;
	}

	cpus_read_lock();
	mutex_lock(&count_lock);
	now = ktime_get_ns();
	for (c = 0; c < s->nr_cpus; c++) {
		struct count_cpu *cc = &s->cpus[c];
		u64 enabled = cc->enabled_ns, running = cc->running_ns;
		int err = cpu_read(s, cc, false, false);

		if (!ret)
			ret = err;
		if (s->running) {
			enabled += now - cc->since;
			if (cc->programmed)
				running += now - cc->since;
		}
		for (e = 0; e < s->nr_events; e++, n++) {
			vals[n].cpu = cc->cpu;
			vals[n].event = e;
			vals[n].counter = cc->slot[e].counter;
			vals[n].flags = cc->programmed ? 0 : ARCHPMU_VALUE_OFFLINE;
			vals[n].value = cc->slot[e].total;
			vals[n].time_enabled = enabled;
			vals[n].time_running = running;
		}
	}
	mutex_unlock(&count_lock);
	cpus_read_unlock();

	cmd->nr_values = needed;
	cmd->timestamp_ns = now;
	if (!ret && copy_to_user(uval, vals, needed * sizeof(*vals)))
		ret = -EFAULT;
	return ret;
}

struct archpmu_file *archpmu_file_alloc(void)
{
	struct archpmu_file *f = kzalloc(sizeof(*f), GFP_KERNEL);

	if (f)
		mutex_init(&f->lock);
	return f;
}

void archpmu_file_release(struct archpmu_file *f)
{
	if (f->session)
		session_destroy(f->session);
	kfree(f);
}

long archpmu_count_ioctl(struct archpmu_file *f, unsigned int cmd, void *cmd_buf,
			 void __user *ubuf, u32 user_size)
{
	struct archpmu_count_ctl *ctl = cmd_buf;
	long ret;

	mutex_lock(&f->lock);
	switch (cmd) {
	case ARCHPMU_IOC_COUNT_OPEN:
		ret = count_open(f, cmd_buf, ubuf, user_size);
		break;
	case ARCHPMU_IOC_COUNT_READ: {
		struct archpmu_count_read *rd = cmd_buf;

		if (rd->flags || rd->__reserved0)
			ret = -EINVAL;
		else if (!f->session)
			ret = -EBADFD;
		else
			ret = session_read(f->session, rd);
		if ((!ret || ret == -ENOSPC) &&
		    copy_to_user(ubuf, rd, min_t(size_t, user_size, sizeof(*rd))))
			ret = -EFAULT;
		break;
	}
	default:	/* START, STOP, RESET */
		if (ctl->flags)
			ret = -EINVAL;
		else if (!f->session)
			ret = -EBADFD;
		else
			ret = session_ctl(f->session, cmd);
		break;
	}
	mutex_unlock(&f->lock);
	return ret;
}

/* --- CPU hotplug and suspend ---------------------------------------------- */

/* Runs on @cpu as it goes down: keep its counts, leave its PMU as found. */
void archpmu_count_cpu_offline(unsigned int cpu)
{
	struct archpmu_session *s;
	u64 now = ktime_get_ns();

	mutex_lock(&count_lock);
	list_for_each_entry(s, &count_sessions, node) {
		struct count_cpu *cc = session_cpu(s, cpu);

		if (!cc || !cc->programmed)
			continue;
		cpu_read(s, cc, true, false);
		if (s->running)
			times_stop(cc, now);
		cpu_restore(s, cc);
	}
	mutex_unlock(&count_lock);
}

/* Runs on @cpu as it comes up: put the session's counters back. */
void archpmu_count_cpu_online(unsigned int cpu)
{
	struct archpmu_session *s;
	u64 now = ktime_get_ns();

	mutex_lock(&count_lock);
	list_for_each_entry(s, &count_sessions, node) {
		struct count_cpu *cc = session_cpu(s, cpu);

		if (!cc || cc->programmed)
			continue;
		if (cpu_save(s, cc) || cpu_program(s, cc, s->running)) {
			pr_warn("CPU %u: session of pid %d (%s) could not be resumed here; its counts stay as they were\n",
				cpu, s->pid, s->comm);
			continue;
		}
		if (s->running) {
			cc->enabled_ns += now - cc->since;	/* the offline time */
			cc->since = now;
		}
	}
	mutex_unlock(&count_lock);
}

/*
 * Suspend loses the PMU state: fold before, reprogram after. (Non-boot CPUs
 * also go through the hotplug callbacks above.)
 */
static int archpmu_pm_notify(struct notifier_block *nb, unsigned long action,
			     void *data)
{
	struct archpmu_session *s;
	unsigned int c;

	if (action != PM_SUSPEND_PREPARE && action != PM_POST_SUSPEND &&
	    action != PM_HIBERNATION_PREPARE && action != PM_POST_HIBERNATION)
		return NOTIFY_DONE;
	cpus_read_lock();
	mutex_lock(&count_lock);
	list_for_each_entry(s, &count_sessions, node) {
		for (c = 0; c < s->nr_cpus; c++) {
			struct count_cpu *cc = &s->cpus[c];

			if (!cc->programmed)
				continue;
			if (action == PM_SUSPEND_PREPARE || action == PM_HIBERNATION_PREPARE)
				cpu_read(s, cc, false, false);
			else
				cpu_program(s, cc, s->running);
		}
	}
	mutex_unlock(&count_lock);
	cpus_read_unlock();
	return NOTIFY_OK;
}

static struct notifier_block archpmu_pm_nb = {
	.notifier_call = archpmu_pm_notify,
};

int archpmu_count_init(void)
{
	int ret;

	cpu_taken = kcalloc(nr_cpu_ids, sizeof(*cpu_taken), GFP_KERNEL);
	if (!cpu_taken)
		return -ENOMEM;
	ret = register_pm_notifier(&archpmu_pm_nb);
	if (ret) {
		kfree(cpu_taken);
		cpu_taken = NULL;
	}
	return ret;
}

void archpmu_count_exit(void)
{
	unregister_pm_notifier(&archpmu_pm_nb);
	kfree(cpu_taken);
	cpu_taken = NULL;
}
