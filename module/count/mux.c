// SPDX-License-Identifier: GPL-2.0
/*
 * Multiplexing: on a CPU whose counters cannot take every event of a
 * session at once, the groups take turns (own/mux_plan.c decides which).
 * Each turn is one round of cross-calls, a batch per multiplexing CPU: it
 * stops the session's counters there, reads the outgoing events, programs
 * the incoming ones from zero and starts the counters again. The claim's
 * view of which event is on which counter changes in the batch's hook, on
 * the CPU with interrupts disabled, so the context-switch probe of a task
 * session (own/gate.c) never sees half a turn; each event's time on the PMU
 * is taken there too, so time_running is what the CPU counted.
 *
 * Locking: under archpmu_own_lock, as every operation on the claims; the
 * counts of multiplexed sessions are folded in process context (no NMI
 * touches a counting session).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/lockdep.h>
#include <linux/moduleparam.h>
#include <linux/string.h>

#include "count.h"

#define MUX_INTERVAL_MAX_MS	1000

/* perf's default turn (perf_event_mux_interval_ms at HZ=250). */
static uint mux_interval_ms = 4;

static int interval_set(const char *text, const struct kernel_param *kp)
{
	uint v;
	int ret = kstrtouint(text, 0, &v);

	if (ret || !v || v > MUX_INTERVAL_MAX_MS) {
		pr_err("mux_interval_ms=%.*s: allowed 1-%u milliseconds\n",
		       (int)strcspn(text, "\n"), text, MUX_INTERVAL_MAX_MS);
		return -EINVAL;
	}
	WRITE_ONCE(mux_interval_ms, v);
	return 0;
}

static const struct kernel_param_ops interval_ops = {
	.set = interval_set,
	.get = param_get_uint,
};

module_param_cb(mux_interval_ms, &interval_ops, &mux_interval_ms, 0644);
MODULE_PARM_DESC(mux_interval_ms,
		 "Milliseconds between turns of multiplexed event groups (1-1000, default 4)");

unsigned long archpmu_mux_period(void)
{
	return max(1UL, msecs_to_jiffies(READ_ONCE(mux_interval_ms)));
}

bool archpmu_mux_any(const struct archpmu_claims *cl)
{
	unsigned int i;

	for (i = 0; i < cl->nr_cpus; i++)
		if (cl->cpus[i].mux && !cl->cpus[i].mux_settled)
			return true;
	return false;
}

/*
 * The claim's running clock, on its CPU: the time its session's tasks ran
 * there, or for a CPU session (turns run only while it is started) its time
 * running, as count.c's read computes it.
 */
static u64 clock_local(const struct archpmu_claims *cl, const struct archpmu_claim *c)
{
	if (cl->task_here)
		return archpmu_claim_task_ns(c, ktime_get_mono_fast_ns());
	return c->times.running_ns + (c->programmed ? ktime_get_ns() - c->times.since : 0);
}

/* Does @counter change hands in this turn (it is not among those kept)? */
static bool rotates(const struct archpmu_claim *c, u32 counter)
{
	return counter != ARCHPMU_NO_COUNTER &&
	       !(archpmu_counter_bit(counter) & c->mux_keep);
}

/*
 * Before the turn's ops: stop the rotating counters (a task session's gate
 * stops them all) and give the outgoing events their time up to now; then
 * switch the view to the next turn's counters.
 */
static void turn_local(struct archpmu_batch *b)
{
	struct archpmu_claim *c = container_of(b, struct archpmu_claim, batch);
	struct archpmu_cpu_ctx *ctx = this_cpu_ptr(&archpmu_cpu_ctx);
	const struct archpmu_claims *cl = c->claims;
	u64 rot = c->used & ~c->mux_keep;
	unsigned int e;
	int idx;

	lockdep_assert_irqs_disabled();
	if (cl->task_here)
		archpmu_claim_gate_local(cl, c, false);
	else
		archpmu_counters_pause_local(rot);
	c->mux_t0 = clock_local(cl, c);
	for (e = 0; e < cl->nr_events; e++) {
		if (archpmu_claim_placed(c, e) && c->mux_t0 > c->mux_mark)
			c->ev_running[e] += c->mux_t0 - c->mux_mark;
		idx = archpmu_ctx_index(c->hw[e].counter);
		if (idx >= 0 && READ_ONCE(ctx->owner[idx]) == &c->hw[e])
			WRITE_ONCE(ctx->owner[idx], NULL);
		WRITE_ONCE(c->hw[e].counter, c->mux_next[e]);
	}
	for (e = 0; e < cl->nr_events; e++) {
		idx = archpmu_ctx_index(c->hw[e].counter);
		if (idx >= 0)
			WRITE_ONCE(ctx->owner[idx], &c->hw[e]);
	}
}

/*
 * After them, the incoming events started: their time runs from here. The
 * events kept on their counters counted all along (a task session's stopped
 * with the gate, and its clock with them).
 */
static void turned_local(struct archpmu_batch *b)
{
	struct archpmu_claim *c = container_of(b, struct archpmu_claim, batch);
	const struct archpmu_claims *cl = c->claims;
	unsigned int e;
	u64 now;

	if (cl->task_here)
		archpmu_claim_gate_sync_local(b);
	now = clock_local(cl, c);
	for (e = 0; e < cl->nr_events; e++)
		if (archpmu_claim_placed(c, e) && !rotates(c, c->hw[e].counter) && now > c->mux_t0)
			c->ev_running[e] += now - c->mux_t0;
	c->mux_mark = max(now, c->mux_t0);
}

/*
 * The batch of @c's next turn (stopped by its before hook): read the
 * rotating events, program the next turn's on the rotating counters (the
 * unused ones disabled), start them. A task session's counters start with
 * its gate, in the after hook.
 */
static void build_turn(struct archpmu_claims *cl, struct archpmu_claim *c)
{
	bool enable = !cl->task_here;
	u64 rot, fixed_val = 0, fixed_mask, evtsel;
	struct archpmu_batch *b = &c->batch;
	unsigned int e;
	u32 g;

	for (e = 0; e < cl->nr_events; e++) {
		c->mux_prev[e] = c->hw[e].counter;
		c->mux_next[e] = c->hw[e].counter;
	}
	c->mux_first = archpmu_mux_turn(cl->mux_scratch, &c->desc, cl->ev, cl->nr_events,
					c->mux_absent, c->used & ~c->mux_stay, c->mux_first,
					c->mux_next);
	/* An event that keeps its counter (a fixed counter's, say) counts on. */
	c->mux_keep = c->mux_stay;
	for (e = 0; e < cl->nr_events; e++)
		if (c->mux_next[e] == c->mux_prev[e])
			c->mux_keep |= archpmu_counter_bit(c->mux_next[e]);
	rot = c->used & ~c->mux_keep;

	archpmu_batch_init(b, turn_local, turned_local, NULL);
	/* The view is switched before the ops: they must all run, in the same call. */
	b->indivisible = true;
	b->best_effort = true;
	for (e = 0; e < cl->nr_events; e++)
		if (rotates(c, c->mux_prev[e]))
			archpmu_batch_read(b, archpmu_claim_counter_msr(c, c->mux_prev[e], false),
					   &c->raw[e]);
	/* Stopped by the before hook, the counters are written before v1's EN starts them. */
	for (e = 0; e < cl->nr_events; e++) {
		if (!rotates(c, c->mux_next[e]))
			continue;
		archpmu_batch_write(b, archpmu_claim_counter_msr(c, c->mux_next[e], true), 0);
		if (c->mux_next[e] & ARCHPMU_COUNTER_FIXED)
			fixed_val |= archpmu_claim_event_ctl(cl, c, e, c->mux_next[e], enable);
	}
	for (g = 0; g < ARCHPMU_LEGACY_GP; g++) {
		if (!(rot & BIT_ULL(g)))
			continue;
		evtsel = 0;
		for (e = 0; e < cl->nr_events; e++)
			if (c->mux_next[e] == g)
				evtsel = archpmu_claim_event_ctl(cl, c, e, g, enable);
		archpmu_batch_write(b, ARCHPMU_MSR_PERFEVTSEL0 + g, evtsel);
	}
	fixed_mask = archpmu_fixed_ctrl_mask(rot);
	if (fixed_mask)
		archpmu_batch_modify(b, ARCHPMU_MSR_FIXED_CTR_CTRL, fixed_val, fixed_mask);
	c->ops->ack(b, rot);
	if (enable)
		c->ops->enable(b, rot);
}

/* After the round: fold the outgoing events; the incoming ones count from zero. */
static void turned(struct archpmu_claims *cl, struct archpmu_claim *c)
{
	unsigned int e;

	if (c->batch.err)
		pr_err("CPU %u: a multiplexing turn failed (%d); its counts are incomplete\n",
		       c->cpu, c->batch.err);
	for (e = 0; e < cl->nr_events; e++)
		if (!c->batch.err && rotates(c, c->mux_prev[e]))
			archpmu_count_fold(&c->hw[e], c->raw[e],
					   archpmu_claim_width_mask(c, c->mux_prev[e]));
	for (e = 0; e < cl->nr_events; e++)
		if (rotates(c, c->mux_next[e]))
			local64_set(&c->hw[e].prev, 0);
}

int archpmu_mux_turn_all(struct archpmu_claims *cl)
{
	unsigned int i;
	int ret;

	lockdep_assert_held(&archpmu_own_lock);
	/* Between suspend and resume the PMU has lost what we programmed. */
	if (cl->suspended)
		return 0;
	archpmu_claims_round_begin(cl);
	for (i = 0; i < cl->nr_cpus; i++) {
		struct archpmu_claim *c = &cl->cpus[i];

		/* Nothing to turn where all that can be on is on at once. */
		if (!c->mux || !c->programmed || c->mux_settled)
			continue;
		/* Nor where the session's tasks have not run since the last turn. */
		if (cl->task_here && !READ_ONCE(c->task_in) &&
		    archpmu_claim_task_ns(c, ktime_get_mono_fast_ns()) == c->mux_mark)
			continue;
		build_turn(cl, c);
		archpmu_claims_round_add(cl, c);
	}
	ret = archpmu_claims_round_run(cl);
	for (i = 0; i < cl->nr_cpus; i++)
		if (cpumask_test_cpu(cl->cpus[i].cpu, cl->mask))
			turned(cl, &cl->cpus[i]);
	return ret;
}

u64 archpmu_mux_running(const struct archpmu_claim *c, unsigned int e, u64 running)
{
	u64 t = c->ev_running[e];

	if (archpmu_claim_placed(c, e) && running > c->mux_mark)
		t += running - c->mux_mark;
	return t;
}

void archpmu_mux_zero(struct archpmu_claim *c)
{
	memset(c->ev_running, 0, sizeof(c->ev_running));
	c->mux_mark = 0;
}
