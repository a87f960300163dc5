/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The access layer: local, NMI-safe MSR primitives, and batches of them run
 * on a CPU in one cross-call, so an operation costs one IPI per CPU, never
 * one per register.
 */
#ifndef ARCHPMU_PMU_BATCH_H
#define ARCHPMU_PMU_BATCH_H

#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/cpumask.h>
#include <linux/types.h>

#include "backend.h"

/*
 * On the CPU they act on, interrupts disabled (or in NMI): no locks, no
 * allocation. A write outside the architectural PMU MSRs is -EACCES,
 * whatever the backend; a #GP is -EIO.
 */
static inline int archpmu_rdmsr_local(u32 msr, u64 *val)
{
	return archpmu_backend->msr_read(msr, val);
}

static inline int archpmu_wrmsr_local(u32 msr, u64 val)
{
	if (!archpmu_msr_writable(msr))
		return -EACCES;
	return archpmu_backend->msr_write(msr, val);
}

enum archpmu_msr_kind {
	ARCHPMU_MSR_READ,	/* *dst = MSR */
	ARCHPMU_MSR_WRITE,	/* MSR = val */
	ARCHPMU_MSR_MODIFY,	/* MSR = (MSR & ~mask) | (val & mask) */
	ARCHPMU_MSR_ACK,	/* OVF_CTRL = GLOBAL_STATUS & mask, if any */
	ARCHPMU_MSR_PAUSE,	/* stop the counters of mask that run; val: which */
	ARCHPMU_MSR_RESUME,	/* start again those *dst (a PAUSE's val) says */
};

struct archpmu_msr_op {
	u32 msr;
	u32 kind;		/* enum archpmu_msr_kind */
	u64 val;
	u64 mask;
	u64 *dst;		/* READ: where the value goes */
};

/*
 * The longest batch is a multiplexing turn that moves every counter: a read
 * and a write of each counter and of each top-down metric event's
 * PERF_METRICS, every event select, FIXED_CTR_CTRL, the ack and the enable.
 */
#define ARCHPMU_BATCH_MAX	96
static_assert(2 * (ARCHPMU_NR_GP + ARCHPMU_NR_FIXED + ARCHPMU_NR_METRICS) + ARCHPMU_NR_GP + 3 <=
	      ARCHPMU_BATCH_MAX);

struct archpmu_batch;
/* Runs on the batch's CPU with interrupts disabled, in the same cross-call. */
typedef void (*archpmu_batch_hook)(struct archpmu_batch *b);

struct archpmu_batch {
	unsigned int nr;
	bool best_effort;	/* run every op even after one fails (unwinding) */
	/* Its hooks and ops run in one cross-call even in ARCHPMU_CROSS_CALL_NAIVE. */
	bool indivisible;
	archpmu_batch_hook before;	/* before the first op */
	archpmu_batch_hook after;	/* after the last op (b->err says how it went) */
	void *arg;		/* for the hooks */
	unsigned int done;	/* out: ops completed before an error */
	int err;		/* out: the first error */
	struct archpmu_msr_op ops[ARCHPMU_BATCH_MAX];
};

/*
 * Building a batch: inline, since planning appends a few ops per counter
 * and CPU.
 */

/* Empty @b and set its hooks. */
static inline void archpmu_batch_init(struct archpmu_batch *b, archpmu_batch_hook before,
				      archpmu_batch_hook after, void *arg)
{
	b->nr = 0;
	b->best_effort = false;
	b->indivisible = false;
	b->before = before;
	b->after = after;
	b->arg = arg;
	b->done = 0;
	b->err = 0;
}

static inline struct archpmu_msr_op *archpmu_batch_add(struct archpmu_batch *b,
						       u32 kind, u32 msr)
{
	struct archpmu_msr_op *op;

	/* Every batch is sized by the counters it touches: a bug otherwise. */
	if (WARN_ON_ONCE(b->nr >= ARCHPMU_BATCH_MAX))
		return NULL;
	op = &b->ops[b->nr++];
	op->kind = kind;
	op->msr = msr;
	op->val = 0;
	op->mask = 0;
	op->dst = NULL;
	return op;
}

static inline void archpmu_batch_read(struct archpmu_batch *b, u32 msr, u64 *dst)
{
	struct archpmu_msr_op *op = archpmu_batch_add(b, ARCHPMU_MSR_READ, msr);

	if (op)
		op->dst = dst;
}

static inline void archpmu_batch_write(struct archpmu_batch *b, u32 msr, u64 val)
{
	struct archpmu_msr_op *op = archpmu_batch_add(b, ARCHPMU_MSR_WRITE, msr);

	if (op)
		op->val = val;
}

static inline void archpmu_batch_modify(struct archpmu_batch *b, u32 msr, u64 val, u64 mask)
{
	struct archpmu_msr_op *op = archpmu_batch_add(b, ARCHPMU_MSR_MODIFY, msr);

	if (op) {
		op->val = val;
		op->mask = mask;
	}
}

/*
 * Around writes of counters that may be counting (SDM 18.2.1.1): stop those
 * of @mask that run, and start them again after (cpu_ctx.h's
 * archpmu_counters_pause_local()).
 */
static inline struct archpmu_msr_op *archpmu_batch_pause(struct archpmu_batch *b, u64 mask)
{
	struct archpmu_msr_op *op = archpmu_batch_add(b, ARCHPMU_MSR_PAUSE, 0);

	if (op)
		op->mask = mask;
	/* The resume must run, and nothing may start them in between. */
	b->best_effort = true;
	b->indivisible = true;
	return op;
}

static inline void archpmu_batch_resume(struct archpmu_batch *b, struct archpmu_msr_op *pause)
{
	struct archpmu_msr_op *op = pause ? archpmu_batch_add(b, ARCHPMU_MSR_RESUME, 0) : NULL;

	if (op)
		op->dst = &pause->val;
}

static inline void archpmu_batch_ack(struct archpmu_batch *b, u64 mask)
{
	struct archpmu_msr_op *op = archpmu_batch_add(b, ARCHPMU_MSR_ACK, 0);

	if (op)
		op->mask = mask;
}

/*
 * Run @b on @cpu (which the caller keeps online). Stops at the first
 * failing op unless b->best_effort; returns the first error either way.
 */
int archpmu_batch_run(unsigned int cpu, struct archpmu_batch *b);

/*
 * One operation on several CPUs: the batches of the CPUs in @mask, all run
 * in one round of cross-calls (the local CPU runs its own directly). The
 * caller has one batch per CPU of @cpus, in ascending CPU order, @stride
 * bytes apart (each inside the caller's per-CPU struct), and keeps the CPUs
 * online and the batches alive; @mask is a subset of @cpus.
 */
/* The position of @cpu among the CPUs of @cpus, or -1 if it is not one of them. */
static inline int archpmu_cpu_index(const struct cpumask *cpus, unsigned int cpu)
{
	if (cpu >= nr_cpu_ids || !cpumask_test_cpu(cpu, cpus))
		return -1;
	return bitmap_weight(cpumask_bits(cpus), cpu);
}

struct archpmu_round {
	struct cpumask *mask;
	const struct cpumask *cpus;
	struct archpmu_batch *first;
	size_t stride;
};

/* 0, or the first error of the batches in CPU order (each batch has its own). */
int archpmu_round_run(struct archpmu_round *r);

/*
 * How a round reaches its CPUs: the benchmark compares the three
 * (dev/debugfs.c, cross_call_mode). Not an ABI.
 */
enum archpmu_cross_call_mode {
	ARCHPMU_CROSS_CALL_PARALLEL,	/* one round for all CPUs */
	ARCHPMU_CROSS_CALL_SERIAL,	/* one cross-call per CPU, one after another */
	ARCHPMU_CROSS_CALL_NAIVE,	/* one cross-call per MSR access */
};

extern u32 archpmu_cross_call_mode;
/*
 * CPUs reached by cross-calls so far, rounds of them, and of those CPUs the
 * ones other than the caller's (a call to its own CPU sends no interrupt).
 */
extern atomic64_t archpmu_cross_calls;
extern atomic64_t archpmu_cross_call_rounds;
extern atomic64_t archpmu_remote_cross_calls;

#endif /* ARCHPMU_PMU_BATCH_H */
