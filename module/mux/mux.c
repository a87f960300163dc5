// SPDX-License-Identifier: GPL-2.0
/*
 * Multiplexing: on a CPU whose counters cannot take every event of a
 * session at once, the groups take turns (plan.c decides which). Each turn
 * is one round of cross-calls, a batch per multiplexing CPU: it stops the
 * session's counters there, reads the outgoing events, programs the
 * incoming ones from zero and starts the counters again. The claim's view
 * of which event is on which counter changes in the batch's hook, on the
 * CPU with interrupts disabled, so the context-switch probe of a task
 * session (its gate, task/) never sees half a turn; each event's time on the PMU
 * is taken there too, so time_running is what the CPU counted.
 *
 * Locking: under archpmu_own_lock, as every operation on the claims; the
 * counts of multiplexed sessions are folded in process context (no NMI
 * touches a counting session).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/lockdep.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "mux.h"

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

static unsigned long turn_period(void)
{
	return max(1UL, msecs_to_jiffies(READ_ONCE(mux_interval_ms)));
}

/* Does @c's CPU take turns (some of its groups rotate: mux_place())? */
static bool takes_turns(const struct archpmu_claim *c)
{
	return c->partial && archpmu_mux_cpu(c)->turns;
}

/* Is there work for the turns: groups that rotate, or wait for counters? */
static bool has_turns(const struct archpmu_claims *cl)
{
	unsigned int i;

	for (i = 0; i < cl->nr_cpus; i++)
		if (takes_turns(&cl->cpus[i]) ||
		    (cl->cpus[i].partial && archpmu_mux_cpu(&cl->cpus[i])->crowded))
			return true;
	return false;
}

/* Does @counter change hands in this turn (it is not among those kept)? */
static bool rotates(const struct archpmu_mux_cpu *mc, u32 counter)
{
	return counter != ARCHPMU_NO_COUNTER &&
	       !(archpmu_counter_bit(counter) & mc->keep);
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
	struct archpmu_mux_cpu *mc = archpmu_mux_cpu(c);
	u64 rot = c->used & ~mc->keep;
	unsigned int e;
	int idx;

	lockdep_assert_irqs_disabled();
	/* New counters join first; stopped, they need no pause. */
	if (mc->grow) {
		archpmu_claim_grow_local(c, mc->grow);
		mc->joined = mc->grow;
		mc->grow = 0;
	}
	if (cl->scope)
		cl->scope->shut_local(b);
	else
		archpmu_counters_pause_local(rot);
	mc->t0 = cl->clock->running_ns(cl, c);
	for (e = 0; e < cl->nr_events; e++) {
		if (archpmu_claim_placed(c, e) && mc->t0 > mc->on_pmu_mark)
			mc->on_pmu_ns[e] += mc->t0 - mc->on_pmu_mark;
		idx = archpmu_ctx_index(c->hw[e].counter);
		if (idx >= 0 && READ_ONCE(ctx->owner[idx]) == &c->hw[e])
			WRITE_ONCE(ctx->owner[idx], NULL);
		WRITE_ONCE(c->hw[e].counter, mc->next[e]);
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
	struct archpmu_mux_cpu *mc = archpmu_mux_cpu(c);
	unsigned int e;
	u64 now;

	if (cl->scope)
		cl->scope->sync_local(b);
	now = cl->clock->running_ns(cl, c);
	for (e = 0; e < cl->nr_events; e++)
		if (archpmu_claim_placed(c, e) && !rotates(mc, c->hw[e].counter) && now > mc->t0)
			mc->on_pmu_ns[e] += now - mc->t0;
	mc->on_pmu_mark = max(now, mc->t0);
}

/*
 * The batch of @c's next turn (stopped by its before hook): read the
 * rotating events, program the next turn's on the rotating counters (the
 * unused ones disabled), start them. A task session's counters start with
 * its gate, in the after hook.
 */
static void build_turn(struct archpmu_mux *m, struct archpmu_claim *c)
{
	struct archpmu_mux_cpu *mc = archpmu_mux_cpu(c);
	struct archpmu_claims *cl = m->cl;
	bool enable = !cl->scope;
	u64 rot, fixed_val = 0, fixed_mask, evtsel;
	struct archpmu_batch *b = &c->batch;
	/* With the counters that join at this turn (turn_local() adds them). */
	u64 used = c->used | mc->grow;
	unsigned int e;
	u32 g;

	for (e = 0; e < cl->nr_events; e++) {
		mc->prev[e] = c->hw[e].counter;
		mc->next[e] = c->hw[e].counter;
	}
	mc->first = archpmu_mux_turn(m->scratch, &c->desc, cl->ev, cl->nr_events, c->absent,
				     used & ~mc->stay, mc->first, mc->next);
	/* An event that keeps its counter (a fixed counter's, say) counts on. */
	mc->keep = mc->stay;
	for (e = 0; e < cl->nr_events; e++)
		if (mc->next[e] == mc->prev[e])
			mc->keep |= archpmu_counter_bit(mc->next[e]);
	rot = used & ~mc->keep;

	archpmu_batch_init(b, turn_local, turned_local, NULL);
	/* The view is switched before the ops: they must all run, in the same call. */
	b->indivisible = true;
	b->best_effort = true;
	for (e = 0; e < cl->nr_events; e++)
		if (rotates(mc, mc->prev[e]))
			archpmu_batch_read(b, archpmu_claim_counter_msr(c, mc->prev[e], false),
					   &mc->raw[e]);
	/* Stopped by the before hook, the counters are written before v1's EN starts them. */
	for (e = 0; e < cl->nr_events; e++) {
		if (!rotates(mc, mc->next[e]))
			continue;
		archpmu_batch_write(b, archpmu_claim_counter_msr(c, mc->next[e], true), 0);
		if (mc->next[e] & ARCHPMU_COUNTER_FIXED)
			fixed_val |= archpmu_claim_event_ctl(cl, c, e, mc->next[e], enable);
	}
	for (g = 0; g < ARCHPMU_NR_GP; g++) {
		if (!(rot & BIT_ULL(g)))
			continue;
		evtsel = 0;
		for (e = 0; e < cl->nr_events; e++)
			if (mc->next[e] == g)
				evtsel = archpmu_claim_event_ctl(cl, c, e, g, enable);
		archpmu_batch_write(b, archpmu_gp_sel_msr(g), evtsel);
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
	struct archpmu_mux_cpu *mc = archpmu_mux_cpu(c);
	u32 out[ARCHPMU_MAX_EVENTS];
	unsigned int e;

	if (c->batch.err)
		pr_err("CPU %u: a multiplexing turn failed (%d); its counts are incomplete\n",
		       c->cpu, c->batch.err);
	/* Counters the turn never added (its hook did not run) go back. */
	if (mc->grow) {
		archpmu_own_give_back(cl, c, mc->grow);
		mc->grow = 0;
	}
	/* Those it added: which groups are crowded out, and whether they turn, from now. */
	if (mc->joined) {
		archpmu_mux_replan(cl->placer_data, c, c->used & ~mc->stay);
		mc->joined = 0;
	}
	for (e = 0; e < cl->nr_events; e++)
		out[e] = rotates(mc, mc->prev[e]) ? mc->prev[e] : ARCHPMU_NO_COUNTER;
	if (!c->batch.err)
		archpmu_claim_fold(cl, c, mc->raw, out, false);
	for (e = 0; e < cl->nr_events; e++)
		if (rotates(mc, mc->next[e]))
			local64_set(&c->hw[e].prev, 0);
}

/* The next turn on every multiplexing CPU of the session, in one round. */
static int turn_all(struct archpmu_mux *m)
{
	struct archpmu_claims *cl = m->cl;
	unsigned int i;
	int ret;

	lockdep_assert_held(&archpmu_own_lock);
	/* Between suspend and resume the PMU has lost what we programmed. */
	if (cl->suspended)
		return 0;
	archpmu_mux_grow(m);
	archpmu_claims_round_begin(cl);
	for (i = 0; i < cl->nr_cpus; i++) {
		struct archpmu_claim *c = &cl->cpus[i];
		bool grows = archpmu_mux_cpu(c)->grow;

		/* Nothing to turn where all that can be on is on at once. */
		if ((!takes_turns(c) && !grows) || !c->programmed)
			continue;
		/* Nor where the session's tasks have not run since the last turn. */
		if (!grows && cl->scope && !cl->scope->open(cl, c) &&
		    cl->scope->time_ns(cl, c, ktime_get_mono_fast_ns()) ==
		    archpmu_mux_cpu(c)->on_pmu_mark)
			continue;
		build_turn(m, c);
		archpmu_claims_round_add(cl, c);
	}
	ret = archpmu_claims_round_run(cl);
	for (i = 0; i < cl->nr_cpus; i++)
		if (cpumask_test_cpu(cl->cpus[i].cpu, cl->mask))
			turned(cl, &cl->cpus[i]);
	return ret;
}

static void turn_work_fn(struct work_struct *work)
{
	struct archpmu_mux *m = container_of(to_delayed_work(work), struct archpmu_mux, work);

	cpus_read_lock();
	mutex_lock(&archpmu_own_lock);
	if (m->running) {
		turn_all(m);
		if (has_turns(m->cl))
			schedule_delayed_work(&m->work, turn_period());
	}
	mutex_unlock(&archpmu_own_lock);
	cpus_read_unlock();
}

/*
 * A group with a member absent on every CPU of the session (each core type
 * lacking one of them, say) would never count: refused, as before.
 */
static int mux_check(struct archpmu_claims *cl, struct archpmu_count_open *out)
{
	unsigned int lead, end, e, i;
	u64 group;

	for (lead = 0; lead < cl->nr_events; lead = end) {
		end = archpmu_group_end(cl->ev, cl->nr_events, lead);
		group = GENMASK_ULL(end - 1, lead);
		for (i = 0; i < cl->nr_cpus; i++)
			if (!(cl->cpus[i].absent & group))
				break;
		if (i < cl->nr_cpus || !cl->nr_cpus)
			continue;
		/* On a CPU of its core type, why it lacks it; else none is of that type. */
		for (i = 0; i < cl->nr_cpus; i++)
			if (!archpmu_event_elsewhere(&cl->cpus[i].desc, &cl->ev[lead]))
				break;
		if (i == cl->nr_cpus) {
			out->bad_event = lead;
			out->bad_cpu = ~0U;
			return -ENOENT;
		}
		e = __ffs64(cl->cpus[i].absent & group);
		out->bad_event = e;
		out->bad_cpu = cl->cpus[i].cpu;
		return archpmu_check_event(&cl->cpus[i].desc, &cl->ev[e]) ?: -ENOENT;
	}
	return 0;
}

/*
 * Do groups take turns on @c's CPU: does a turn's placement @counters leave
 * an event off that is neither absent nor crowded out?
 */
static bool leaves_off(const struct archpmu_claims *cl, const struct archpmu_claim *c,
		       const u32 *counters, u64 crowded)
{
	unsigned int e;

	for (e = 0; e < cl->nr_events; e++)
		if (counters[e] == ARCHPMU_NO_COUNTER && !((c->absent | crowded) & BIT_ULL(e)))
			return true;
	return false;
}

/*
 * Whether @c's groups take turns; those that do are multiplexed for good.
 * An event absent here takes no turn: it is absent, not multiplexed.
 */
static void set_turns(struct archpmu_claims *cl, struct archpmu_claim *c, bool turns)
{
	struct archpmu_mux_cpu *mc = archpmu_mux_cpu(c);
	unsigned int e;

	mc->turns = turns;
	for (e = 0; e < cl->nr_events && turns; e++)
		if (!(c->absent & BIT_ULL(e)) &&
		    !archpmu_group_stays(cl->ev, cl->nr_events, archpmu_group_lead(cl->ev, e)))
			mc->rotating |= BIT_ULL(e);
}

void archpmu_mux_replan(struct archpmu_mux *m, struct archpmu_claim *c, u64 pool)
{
	struct archpmu_mux_cpu *mc = archpmu_mux_cpu(c);
	struct archpmu_claims *cl = m->cl;
	u64 crowded;
	unsigned int e;

	crowded = archpmu_mux_crowded(m->scratch, &c->desc, cl->ev, cl->nr_events, c->absent,
				      pool);
	/* Off the PMU until now, on from here: its count is scaled as a turn's. */
	mc->rotating |= mc->crowded & ~crowded;
	mc->crowded = crowded;
	/* A turn's placement, as build_turn() will make it. */
	for (e = 0; e < cl->nr_events; e++)
		mc->next[e] = c->hw[e].counter;
	archpmu_mux_turn(m->scratch, &c->desc, cl->ev, cl->nr_events, c->absent, pool,
			 mc->first, mc->next);
	set_turns(cl, c, leaves_off(cl, c, mc->next, crowded));
}

/*
 * Where the session's events do not all fit around @busy: the groups that
 * stay, the free counters the others take turns on, and the first turn.
 */
static int mux_place(struct archpmu_claims *cl, struct archpmu_claim *c, u64 busy,
		     u32 *counters, unsigned int *bad)
{
	struct archpmu_mux *m = cl->placer_data;
	struct archpmu_mux_cpu *mc = archpmu_mux_cpu(c);
	bool turns;
	unsigned int e;
	u64 pool;
	int ret;

	ret = archpmu_mux_plan(m->scratch, &c->desc, cl->ev, cl->nr_events, c->absent, busy,
			       counters, &pool, bad);
	if (ret)
		return ret;
	mc->stay = 0;
	for (e = 0; e < cl->nr_events; e++)
		if (counters[e] != ARCHPMU_NO_COUNTER)
			mc->stay |= archpmu_counter_bit(counters[e]);
	mc->crowded = archpmu_mux_crowded(m->scratch, &c->desc, cl->ev, cl->nr_events, c->absent,
					  pool);
	mc->first = archpmu_mux_turn(m->scratch, &c->desc, cl->ev, cl->nr_events, c->absent,
				     pool, 0, counters);
	/*
	 * Nothing to turn if what can go on is all on at once: then the CPU
	 * holds only the counters in use (the plan adds them), not the pool.
	 */
	turns = leaves_off(cl, c, counters, mc->crowded);
	c->used = turns ? mc->stay | pool : mc->stay;
	mc->rotating = 0;
	set_turns(cl, c, turns);
	return 0;
}

static u32 mux_report(const struct archpmu_claims *cl, const struct archpmu_claim *c,
		      unsigned int e, u64 running, u64 *on_pmu)
{
	const struct archpmu_mux_cpu *mc = archpmu_mux_cpu(c);
	u32 flags = 0;

	*on_pmu = mc->on_pmu_ns[e];
	if (archpmu_claim_placed(c, e) && running > mc->on_pmu_mark)
		*on_pmu += running - mc->on_pmu_mark;
	if (mc->rotating & BIT_ULL(e))
		flags |= ARCHPMU_VALUE_MULTIPLEXED;
	if (mc->crowded & BIT_ULL(e))
		flags |= ARCHPMU_VALUE_CROWDED_OUT;
	return flags;
}

static void mux_reset(struct archpmu_claims *cl, struct archpmu_claim *c)
{
	struct archpmu_mux_cpu *mc = archpmu_mux_cpu(c);

	memset(mc->on_pmu_ns, 0, sizeof(mc->on_pmu_ns));
	mc->on_pmu_mark = 0;
	/* Counted from here: only events that take turns from now on are multiplexed. */
	mc->rotating = 0;
	set_turns(cl, c, mc->turns);
}

static void mux_started(struct archpmu_claims *cl)
{
	struct archpmu_mux *m = cl->placer_data;

	m->running = true;
	if (has_turns(cl))
		schedule_delayed_work(&m->work, turn_period());
}

static void mux_stopped(struct archpmu_claims *cl)
{
	archpmu_mux_stop(cl->placer_data);
}

static const struct archpmu_placer mux_placer = {
	.check = mux_check,
	.place = mux_place,
	.report = mux_report,
	.reset = mux_reset,
	.started = mux_started,
	.stopped = mux_stopped,
};

int archpmu_mux_setup(struct archpmu_mux *m, struct archpmu_claims *cl)
{
	INIT_DELAYED_WORK(&m->work, turn_work_fn);
	m->cl = cl;
	m->scratch = kmalloc(sizeof(*m->scratch), GFP_KERNEL);
	m->cpus = kvcalloc(cl->nr_cpus, sizeof(*m->cpus), GFP_KERNEL);
	if (!m->scratch || !m->cpus)
		return -ENOMEM;	/* archpmu_mux_teardown() frees them */
	cl->placer = &mux_placer;
	cl->placer_data = m;
	return 0;
}

void archpmu_mux_stop(struct archpmu_mux *m)
{
	lockdep_assert_held(&archpmu_own_lock);
	if (!m->cl)
		return;		/* not multiplexing */
	m->running = false;
	/* Not _sync: a turn already running waits for our lock. */
	cancel_delayed_work(&m->work);
}

void archpmu_mux_teardown(struct archpmu_mux *m)
{
	if (!m->cl)
		return;		/* not multiplexing */
	/* Not running any more: a turn still queued finds nothing to do. */
	cancel_delayed_work_sync(&m->work);
	kvfree(m->cpus);
	m->cpus = NULL;
	kfree(m->scratch);
	m->scratch = NULL;
}
