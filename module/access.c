// SPDX-License-Identifier: GPL-2.0
/*
 * The MSR/CPUID access layer shared by both backends. A batch holds every
 * MSR access of one operation on one CPU and runs in a single cross-call,
 * so an operation costs one IPI per CPU, never one per register. Writes
 * outside the architectural PMU MSRs are refused here, whatever the backend.
 */
#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/smp.h>

#include "archpmu.h"

static int checked_write(u32 msr, u64 val)
{
	if (!archpmu_msr_writable(msr))
		return -EACCES;
	return archpmu_backend->msr_write(msr, val);
}

static int exec_op(struct archpmu_msr_op *op)
{
	const struct archpmu_backend *be = archpmu_backend;
	int err;

	switch (op->kind) {
	case ARCHPMU_MSR_READ:
		return be->msr_read(op->msr, &op->val);
	case ARCHPMU_MSR_WRITE:
		return checked_write(op->msr, op->val);
	case ARCHPMU_MSR_MODIFY:
		err = be->msr_read(op->msr, &op->old);
		if (err)
			return err;
		return checked_write(op->msr, (op->old & ~op->mask) | (op->val & op->mask));
	case ARCHPMU_MSR_ACK:
		err = be->msr_read(ARCHPMU_MSR_GLOBAL_STATUS, &op->old);
		if (err || !(op->old & op->mask))
			return err;
		return checked_write(ARCHPMU_MSR_GLOBAL_OVF_CTRL, op->old & op->mask);
	}
	return -EINVAL;
}

static void archpmu_batch_exec(void *info)
{
	struct archpmu_batch *b = info;
	int err;

	b->err = 0;
	for (b->done = 0; b->done < b->nr; b->done++) {
		err = exec_op(&b->ops[b->done]);
		if (!err)
			continue;
		if (!b->err)
			b->err = err;
		if (!b->best_effort)
			return;
	}
}

/* Cross-calls made so far, and the benchmark's naive mode (debugfs.c). */
atomic64_t archpmu_cross_calls = ATOMIC64_INIT(0);
bool archpmu_naive_cross_calls;

/* The naive way, for the benchmark only: one cross-call per MSR access. */
static int archpmu_batch_run_naive(unsigned int cpu, struct archpmu_batch *b)
{
	unsigned int i;

	for (i = 0; i < b->nr; i++) {
		struct archpmu_batch one = { .ops = &b->ops[i], .nr = 1 };

		atomic64_inc(&archpmu_cross_calls);
		if (smp_call_function_single(cpu, archpmu_batch_exec, &one, 1))
			return -ENODEV;
		b->done = i;
		if (one.err && !b->err)
			b->err = one.err;
		if (one.err && !b->best_effort)
			return one.err;
	}
	b->done = b->nr;
	return b->err;
}

/*
 * Run @b on @cpu. Stops at the first failing op (b->done says which) unless
 * b->best_effort; returns the first error either way.
 */
int archpmu_batch_run(unsigned int cpu, struct archpmu_batch *b)
{
	if (READ_ONCE(archpmu_naive_cross_calls))
		return archpmu_batch_run_naive(cpu, b);
	atomic64_inc(&archpmu_cross_calls);
	if (smp_call_function_single(cpu, archpmu_batch_exec, b, 1))
		return -ENODEV;
	return b->err;
}

void archpmu_batch_add(struct archpmu_batch_buf *buf, u32 kind, u32 msr,
		       u64 val, u64 mask)
{
	struct archpmu_msr_op *op;

	if (WARN_ON_ONCE(buf->nr >= ARCHPMU_BATCH_MAX))
		return;
	op = &buf->ops[buf->nr++];
	op->kind = kind;
	op->msr = msr;
	op->val = val;
	op->mask = mask;
	op->old = 0;
}

int archpmu_batch_buf_run(unsigned int cpu, struct archpmu_batch_buf *buf)
{
	struct archpmu_batch b = { .ops = buf->ops, .nr = buf->nr };

	return archpmu_batch_run(cpu, &b);
}

int archpmu_batch_buf_run_all(unsigned int cpu, struct archpmu_batch_buf *buf)
{
	struct archpmu_batch b = { .ops = buf->ops, .nr = buf->nr, .best_effort = true };

	return archpmu_batch_run(cpu, &b);
}

/* Read the PMU's CPUID leaves on this CPU (interrupts disabled). */
void archpmu_read_cpuid_set(struct archpmu_cpuid_set *c)
{
	const struct archpmu_backend *be = archpmu_backend;
	struct archpmu_cpuid_regs leaf0;
	u32 max, i;

	memset(c, 0, sizeof(*c));
	be->cpuid(0, 0, &leaf0);
	max = leaf0.eax;
	if (max >= 0x1)
		be->cpuid(0x1, 0, &c->leaf01);
	if (max >= 0x7) {
		be->cpuid(0x7, 0, &c->leaf07_0);
		if (c->leaf07_0.eax >= 1)
			be->cpuid(0x7, 1, &c->leaf07_1);
	}
	if (max >= 0xa)
		be->cpuid(0xa, 0, &c->leaf0a);
	if (max >= 0x1a)
		be->cpuid(0x1a, 0, &c->leaf1a);
	if (max >= 0x23 && (c->leaf07_1.eax & CPUID07_1_EAX_LEAF23))
		for (i = 0; i < ARCHPMU_LEAF23_SUBLEAVES; i++)
			be->cpuid(0x23, i, &c->leaf23[i]);
}
