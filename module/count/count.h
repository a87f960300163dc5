/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Counting on a session's claims: folding the hardware counters into 64-bit
 * totals, time enabled and running, start/stop/reset and the snapshot read.
 */
#ifndef ARCHPMU_COUNT_COUNT_H
#define ARCHPMU_COUNT_COUNT_H

#include <linux/workqueue.h>

#include "../own/own.h"

/*
 * A claim's times: enabled while its session is started, running while its
 * counters are also on the CPU (not while it is offline).
 */
struct archpmu_count_times {
	u64 enabled_ns;
	u64 running_ns;
	u64 since;		/* start of the current started interval */
};

/* Counting's state on one of the session's CPUs (as cl->cpus). */
struct archpmu_count_cpu {
	struct archpmu_count_times times;
	u64 raw[ARCHPMU_MAX_EVENTS];		/* counter values a read batch fetched */
	u64 ctl_seen[ARCHPMU_MAX_EVENTS];	/* each event's control register, as read */
	/*
	 * The counters found rewritten by another agent since the claim was
	 * last programmed (programs: c->programs then): each reported once.
	 */
	u64 foreign;
	u32 programs;
	bool metrics_reset;	/* the read batch resets the top-down metrics */
};

struct archpmu_count {
	struct archpmu_claims *cl;
	struct archpmu_count_cpu *cpus;
	bool running;		/* under archpmu_own_lock */
	unsigned long fold_period;
	struct delayed_work fold_work;
	/* The snapshot COUNT_READ copies out; under the session file's lock. */
	struct archpmu_count_value *vals;
};

/* Periodic folds so far (each one round; for the tests, dev/debugfs.c). */
extern atomic64_t archpmu_fold_rounds;

/* Under the locks, once the plan placed the session's events. */
int archpmu_count_setup(struct archpmu_count *ct, struct archpmu_claims *cl);
/* After the claims are released (or when setup never ran): no fold runs any more. */
void archpmu_count_teardown(struct archpmu_count *ct);

/*
 * ARCHPMU_IOC_COUNT_START, _STOP, _RESET: take the locks themselves. @here:
 * a task session whose only task is the caller, whose counters run on the
 * caller's CPU alone; START and STOP then reach no other CPU, nor does a
 * READ while the caller stays on its CPU (struct archpmu_scope's start()).
 */
int archpmu_count_ctl(struct archpmu_count *ct, unsigned int cmd, bool here);
/* Under archpmu_own_lock: the claims were programmed started at @now. */
void archpmu_count_started(struct archpmu_count *ct, u64 now, bool here);
/* ARCHPMU_IOC_COUNT_READ: copies the values out after dropping the locks. */
int archpmu_count_read(struct archpmu_count *ct, struct archpmu_count_read *cmd, bool here);

/* Under archpmu_own_lock: fold @c's counters into its totals. */
int archpmu_count_claim_fold(struct archpmu_count *ct, struct archpmu_claim *c);
/* Under archpmu_own_lock: @c leaves its CPU (offline, suspend) / comes back. */
void archpmu_count_claim_down(struct archpmu_count *ct, struct archpmu_claim *c);
void archpmu_count_claim_up(struct archpmu_count *ct, struct archpmu_claim *c);

#endif /* ARCHPMU_COUNT_COUNT_H */
