/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Task scope (uapi/archpmu.h, ARCHPMU_COUNT_OPEN_TASK): which tasks a
 * session counts (access.c: finding them and the right to count them) and
 * following them as they switch, fork and exit (target.c: the tracepoint
 * probes), and the claims' gates, which start their counters only where the
 * tasks run (gate.c).
 */
#ifndef ARCHPMU_TASK_TASK_H
#define ARCHPMU_TASK_TASK_H

#include <linux/irq_work.h>
#include <linux/list.h>
#include <linux/seqlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include "../own/own.h"

/* One task a session counts: on the hash of every target, by task. */
struct archpmu_task_target {
	struct hlist_node hnode;	/* in the hash, under RCU; changed under the lock */
	struct list_head snode;		/* on its session's list or pool, under the lock */
	struct task_struct *task;	/* referenced while the entry is on the hash */
	struct archpmu_task *owner;
	bool dead;			/* switched out for the last time */
	/* This task's state for the gate's hooks (cl->sampling_hooks: sample/task_gate.c). */
	u64 carry[];
};

/*
 * A claim's gate (gate.c): written on its CPU with interrupts disabled (the
 * context-switch probe and the batch hooks), or under archpmu_own_lock while
 * the claim is not programmed; read elsewhere through @seq. A cache line
 * each, as every CPU writes its own at each switch.
 */
struct archpmu_task_cpu {
	bool in;		/* a task of the session runs here: counters started */
	bool ran;		/* the gate opened since a fold last read the counters */
	seqcount_t seq;
	u64 since;		/* when it was switched in */
	u64 ns;			/* time the session's tasks ran here, started */
} ____cacheline_aligned_in_smp;

enum { ARCHPMU_TASK_STOPPED, ARCHPMU_TASK_ARMED, ARCHPMU_TASK_RUNNING };

/* A session's task scope. */
struct archpmu_task {
	struct archpmu_claims *cl;
	struct archpmu_task_cpu *cpus;	/* one per claim, as cl->cpus */
	/*
	 * xchg and cmpxchg, as the exec probe and COUNT_START/STOP race: while
	 * RUNNING, a task of the session switched in starts the counters; ARMED
	 * (COUNT_START with @on_exec, until @exec_seen) turns RUNNING at the
	 * first exec of one of its tasks; a START after it runs at once, as
	 * perf's.
	 */
	int state;			/* ARCHPMU_TASK_STOPPED, _ARMED or _RUNNING */
	bool on_exec;
	bool exec_seen;			/* WRITE_ONCE by the exec probe */
	u64 missed;			/* children not followed (under the lock; READ_ONCE) */
	u32 flags;			/* ARCHPMU_TASK_* */
	size_t carry_size;		/* bytes of each entry's carry: 0, none */
	bool closing;			/* no more children are followed (under the lock) */
	struct list_head targets;	/* under the lock */
	struct list_head pool;		/* free entries for children, under the lock */
	unsigned int pool_len;
	unsigned int forks;		/* children followed since the pool was last filled */
	/* From the probes (under the runqueue lock): reap the dead, refill. */
	struct irq_work kick;
	struct work_struct tend;
	/*
	 * Referenced, its process's exec_update_lock read-held by COUNT_OPEN
	 * from the permission check to the attach (archpmu_task_exec_unlock).
	 */
	struct task_struct *exec_locked;
	/*
	 * Without INHERIT or PROCESS, the one task counted: compared with the
	 * caller, never dereferenced (once it is gone, no other is counted).
	 */
	const struct task_struct *only;
};

/* Module load and unload: find the scheduler's tracepoints. */
void archpmu_task_init(void);
void archpmu_task_exit(void);

/*
 * Before any lock: check the inputs, find the tasks and the caller's right
 * to count them, take references and the probes, and read-hold the target's
 * exec_update_lock until archpmu_task_attach() (or archpmu_task_free()), in
 * the same ioctl. NULL (no task scope) for a session without
 * ARCHPMU_COUNT_OPEN_TASK; an ERR_PTR on refusal.
 */
struct archpmu_task *archpmu_task_create(const struct archpmu_count_open *cmd, size_t carry_size);
/*
 * Is the caller @t's only task? Then no CPU but the caller's runs a task of
 * the session, and its start, stop and read need reach no other
 * (archpmu_count_ctl()). False for a session without task scope.
 */
bool archpmu_task_is_only_current(const struct archpmu_task *t);
/*
 * Once the claims exist, before they are programmed (which reads cl->scope):
 * make them the task scope's (cl->scope, gate.c). 0 or -ENOMEM.
 */
int archpmu_task_bind(struct archpmu_task *t, struct archpmu_claims *cl);
/* Once the counters are programmed: follow the tasks (and let them exec). */
void archpmu_task_attach(struct archpmu_task *t);
/*
 * Before the claims are released (may sleep, no lock held): stop following
 * the tasks; once it returns no probe reaches the claims.
 */
void archpmu_task_detach(struct archpmu_task *t);
void archpmu_task_free(struct archpmu_task *t);

/* access.c, for target.c: let the target exec again; no-op once done. */
void archpmu_task_exec_unlock(struct archpmu_task *t);

static inline bool archpmu_task_running(const struct archpmu_task *t)
{
	return READ_ONCE(t->state) == ARCHPMU_TASK_RUNNING;
}

/*
 * gate.c, for target.c's probes: on @c's CPU with interrupts disabled, @on:
 * a task of the session switches in (else out), with its state for the
 * session's gate hooks in @carry (NULL: none), so that what a feature keeps
 * per task goes on where it left off on another CPU.
 */
void archpmu_task_gate_local(const struct archpmu_claims *cl, struct archpmu_claim *c,
			     bool on, void *carry);

/*
 * target.c, for gate.c: is the task running here one of @t's, and its
 * carry? On the CPU with interrupts disabled, which keeps the RCU read side.
 */
bool archpmu_task_here(const struct archpmu_task *t, void **carry);

/* target.c, for access.c */
struct archpmu_task_target *archpmu_task_target_new(const struct archpmu_task *t, gfp_t gfp);
void archpmu_task_target_put(struct archpmu_task_target *e);
int archpmu_task_fill_pool(struct archpmu_task *t, unsigned int len);
int archpmu_task_probes_get(void);
void archpmu_task_probes_put(void);
void archpmu_task_scope_init(struct archpmu_task *t);
int archpmu_task_pool_init(struct archpmu_task *t);
/* The scheduler's tracepoints were found. */
bool archpmu_task_supported(void);
/* Test-only (dev/debugfs.c): the most entries a session keeps for children. */
extern unsigned int archpmu_task_pool_max;
/* Test-only (dev/debugfs.c): ms a task COUNT_OPEN waits after its permission check. */
extern unsigned int archpmu_task_open_delay_ms;
#define ARCHPMU_TASK_OPEN_DELAY_MAX	1000
#define ARCHPMU_TASK_POOL_MAX	4096

#endif /* ARCHPMU_TASK_TASK_H */
