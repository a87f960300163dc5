/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Counter ownership: which counters of which CPU a session gets (plan.c),
 * perf's reservation of them (perf_share.c), and taking them from the PMU
 * and putting them back (claim.c).
 */
#ifndef ARCHPMU_OWN_OWN_H
#define ARCHPMU_OWN_OWN_H

#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/types.h>

#include "../pmu/pmu.h"
#include "alloc.h"

/*
 * Guards every context's allocation view (taken, holder[]) and every
 * claim's state. Taken after cpus_read_lock(); nothing that can fault on
 * user memory runs under it.
 */
extern struct mutex archpmu_own_lock;

/* Who holds counters: named in refusals (dmesg and busy_pid). */
struct archpmu_holder {
	pid_t pid;		/* in the initial namespace, for dmesg */
	struct pid *tgid;	/* for busy_pid, in the asker's namespace */
	char comm[TASK_COMM_LEN];
};

/* Time accounting of a claim (count/). */
struct archpmu_times {
	u64 enabled_ns;
	u64 running_ns;
	u64 since;		/* start of the current started interval */
};

/* One session's hold on one CPU. */
struct archpmu_claim {
	unsigned int cpu;
	bool programmed;	/* our counters are on the CPU (false while offline) */
	struct archpmu_pmu_desc desc;
	const struct archpmu_pmu_ops *ops;
	u64 used;		/* our counters, busy-mask bits */
	u64 agent_busy;		/* of those, the ones another agent was found using */
	struct archpmu_ctx_change change;	/* for the context's hooks */
	struct archpmu_hw_event hw[ARCHPMU_MAX_EVENTS];
	struct archpmu_pmu_saved saved;
	struct archpmu_times times;
};

/* Everything one session holds. */
struct archpmu_claims {
	const struct archpmu_holder *holder;
	const struct archpmu_event *ev;
	unsigned int nr_events;
	struct archpmu_claim *cpus;
	unsigned int nr_cpus;
	u64 gp_reserved;	/* GP counters whose perf reservation we hold */
	bool owned;		/* taken[] and holder[] name us */
	struct archpmu_batch *batch;	/* preallocated: operations allocate nothing */
};

/* plan.c, under archpmu_own_lock and cpus_read_lock() */
int archpmu_own_plan(struct archpmu_claims *cl, struct archpmu_count_open *out);
void archpmu_own_commit(struct archpmu_claims *cl);
void archpmu_own_forget(struct archpmu_claims *cl);

/* claim.c, under archpmu_own_lock; each one batch in one cross-call */
int archpmu_claim_save(struct archpmu_claims *cl, struct archpmu_claim *c);
int archpmu_claim_program(struct archpmu_claims *cl, struct archpmu_claim *c, bool start);
int archpmu_claim_restore(struct archpmu_claims *cl, struct archpmu_claim *c);
/* Add the ops that start or stop @c's counters to cl->batch. */
void archpmu_claim_add_enable(struct archpmu_claims *cl, struct archpmu_claim *c,
			      bool enable);
u32 archpmu_claim_counter_msr(const struct archpmu_claim *c, u32 counter, bool write);
u64 archpmu_claim_width_mask(const struct archpmu_claim *c, u32 counter);
/* The first event whose counter on @c is one of @bits, or ~0. */
unsigned int archpmu_claim_event_on(const struct archpmu_claims *cl,
				    const struct archpmu_claim *c, u64 bits);

/* perf_share.c */
int archpmu_reserve_gp(u64 gp, u32 *failed);
void archpmu_release_gp(u64 gp);

#endif /* ARCHPMU_OWN_OWN_H */
