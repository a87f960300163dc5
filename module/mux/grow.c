// SPDX-License-Identifier: GPL-2.0
/*
 * A multiplexing session's pool grows into counters others let go after it
 * opened (perf's groups get them at their next rotation too): before a
 * turn, on each CPU whose groups take turns, or are crowded out and would
 * come on, the counters they could use that no session holds are taken
 * (own/), read in one round of cross-calls for all those CPUs, and those no
 * other agent counts with, and perf's reservation lets it have, join the
 * pool at the turn (mux.c), which re-plans the CPU after it. A counter
 * another agent uses or perf holds is given back and left alone for
 * GROW_RETRY_MS, so a busy one costs a round a second, not one a turn.
 */
#include <linux/jiffies.h>
#include <linux/lockdep.h>

#include "mux.h"

#define GROW_RETRY_MS	1000

static u64 slots_bit(void)
{
	return archpmu_counter_bit(ARCHPMU_COUNTER_FIXED | 3);
}

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
	return want;
}

/*
 * Of @bits taken for @c, those worth keeping: PERF_METRICS only with fixed
 * counter 3, which its events' slots need; and where nothing takes turns,
 * only if a crowded-out group then comes on. The others are given back.
 */
static u64 worth(struct archpmu_mux *m, struct archpmu_claim *c, u64 bits)
{
	struct archpmu_mux_cpu *mc = archpmu_mux_cpu(c);
	struct archpmu_claims *cl = m->cl;
	u64 drop = 0;

	if (!((c->used | bits) & slots_bit()))
		drop |= bits & ARCHPMU_GLOBAL_PERF_METRICS;
	if (!mc->turns &&
	    archpmu_mux_crowded(m->scratch, &c->desc, cl->ev, cl->nr_events, c->absent,
				(c->used | (bits & ~drop)) & ~mc->stay) == mc->crowded)
		drop = bits;
	if (drop)
		archpmu_own_give_back(cl, c, drop);
	return bits & ~drop;
}

/* Counters another agent uses, or perf holds: not asked for again for a while. */
static void leave_alone(struct archpmu_mux_cpu *mc, u64 busy)
{
	if (!busy)
		return;
	if (time_before(jiffies, mc->busy_until))
		busy |= mc->busy;
	mc->busy = busy;
	mc->busy_until = jiffies + msecs_to_jiffies(GROW_RETRY_MS);
}

/* After the read: keep what no other agent uses, for the turn to add. */
static void took(struct archpmu_mux *m, struct archpmu_claim *c)
{
	struct archpmu_mux_cpu *mc = archpmu_mux_cpu(c);
	u64 busy = c->batch.err ? mc->taking : archpmu_found_in_use(mc->taking, &mc->found);
	u64 keep, allowed, reserved;

	/* PERF_METRICS is of fixed counter 3's slots: busy with it. */
	if (busy & slots_bit())
		busy |= mc->taking & ARCHPMU_GLOBAL_PERF_METRICS;
	keep = mc->taking & ~busy;
	mc->taking = 0;
	if (busy)
		archpmu_own_give_back(m->cl, c, busy);
	keep = worth(m, c, keep);
	if (keep) {
		allowed = archpmu_own_reserve_more(m->cl, c, keep, &reserved);
		busy |= keep & ~allowed;	/* perf's, given back */
		keep = worth(m, c, allowed);
		if (reserved & ~keep)
			archpmu_own_unreserve(m->cl, reserved & ~keep);
	}
	leave_alone(mc, busy);
	if (!keep)
		return;
	archpmu_claim_keep_found(c, keep, &mc->found);
	mc->grow = keep;
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
		if (mc->taking)
			mc->taking = worth(m, c, mc->taking);
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
