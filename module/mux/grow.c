// SPDX-License-Identifier: GPL-2.0
/*
 * A multiplexing session's pool grows into counters others let go after it
 * opened (perf's groups get them at their next rotation too): before a
 * turn, on each CPU whose groups take turns or are crowded out, the counters
 * they could use that no session holds are taken (own/), read in one round
 * of cross-calls for all those CPUs, and those no other agent counts with
 * join the pool at the turn (mux.c). A counter another agent uses is given
 * back and left alone for GROW_RETRY_MS, so a busy one costs a round a
 * second, not one a turn.
 */
#include <linux/jiffies.h>
#include <linux/lockdep.h>

#include "mux.h"

#define GROW_RETRY_MS	1000

/* The counters @c's CPU could use and does not hold. */
static u64 to_take(const struct archpmu_claims *cl, const struct archpmu_claim *c)
{
	const struct archpmu_mux_cpu *mc = archpmu_mux_cpu(c);
	u64 want;

	if (!c->programmed || !c->partial || (!mc->turns && !mc->crowded))
		return 0;
	want = archpmu_mux_wanted(&c->desc, cl->ev, cl->nr_events, c->absent) & ~c->used;
	if (time_before(jiffies, mc->busy_until))
		want &= ~mc->busy;
	/* PERF_METRICS goes with fixed counter 3, which its events' slots need. */
	if (!((c->used | want) & archpmu_counter_bit(ARCHPMU_COUNTER_FIXED | 3)))
		want &= ~ARCHPMU_GLOBAL_PERF_METRICS;
	return want;
}

/* After the read: keep what no other agent uses, and plan the turns with it. */
static void took(struct archpmu_mux *m, struct archpmu_claim *c)
{
	struct archpmu_mux_cpu *mc = archpmu_mux_cpu(c);
	u64 busy = c->batch.err ? mc->taking : archpmu_found_in_use(mc->taking, &mc->found);
	u64 keep = mc->taking & ~busy;

	mc->taking = 0;
	if (busy) {
		archpmu_own_give_back(m->cl, c, busy);
		mc->busy = busy;
		mc->busy_until = jiffies + msecs_to_jiffies(GROW_RETRY_MS);
	}
	if (!keep)
		return;
	archpmu_claim_keep_found(c, keep, &mc->found);
	mc->grow = keep;
	archpmu_mux_replan(m, c, (c->used | keep) & ~mc->stay);
}

void archpmu_mux_grow(struct archpmu_mux *m)
{
	struct archpmu_claims *cl = m->cl;
	bool any = false;
	unsigned int i;

	lockdep_assert_held(&archpmu_own_lock);
	archpmu_claims_round_begin(cl);
	for (i = 0; i < cl->nr_cpus; i++) {
		struct archpmu_claim *c = &cl->cpus[i];
		struct archpmu_mux_cpu *mc = archpmu_mux_cpu(c);
		u64 want = to_take(cl, c);

		mc->taking = want ? archpmu_own_take_more(cl, c, want) : 0;
		if (!mc->taking)
			continue;
		archpmu_claim_build_read(c, mc->taking, &mc->found);
		archpmu_claims_round_add(cl, c);
		any = true;
	}
	if (!any)
		return;
	archpmu_claims_round_run(cl);
	for (i = 0; i < cl->nr_cpus; i++)
		if (cpumask_test_cpu(cl->cpus[i].cpu, cl->mask))
			took(m, &cl->cpus[i]);
}
