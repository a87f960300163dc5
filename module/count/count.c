// SPDX-License-Identifier: GPL-2.0
/*
 * Counting. Hardware counts are folded into 64-bit totals on every read and
 * by a periodic fold, so they never wrap; a fold of every CPU is one round
 * of cross-calls, a batch per CPU. Time enabled runs while the session is started; time
 * running while its counters are also on the CPU (not while it is offline).
 *
 * Locking: cpus_read_lock(), then archpmu_own_lock. User memory is never
 * touched under either (see session/session.c).
 */
#include <linux/cpu.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/lockdep.h>
#include <linux/math64.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "../notify/notify.h"
#include "count.h"

/* Fold at least this often; faster for narrow counters (see fold_period()). */
#define FOLD_MAX_MS	1000
#define FOLD_MIN_MS	10
/* No counter counts faster than this many events per second. */
#define FASTEST_RATE	20000000000ULL

static struct archpmu_count_cpu *count_cpu(const struct archpmu_count *ct,
					   const struct archpmu_claim *c)
{
	return &ct->cpus[c - ct->cl->cpus];
}

/*
 * A change of a task session's state is its gates closing (it stops; its
 * gates open where its tasks run, cl->scope->start()).
 */
static bool closes_gates(const struct archpmu_claims *cl, bool change)
{
	return change && cl->scope;
}

/*
 * Add to @c's batch the ops that fold its counters; also start or stop them
 * first when @change (to enabled if @enable). The reads follow the state
 * change in the same cross-call.
 */
static void build_read(struct archpmu_count *ct, struct archpmu_claim *c, bool change,
		       bool enable)
{
	struct archpmu_count_cpu *cc = count_cpu(ct, c);
	struct archpmu_claims *cl = ct->cl;
	struct archpmu_batch *b = &c->batch;
	bool close = closes_gates(cl, change);
	bool sampling = archpmu_claims_sampling(cl);
	struct archpmu_msr_op *pause;
	unsigned int i;

	/*
	 * A sampling session's counters are reloaded by the PMI handler, so
	 * they are folded on the CPU, against it (cpu_ctx.h); their overflow
	 * bits are the handler's to clear.
	 */
	archpmu_batch_init(b, close ? cl->scope->close_local :
			   cl->scope ? cl->scope->fold_local : NULL,
			   !sampling ? NULL :
			   change ? cl->sampling_hooks->restart : archpmu_ctx_update_local,
			   &c->change);
	if (change && !close)
		archpmu_claim_add_enable(cl, c, enable);
	pause = sampling ? NULL : archpmu_metrics_pause(cl, c);
	cc->metrics_reset = !!pause;
	for (i = 0; i < cl->nr_events && !sampling; i++)
		if (archpmu_claim_placed(c, i))
			archpmu_batch_read(b, archpmu_claim_counter_msr(c, c->hw[i].counter, false),
					   &cc->raw[i]);
	archpmu_metrics_reset(c, pause);
	/*
	 * For check_foreign(): every event's control register, as the PMU has
	 * it; not where the gate closes, which has just written them.
	 */
	for (i = 0; i < cl->nr_events && !close; i++)
		if (archpmu_claim_controlled(c, i))
			archpmu_batch_read(b, archpmu_claim_ctl_msr(c, i), &cc->ctl_seen[i]);
	c->ops->ack(b, c->used & ~archpmu_ctx_pmi_counters(&c->change));
}

/*
 * The bits of a counter's control register that a task session's gate
 * writes: EN, or a fixed counter's whole nibble (PMI and AnyThread too,
 * which its closed gate clears with the enables).
 */
static u64 task_enables(u32 counter)
{
	if (!(counter & ARCHPMU_COUNTER_FIXED))
		return ARCHPMU_EVTSEL_EN;
	return archpmu_fixed_ctrl_mask(archpmu_counter_bit(counter));
}

/*
 * Has another agent rewritten a control register of ours (@running: the
 * counters should be started)? Each counter is reported once while it stays
 * programmed (until c->programs changes), so an agent that flips a register
 * back and forth is not a flood. The PMI handler of a v1
 * PMU throttles by EN, so EN of a sampling session's GP counter is not
 * compared.
 */
static void check_foreign(struct archpmu_count *ct, struct archpmu_claim *c, bool running)
{
	struct archpmu_count_cpu *cc = count_cpu(ct, c);
	struct archpmu_claims *cl = ct->cl;
	unsigned int e;
	u64 mask, want, seen, bit;

	if (c->batch.err)
		return;
	if (cc->programs != c->programs) {
		cc->programs = c->programs;
		cc->foreign = 0;
	}
	for (e = 0; e < cl->nr_events; e++) {
		if (!archpmu_claim_controlled(c, e))
			continue;
		want = archpmu_claim_ctl_expected(cl, c, e, running, &mask);
		if (archpmu_claims_sampling(cl) && !(c->hw[e].counter & ARCHPMU_COUNTER_FIXED))
			mask &= ~ARCHPMU_EVTSEL_EN;
		/* A task session's enables open and close with its tasks (its gate). */
		if (cl->scope)
			mask &= ~task_enables(c->hw[e].counter);
		seen = cc->ctl_seen[e] & mask;
		want &= mask;
		bit = archpmu_counter_bit(c->hw[e].counter);
		if (seen == want || (cc->foreign & bit))
			continue;
		cc->foreign |= bit;
		archpmu_notify_foreign(cl, c->cpu, c->hw[e].counter,
				       archpmu_claim_ctl_msr(c, e), seen, want);
	}
}

static void fold_claim(struct archpmu_count *ct, struct archpmu_claim *c, bool change,
		       bool running)
{
	struct archpmu_count_cpu *cc = count_cpu(ct, c);
	struct archpmu_claims *cl = ct->cl;
	u32 counters[ARCHPMU_MAX_EVENTS];
	unsigned int i;

	if (!closes_gates(cl, change))
		check_foreign(ct, c, running);
	if (c->batch.err && cc->metrics_reset)
		archpmu_metrics_lost(cl, c);
	if (c->batch.err || archpmu_claims_sampling(cl))
		return;
	for (i = 0; i < cl->nr_events; i++)
		counters[i] = c->hw[i].counter;
	archpmu_claim_fold(cl, c, cc->raw, counters, cc->metrics_reset);
}

/*
 * Fold every programmed claim (changing its state first if @change: for a
 * task session, only to stopped), in one round; @enable: the counters are
 * (to be) started. @here (a task session
 * whose only task is the caller, see struct archpmu_scope's start()): only the
 * claims whose gate opened since their last fold, which for a caller that
 * stayed on its CPU is that CPU's alone.
 */
static int claims_read(struct archpmu_count *ct, bool change, bool enable, bool here)
{
	struct archpmu_claims *cl = ct->cl;
	unsigned int i;
	int ret;

	lockdep_assert_held(&archpmu_own_lock);
	/*
	 * Between suspend and resume the PMU has lost what we programmed, and a
	 * task session's gates are shut (session/hotplug.c).
	 */
	if (cl->suspended && (!change || cl->scope))
		return 0;
	archpmu_claims_round_begin(cl);
	for (i = 0; i < cl->nr_cpus; i++) {
		struct archpmu_claim *c = &cl->cpus[i];

		if (!c->programmed || (here && cl->scope && !cl->scope->ran(cl, c)))
			continue;
		build_read(ct, c, change, enable);
		archpmu_claims_round_add(cl, c);
	}
	ret = archpmu_claims_round_run(cl);
	for (i = 0; i < cl->nr_cpus; i++)
		if (cpumask_test_cpu(cl->cpus[i].cpu, cl->mask))
			fold_claim(ct, &cl->cpus[i], change, enable);
	return ret;
}

/* The same for one claim (hotplug, suspend). */
static int claim_read(struct archpmu_count *ct, struct archpmu_claim *c, bool change,
		      bool enable)
{
	int ret;

	lockdep_assert_held(&archpmu_own_lock);
	if (!c->programmed)
		return 0;
	build_read(ct, c, change, enable);
	ret = archpmu_batch_run(c->cpu, &c->batch);
	fold_claim(ct, c, change, enable);
	return ret;
}

static void task_time_zero_local(struct archpmu_batch *b)
{
	struct archpmu_claim *c = container_of(b, struct archpmu_claim, batch);

	c->claims->scope->time_zero(c->claims, c);
}

/* Zero every claim's counts, and the programmed ones' counters in one round. */
static int claims_zero(struct archpmu_claims *cl)
{
	bool sampling = archpmu_claims_sampling(cl);
	unsigned int i, e;

	archpmu_claims_round_begin(cl);
	for (i = 0; i < cl->nr_cpus; i++) {
		struct archpmu_claim *c = &cl->cpus[i];

		/* A programmed sampling claim's counts are its CPU's to zero (cpu_ctx.h). */
		for (e = 0; e < cl->nr_events && !(sampling && c->programmed); e++) {
			local64_set(&c->hw[e].prev, 0);
			local64_set(&c->hw[e].total, 0);
		}
		if (cl->placer)
			cl->placer->reset(cl, c);
		if (!c->programmed) {
			if (cl->scope)
				cl->scope->time_zero(cl, c);
			continue;
		}
		/* Each counter stopped, zeroed (a sampling session's in its total), restarted. */
		archpmu_batch_init(&c->batch, archpmu_ctx_reset_local,
				   cl->scope ? task_time_zero_local : NULL, &c->change);
		archpmu_claims_round_add(cl, c);
	}
	return archpmu_claims_round_run(cl);
}

static void times_stop(struct archpmu_count *ct, const struct archpmu_claim *c, u64 now)
{
	struct archpmu_count_times *t = &count_cpu(ct, c)->times;

	t->enabled_ns += now - t->since;
	if (c->programmed)
		t->running_ns += now - t->since;
	t->since = now;
}

/* Every claim's times from @now (@zero: from zero). */
static void times_restart(struct archpmu_count *ct, u64 now, bool zero)
{
	unsigned int i;

	for (i = 0; i < ct->cl->nr_cpus; i++) {
		struct archpmu_count_times *t = &ct->cpus[i].times;

		if (zero) {
			t->enabled_ns = 0;
			t->running_ns = 0;
		}
		t->since = now;
	}
}

/*
 * @c's times at @now (a task session's at @task_now, the clock of its
 * gates, ktime_get_mono_fast_ns()): running as struct archpmu_clock's.
 */
static void times_at(const struct archpmu_count *ct, const struct archpmu_claim *c, u64 now,
		     u64 task_now, u64 *enabled, u64 *running)
{
	const struct archpmu_count_times *t = &count_cpu(ct, c)->times;
	const struct archpmu_claims *cl = ct->cl;

	if (cl->scope) {
		*enabled = cl->scope->time_ns(cl, c, task_now);
		*running = *enabled;
		return;
	}
	*enabled = t->enabled_ns + (ct->running ? now - t->since : 0);
	*running = t->running_ns + (ct->running && c->programmed ? now - t->since : 0);
}

static u64 clock_running_ns(const struct archpmu_claims *cl, const struct archpmu_claim *c)
{
	u64 enabled, running;

	times_at(cl->clock_data, c, ktime_get_ns(), cl->scope ? ktime_get_mono_fast_ns() : 0,
		 &enabled, &running);
	return running;
}

static const struct archpmu_clock count_clock = {
	.running_ns = clock_running_ns,
};

static unsigned long fold_period(const struct archpmu_claims *cl)
{
	u64 ms = FOLD_MAX_MS;
	unsigned int i;

	for (i = 0; i < cl->nr_cpus; i++) {
		const struct archpmu_pmu_desc *d = &cl->cpus[i].desc;
		u32 width = min_not_zero(d->gp_width, d->fixed_width ?: d->gp_width);
		/* A quarter of the time the narrowest counter takes to wrap. */
		u64 wrap_ms = width >= 64 ? U64_MAX :
			      div64_u64(BIT_ULL(width), FASTEST_RATE * 4 / MSEC_PER_SEC);

		ms = min(ms, wrap_ms);
	}
	return msecs_to_jiffies(max_t(u64, ms, FOLD_MIN_MS));
}

atomic64_t archpmu_fold_rounds = ATOMIC64_INIT(0);

static void fold_work_fn(struct work_struct *work)
{
	struct archpmu_count *ct =
		container_of(to_delayed_work(work), struct archpmu_count, fold_work);

	cpus_read_lock();
	mutex_lock(&archpmu_own_lock);
	/* Stopped, the counters count nothing: the stop folded them. */
	if (ct->running) {
		atomic64_inc(&archpmu_fold_rounds);
		claims_read(ct, false, true, false);
		schedule_delayed_work(&ct->fold_work, ct->fold_period);
	}
	mutex_unlock(&archpmu_own_lock);
	cpus_read_unlock();
}

int archpmu_count_setup(struct archpmu_count *ct, struct archpmu_claims *cl)
{
	INIT_DELAYED_WORK(&ct->fold_work, fold_work_fn);
	ct->cl = cl;
	ct->running = false;
	ct->fold_period = fold_period(cl);
	ct->vals = kvcalloc(cl->nr_cpus * cl->nr_events, sizeof(*ct->vals), GFP_KERNEL);
	ct->cpus = kvcalloc(cl->nr_cpus, sizeof(*ct->cpus), GFP_KERNEL);
	if (!ct->vals || !ct->cpus)
		return -ENOMEM;		/* teardown frees them */
	cl->clock = &count_clock;
	cl->clock_data = ct;
	return 0;
}

void archpmu_count_teardown(struct archpmu_count *ct)
{
	if (!ct->cl)
		return;		/* never set up */
	/* Not running any more: a fold still queued finds nothing to do. */
	cancel_delayed_work_sync(&ct->fold_work);
	kvfree(ct->vals);
	ct->vals = NULL;
	kvfree(ct->cpus);
	ct->cpus = NULL;
}

int archpmu_count_ctl(struct archpmu_count *ct, unsigned int cmd, bool here)
{
	struct archpmu_claims *cl = ct->cl;
	unsigned int i;
	int ret = 0;
	u8 note = 0;
	u64 now;

	cpus_read_lock();
	mutex_lock(&archpmu_own_lock);
	/* After the lock: a turn or fold before it must not be later than now. */
	now = ktime_get_ns();
	switch (cmd) {
	case ARCHPMU_IOC_COUNT_START:
		if (ct->running)
			break;
		/*
		 * A task session's counters start with its tasks, in
		 * count_started(); a fold first would change nothing.
		 */
		if (!here)
			ret = claims_read(ct, !cl->scope, true, false);
		archpmu_count_started(ct, now, here);
		note = ARCHPMU_GENL_EVENT_SESSION_START;
		break;
	case ARCHPMU_IOC_COUNT_STOP:
		if (!ct->running)
			break;
		note = ARCHPMU_GENL_EVENT_SESSION_STOP;
		if (cl->scope)
			cl->scope->stopping(cl);
		/*
		 * Stopped and folded in one cross-call per CPU, so that short
		 * runs between reads never wrap a counter (it raises no PMI);
		 * here, only the claims that counted.
		 */
		ret = claims_read(ct, true, false, here);
		for (i = 0; i < cl->nr_cpus; i++)
			times_stop(ct, &cl->cpus[i], now);
		/*
		 * A fold still queued finds the session stopped; left queued,
		 * a start soon after finds it pending, and neither a stop nor
		 * a start pays for the timer.
		 */
		ct->running = false;
		if (cl->placer)
			cl->placer->stopped(cl);
		break;
	default:	/* ARCHPMU_IOC_COUNT_RESET */
		ret = claims_zero(cl);
		times_restart(ct, now, true);
		break;
	}
	mutex_unlock(&archpmu_own_lock);
	cpus_read_unlock();
	if (note)
		archpmu_notify_session(cl, note, ct->running);
	return ret;
}

void archpmu_count_started(struct archpmu_count *ct, u64 now, bool here)
{
	lockdep_assert_held(&archpmu_own_lock);
	times_restart(ct, now, false);
	ct->running = true;
	if (ct->cl->scope)
		ct->cl->scope->start(ct->cl, here);
	schedule_delayed_work(&ct->fold_work, ct->fold_period);
	if (ct->cl->placer)
		ct->cl->placer->started(ct->cl);
}

/* Event @e's entry of @c, its CPU's times given. */
static void count_value(const struct archpmu_claims *cl, const struct archpmu_claim *c,
			unsigned int e, u64 enabled, u64 running, bool incomplete,
			struct archpmu_count_value *v)
{
	v->cpu = c->cpu;
	v->event = e;
	v->counter = READ_ONCE(c->hw[e].counter);
	v->flags = (c->programmed ? 0 : ARCHPMU_VALUE_OFFLINE) |
		   (incomplete ? ARCHPMU_VALUE_INCOMPLETE : 0) |
		   (c->absent & BIT_ULL(e) ? ARCHPMU_VALUE_ABSENT : 0);
	v->value = local64_read(&c->hw[e].total);
	v->time_enabled = enabled;
	v->time_running = running;
	/* Multiplexed: scaled by the time its CPU could count (online). */
	if (c->partial) {
		v->time_enabled = running;
		v->flags |= cl->placer->report(cl, c, e, running, &v->time_running);
	}
	/*
	 * Absent: a task's time here counts against it (the scaling then
	 * estimates what it missed); a CPU's does not. An event for another
	 * core type misses nothing here: no time, no scaling.
	 */
	if (c->absent & BIT_ULL(e) &&
	    (!cl->scope || archpmu_event_elsewhere(&c->desc, &cl->ev[e]))) {
		v->time_enabled = 0;
		v->time_running = 0;
	}
}

/* ARCHPMU_COUNT_READ_SUM: @v added into @sum (@first: @sum is @v). */
static void sum_value(struct archpmu_count_value *sum, const struct archpmu_count_value *v,
		      bool first)
{
	if (first) {
		*sum = *v;
		sum->cpu = ARCHPMU_ALL_CPUS;
		return;
	}
	if (sum->counter != v->counter)
		sum->counter = ARCHPMU_NO_COUNTER;
	sum->flags = ((sum->flags | v->flags) & ~ARCHPMU_VALUE_ABSENT) |
		     (sum->flags & v->flags & ARCHPMU_VALUE_ABSENT);
	sum->value += v->value;
	sum->time_enabled += v->time_enabled;
	sum->time_running += v->time_running;
}

int archpmu_count_read(struct archpmu_count *ct, struct archpmu_count_read *cmd, bool here)
{
	struct archpmu_count_value __user *uval = u64_to_user_ptr(cmd->values);
	struct archpmu_claims *cl = ct->cl;
	bool sum = cmd->flags & ARCHPMU_COUNT_READ_SUM;
	u32 needed = sum ? cl->nr_events : cl->nr_events * cl->nr_cpus;
	struct archpmu_count_value *vals = ct->vals;
	unsigned int i, e, n = 0;
	bool incomplete;
	u64 now, task_now;
	int ret;

	if (cmd->nr_values < needed) {
		cmd->nr_values = needed;
		return -ENOSPC;
	}

	cpus_read_lock();
	mutex_lock(&archpmu_own_lock);
	now = ktime_get_ns();
	ret = claims_read(ct, false, ct->running, here);
	incomplete = cl->scope && cl->scope->incomplete(cl);
	task_now = cl->scope ? ktime_get_mono_fast_ns() : 0;
	for (i = 0; i < cl->nr_cpus; i++) {
		struct archpmu_claim *c = &cl->cpus[i];
		u64 enabled, running;

		times_at(ct, c, now, task_now, &enabled, &running);
		for (e = 0; e < cl->nr_events; e++, n++) {
			struct archpmu_count_value v;

			count_value(cl, c, e, enabled, running, incomplete, &v);
			if (sum)
				sum_value(&vals[e], &v, !i);
			else
				vals[n] = v;
		}
	}
	mutex_unlock(&archpmu_own_lock);
	cpus_read_unlock();

	cmd->nr_values = needed;
	cmd->timestamp_ns = now;
	if (!ret && copy_to_user(uval, vals, needed * sizeof(*vals)))
		ret = -EFAULT;
	return ret;
}

int archpmu_count_claim_fold(struct archpmu_count *ct, struct archpmu_claim *c)
{
	return claim_read(ct, c, false, ct->running);
}

/* @c's CPU goes down or suspends: keep its counts, stop its time running. */
void archpmu_count_claim_down(struct archpmu_count *ct, struct archpmu_claim *c)
{
	lockdep_assert_held(&archpmu_own_lock);
	if (ct->cl->scope)
		ct->cl->scope->off(ct->cl, c);
	claim_read(ct, c, !ct->cl->scope, false);
	if (ct->running)
		times_stop(ct, c, ktime_get_ns());
}

/* @c is back on its CPU: the time it was away was enabled, not running. */
void archpmu_count_claim_up(struct archpmu_count *ct, struct archpmu_claim *c)
{
	struct archpmu_count_times *t = &count_cpu(ct, c)->times;
	u64 now = ktime_get_ns();

	lockdep_assert_held(&archpmu_own_lock);
	if (ct->running) {
		t->enabled_ns += now - t->since;
		t->since = now;
	}
}
