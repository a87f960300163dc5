/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Multiplexing: where a session's events do not all fit on a CPU, its
 * groups take turns there. The rules (which groups stay, which take turns,
 * in what order) are plan.c's; mux.c places a session's events through the
 * claims' placer hook, and runs the turns.
 */
#ifndef ARCHPMU_MUX_MUX_H
#define ARCHPMU_MUX_MUX_H

#include <linux/workqueue.h>

#include "../own/own.h"
#include "plan.h"

/* A multiplexing session's state on one of its CPUs. */
struct archpmu_mux_cpu {
	u64 stay;		/* busy-mask bits of the groups that never rotate */
	u64 keep;		/* those and the counters a turn leaves as they are */
	unsigned int first;	/* the lead of the group the next turn begins with */
	u64 t0;			/* the running clock as the turn stopped the outgoing events */
	/*
	 * What reads report: the events (bit e) others' counters keep off the
	 * PMU, and those that take turns on it; each event's time on the PMU,
	 * to @on_pmu_mark on the claim's running clock, changed on the CPU with
	 * interrupts disabled (a turn's hooks), under archpmu_own_lock. Valid
	 * while the claim is placed here (c->partial).
	 */
	u64 crowded;
	u64 rotating;		/* once set, kept: the event took turns, its count is scaled */
	bool turns;		/* groups take turns here (else all that can be on is on) */
	u64 on_pmu_mark;
	u64 on_pmu_ns[ARCHPMU_MAX_EVENTS];
	u32 next[ARCHPMU_MAX_EVENTS];	/* the next turn's counters */
	u32 prev[ARCHPMU_MAX_EVENTS];	/* the counters before it, for the fold */
	u64 raw[ARCHPMU_MAX_EVENTS];	/* the outgoing events' counters, read in the turn */
	/*
	 * Growing (grow.c): the counters taken and being read, what the read
	 * found there, those joining the pool at the next turn (and those that
	 * joined at this one), and those
	 * another agent counted with or perf held, left alone until
	 * @busy_until (jiffies).
	 */
	u64 taking;
	struct archpmu_pmu_saved found;
	u64 grow;
	u64 joined;		/* added by the turn's hook: the turn re-plans after it */
	u64 busy;
	unsigned long busy_until;
};

/* A multiplexing session: its placements and turns, under archpmu_own_lock. */
struct archpmu_mux {
	struct archpmu_claims *cl;
	struct archpmu_mux_scratch *scratch;
	struct archpmu_mux_cpu *cpus;	/* as cl->cpus */
	bool running;			/* the session counts: turns go on */
	struct delayed_work work;
};

static inline struct archpmu_mux_cpu *archpmu_mux_cpu(const struct archpmu_claim *c)
{
	const struct archpmu_claims *cl = c->claims;
	const struct archpmu_mux *m = cl->placer_data;

	return &m->cpus[c - cl->cpus];
}

/*
 * Before a turn (grow.c): on each CPU where groups take turns, or are
 * crowded out and would come on, the counters they could use that others
 * have let go since are taken (one round reads them; another agent's are
 * left alone) and join the pool at the turn (mc->grow); after it the CPU is
 * re-planned (archpmu_mux_replan()). Under archpmu_own_lock, the session
 * counting.
 */
void archpmu_mux_grow(struct archpmu_mux *m);
/*
 * After the pool grew to @pool: which of a CPU's groups are crowded out, and
 * whether they take turns; events that took turns stay multiplexed.
 */
void archpmu_mux_replan(struct archpmu_mux *m, struct archpmu_claim *c, u64 pool);

/*
 * Under the locks, once cl->cpus is set and before the plan: the session's
 * events are placed, and take turns, through @m.
 */
int archpmu_mux_setup(struct archpmu_mux *m, struct archpmu_claims *cl);
/*
 * The session no longer counts (it is being destroyed). Under
 * archpmu_own_lock. Here and in teardown, a session that does not multiplex
 * (setup never ran) has nothing to stop.
 */
void archpmu_mux_stop(struct archpmu_mux *m);
/* After the claims are released: no turn runs any more. */
void archpmu_mux_teardown(struct archpmu_mux *m);

#endif /* ARCHPMU_MUX_MUX_H */
