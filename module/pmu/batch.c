// SPDX-License-Identifier: GPL-2.0
/*
 * The access layer shared by both backends: the local MSR primitives,
 * batches of them run in a single cross-call per CPU, and rounds of batches
 * that reach many CPUs at once. Writes outside the architectural PMU MSRs
 * are refused here, whatever the backend.
 */
#include <linux/bug.h>
#include <linux/cpumask.h>
#include <linux/smp.h>

#include "backend.h"
#include "batch.h"
#include "cpu_ctx.h"

/* The backend in use, chosen once at load (main.c). */
const struct archpmu_backend *archpmu_backend;

static int exec_op(struct archpmu_msr_op *op)
{
	u64 old;
	int err;

	switch (op->kind) {
	case ARCHPMU_MSR_READ:
		err = archpmu_rdmsr_local(op->msr, &old);
		if (!err)
			*op->dst = old;
		return err;
	case ARCHPMU_MSR_WRITE:
		return archpmu_wrmsr_local(op->msr, op->val);
	case ARCHPMU_MSR_MODIFY:
		if (op->msr == ARCHPMU_MSR_GLOBAL_CTRL)
			return archpmu_global_ctrl_local(op->val & op->mask,
							 op->mask & ~op->val);
		err = archpmu_rdmsr_local(op->msr, &old);
		if (err)
			return err;
		return archpmu_wrmsr_local(op->msr, (old & ~op->mask) | (op->val & op->mask));
	case ARCHPMU_MSR_ACK:
		err = archpmu_rdmsr_local(ARCHPMU_MSR_GLOBAL_STATUS, &old);
		if (err || !(old & op->mask))
			return err;
		return archpmu_wrmsr_local(ARCHPMU_MSR_GLOBAL_OVF_CTRL, old & op->mask);
	case ARCHPMU_MSR_PAUSE:
		op->val = archpmu_counters_pause_local(op->mask);
		return 0;
	case ARCHPMU_MSR_RESUME:
		archpmu_counters_resume_local(*op->dst);
		return 0;
	}
	return -EINVAL;
}

/* Ops [from, to) of @b, on this CPU; b->done and b->err record the outcome. */
static void exec_ops(struct archpmu_batch *b, unsigned int from, unsigned int to)
{
	int err;

	for (b->done = from; b->done < to; b->done++) {
		err = exec_op(&b->ops[b->done]);
		if (!err)
			continue;
		if (!b->err)
			b->err = err;
		if (!b->best_effort)
			return;
	}
}

static void batch_exec(void *info)
{
	struct archpmu_batch *b = info;

	b->err = 0;
	if (b->before)
		b->before(b);
	exec_ops(b, 0, b->nr);
	if (b->after)
		b->after(b);
}

atomic64_t archpmu_cross_calls = ATOMIC64_INIT(0);
atomic64_t archpmu_cross_call_rounds = ATOMIC64_INIT(0);
atomic64_t archpmu_remote_cross_calls = ATOMIC64_INIT(0);

/* For the statistics: the caller may move meanwhile, which only a pinned test relies on. */
static void count_call(unsigned int cpu)
{
	atomic64_inc(&archpmu_cross_calls);
	if (cpu != raw_smp_processor_id())
		atomic64_inc(&archpmu_remote_cross_calls);
}

u32 archpmu_cross_call_mode = ARCHPMU_CROSS_CALL_PARALLEL;

struct naive_step {
	struct archpmu_batch *b;
	unsigned int op;	/* the op to run (none if b->nr) */
	bool last;		/* run the after hook too */
};

static void naive_exec(void *info)
{
	struct naive_step *step = info;
	struct archpmu_batch *b = step->b;

	if (step->op == 0 && b->before)
		b->before(b);
	if (step->op < b->nr)
		exec_ops(b, step->op, step->op + 1);
	if (b->err && !b->best_effort)
		step->last = true;	/* the batch stops here */
	if (step->last && b->after)
		b->after(b);
}

/*
 * The naive way, for the benchmark only: one cross-call per MSR access, as
 * the msr driver's rdmsr_on_cpu()/wrmsr_on_cpu() would make. The hooks run
 * in the calls of the first and of the last op.
 */
static int archpmu_batch_run_naive(unsigned int cpu, struct archpmu_batch *b)
{
	struct naive_step step = { .b = b };
	unsigned int i;

	b->err = 0;
	for (i = 0; i < b->nr || (i == 0 && !b->nr); i++) {
		step.op = i;
		step.last = i + 1 >= b->nr;
		count_call(cpu);
		atomic64_inc(&archpmu_cross_call_rounds);
		if (smp_call_function_single(cpu, naive_exec, &step, 1)) {
			b->err = -ENODEV;
			return -ENODEV;
		}
		if (step.last)
			break;
	}
	return b->err;
}

int archpmu_batch_run(unsigned int cpu, struct archpmu_batch *b)
{
	if (READ_ONCE(archpmu_cross_call_mode) == ARCHPMU_CROSS_CALL_NAIVE && !b->indivisible)
		return archpmu_batch_run_naive(cpu, b);
	count_call(cpu);
	atomic64_inc(&archpmu_cross_call_rounds);
	if (smp_call_function_single(cpu, batch_exec, b, 1)) {
		b->err = -ENODEV;	/* the callers read each batch's own error */
		return -ENODEV;
	}
	return b->err;
}

/* The batch of a CPU in r->mask; NULL (a bug) for any other. */
static struct archpmu_batch *round_batch(const struct archpmu_round *r, unsigned int cpu)
{
	int i = archpmu_cpu_index(r->cpus, cpu);

	if (WARN_ON_ONCE(i < 0))
		return NULL;
	return (void *)r->first + i * r->stride;
}

static void round_exec(void *info)
{
	struct archpmu_round *r = info;
	struct archpmu_batch *b = round_batch(r, smp_processor_id());

	if (b)
		batch_exec(b);
}

int archpmu_round_run(struct archpmu_round *r)
{
	unsigned int cpu, n = 0;
	int ret = 0, err;

	if (READ_ONCE(archpmu_cross_call_mode) != ARCHPMU_CROSS_CALL_PARALLEL) {
		for_each_cpu(cpu, r->mask) {
			struct archpmu_batch *b = round_batch(r, cpu);

			err = b ? archpmu_batch_run(cpu, b) : -EINVAL;
			if (!ret)
				ret = err;
		}
		return ret;
	}
	/* A CPU the round does not reach keeps this error. */
	for_each_cpu(cpu, r->mask) {
		struct archpmu_batch *b = round_batch(r, cpu);

		if (!b)
			return -EINVAL;
		b->err = -ENODEV;
		count_call(cpu);
		n++;
	}
	if (!n)
		return 0;
	atomic64_inc(&archpmu_cross_call_rounds);
	on_each_cpu_mask(r->mask, round_exec, r, true);
	for_each_cpu(cpu, r->mask) {
		err = round_batch(r, cpu)->err;
		if (!ret)
			ret = err;
	}
	return ret;
}
