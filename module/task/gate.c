// SPDX-License-Identifier: GPL-2.0
/*
 * The gate of a task session's claim: its counters are programmed on every
 * CPU of the session, and started only while one of the session's tasks runs
 * there. The context-switch probe (target.c) and the rounds below open and
 * close it on the claim's CPU, with interrupts disabled, so the two never
 * overlap; the counts stay in the counters, which count/ folds as for any
 * session. The core and the other features reach the gate through the
 * session's scope (struct archpmu_scope, archpmu_task_scope below).
 *
 * Closing writes the per-counter enables (EN, the IA32_FIXED_CTR_CTRL nibble)
 * as well as IA32_PERF_GLOBAL_CTRL: perf's PMI handler rewrites GLOBAL_CTRL
 * wholesale with every counter's bit, which must not start ours while no
 * task of the session runs. Opening writes GLOBAL_CTRL last, closing first,
 * so the counters start and stop together. A feature that keeps state per
 * task (sample/: each task's periods) does so in the gate's hooks, between
 * the counters stopping and starting (cl->sampling_hooks).
 */
#include <linux/lockdep.h>
#include <linux/ktime.h>
#include <linux/slab.h>

#include "task.h"

static struct archpmu_task *task_of(const struct archpmu_claims *cl)
{
	return cl->scope_data;
}

static struct archpmu_task_cpu *gate_of(const struct archpmu_claims *cl,
					const struct archpmu_claim *c)
{
	return &task_of(cl)->cpus[c - cl->cpus];
}

static struct archpmu_claim *claim_of_batch(struct archpmu_batch *b)
{
	return container_of(b, struct archpmu_claim, batch);
}

static void gate_msrs(const struct archpmu_claims *cl, const struct archpmu_claim *c, bool on)
{
	u64 fixed_val = 0, fixed_mask = 0, mask, v;
	unsigned int e;

	for (e = 0; e < cl->nr_events; e++) {
		if (!archpmu_claim_controlled(c, e))
			continue;
		v = archpmu_claim_ctl_expected(cl, c, e, on, &mask);
		if (c->hw[e].counter & ARCHPMU_COUNTER_FIXED) {
			fixed_val |= v;
			fixed_mask |= mask;
		} else {
			archpmu_wrmsr_local(archpmu_claim_ctl_msr(c, e), v);
		}
	}
	if (fixed_mask && !archpmu_rdmsr_local(ARCHPMU_MSR_FIXED_CTR_CTRL, &v))
		archpmu_wrmsr_local(ARCHPMU_MSR_FIXED_CTR_CTRL, (v & ~fixed_mask) | fixed_val);
}

/* Other sessions' bits stay as they are; a throttled counter stays stopped. */
static void gate_global(const struct archpmu_claim *c, bool on)
{
	archpmu_global_ctrl_local(on ? c->used : 0, on ? 0 : c->used);
}

/* The time the tasks ran here, as the gate opens or closes. */
static void gate_time(struct archpmu_task_cpu *tc, bool on, u64 now)
{
	raw_write_seqcount_begin(&tc->seq);
	if (on) {
		tc->since = now;
		WRITE_ONCE(tc->ran, true);
	} else if (now > tc->since) {
		tc->ns += now - tc->since;
	}
	WRITE_ONCE(tc->in, on);
	raw_write_seqcount_end(&tc->seq);
}

void archpmu_task_gate_local(const struct archpmu_claims *cl, struct archpmu_claim *c,
			     bool on, void *carry)
{
	const struct archpmu_sampling_hooks *hooks = cl->sampling_hooks;
	struct archpmu_task_cpu *tc = gate_of(cl, c);
	u64 now;

	lockdep_assert_irqs_disabled();
	if (tc->in == on)
		return;
	/* The clocks stop once the counters have, and start before they do. */
	if (!on) {
		gate_global(c, false);
		gate_msrs(cl, c, false);
		now = ktime_get_mono_fast_ns();
		if (hooks)
			hooks->gate_close(cl, c, carry, now);
		gate_time(tc, false, now);
	} else {
		now = ktime_get_mono_fast_ns();
		gate_time(tc, true, now);
		if (hooks)
			hooks->gate_open(cl, c, carry, now);
		gate_msrs(cl, c, true);
		gate_global(c, true);
	}
}

/*
 * Open the gate if @may_open and a task of the session runs here, else close
 * it; with that task's carry, so that its state goes on across a START or
 * STOP (it may run elsewhere by the next START).
 */
static void gate_set_local(struct archpmu_claim *c, bool may_open)
{
	const struct archpmu_claims *cl = c->claims;
	void *carry;
	bool here = archpmu_task_here(task_of(cl), &carry);

	archpmu_task_gate_local(cl, c, may_open && here, carry);
}

static void sync_local(struct archpmu_batch *b)
{
	struct archpmu_claim *c = claim_of_batch(b);
	const struct archpmu_claims *cl = c->claims;

	gate_set_local(c, archpmu_task_running(task_of(cl)) && !READ_ONCE(cl->suspended));
}

static void shut_local(struct archpmu_batch *b)
{
	gate_set_local(claim_of_batch(b), false);
}

static void release_local(struct archpmu_batch *b)
{
	struct archpmu_claim *c = claim_of_batch(b);
	struct archpmu_task_cpu *tc = gate_of(c->claims, c);

	if (tc->in)
		gate_time(tc, false, ktime_get_mono_fast_ns());
	archpmu_ctx_release_local(b);
}

static int gates_sync(struct archpmu_claims *cl)
{
	unsigned int i;

	lockdep_assert_held(&archpmu_own_lock);
	archpmu_claims_round_begin(cl);
	for (i = 0; i < cl->nr_cpus; i++) {
		struct archpmu_claim *c = &cl->cpus[i];

		if (!c->programmed)
			continue;
		archpmu_batch_init(&c->batch, sync_local, NULL, NULL);
		archpmu_claims_round_add(cl, c);
	}
	return archpmu_claims_round_run(cl);
}

/*
 * The claim of the CPU the caller runs on, synced there. Should the caller
 * move meanwhile, the context-switch probe shuts the gate it leaves and
 * opens (or not) the one it comes to, as the state now says.
 */
static int gate_sync_here(struct archpmu_claims *cl)
{
	unsigned int cpu = get_cpu();
	struct archpmu_claim *c = archpmu_claims_on_cpu(cl, cpu);
	int ret = 0;

	if (c && c->programmed) {
		archpmu_batch_init(&c->batch, sync_local, NULL, NULL);
		ret = archpmu_batch_run(cpu, &c->batch);
	}
	put_cpu();
	return ret;
}

static int gates_start(struct archpmu_claims *cl, bool here)
{
	struct archpmu_task *t = task_of(cl);
	bool armed = t->on_exec && !READ_ONCE(t->exec_seen);

	lockdep_assert_held(&archpmu_own_lock);
	xchg(&t->state, armed ? ARCHPMU_TASK_ARMED : ARCHPMU_TASK_RUNNING);
	return here ? gate_sync_here(cl) : gates_sync(cl);
}

static void gates_stopping(struct archpmu_claims *cl)
{
	lockdep_assert_held(&archpmu_own_lock);
	xchg(&task_of(cl)->state, ARCHPMU_TASK_STOPPED);
}

static int gate_off(struct archpmu_claims *cl, struct archpmu_claim *c)
{
	lockdep_assert_held(&archpmu_own_lock);
	if (!c->programmed)
		return 0;
	archpmu_batch_init(&c->batch, shut_local, NULL, NULL);
	return archpmu_batch_run(c->cpu, &c->batch);
}

static void fold_local(struct archpmu_batch *b)
{
	struct archpmu_claim *c = claim_of_batch(b);
	struct archpmu_task_cpu *tc = gate_of(c->claims, c);

	WRITE_ONCE(tc->ran, tc->in);
}

static void close_local(struct archpmu_batch *b)
{
	shut_local(b);
	fold_local(b);
}

static void time_zero(const struct archpmu_claims *cl, struct archpmu_claim *c)
{
	struct archpmu_task_cpu *tc = gate_of(cl, c);

	raw_write_seqcount_begin(&tc->seq);
	tc->ns = 0;
	tc->since = ktime_get_mono_fast_ns();
	raw_write_seqcount_end(&tc->seq);
}

static bool gate_is_open(const struct archpmu_claims *cl, const struct archpmu_claim *c)
{
	return READ_ONCE(gate_of(cl, c)->in);
}

static bool gate_ran(const struct archpmu_claims *cl, const struct archpmu_claim *c)
{
	return READ_ONCE(gate_of(cl, c)->ran);
}

static u64 time_ns(const struct archpmu_claims *cl, const struct archpmu_claim *c, u64 now)
{
	const struct archpmu_task_cpu *tc = gate_of(cl, c);
	unsigned int seq;
	u64 ns;

	do {
		seq = raw_read_seqcount_begin(&tc->seq);
		ns = tc->ns;
		if (READ_ONCE(tc->in) && now > tc->since)
			ns += now - tc->since;
	} while (read_seqcount_retry(&tc->seq, seq));
	return ns;
}

static bool incomplete(const struct archpmu_claims *cl)
{
	return READ_ONCE(task_of(cl)->missed);
}

static const struct archpmu_scope task_gate_scope = {
	.sync_local = sync_local,
	.shut_local = shut_local,
	.fold_local = fold_local,
	.close_local = close_local,
	.release_local = release_local,
	.start = gates_start,
	.stopping = gates_stopping,
	.sync = gates_sync,
	.off = gate_off,
	.time_zero = time_zero,
	.open = gate_is_open,
	.ran = gate_ran,
	.time_ns = time_ns,
	.incomplete = incomplete,
};

int archpmu_task_bind(struct archpmu_task *t, struct archpmu_claims *cl)
{
	unsigned int i;

	t->cpus = kvcalloc(cl->nr_cpus, sizeof(*t->cpus), GFP_KERNEL);
	if (!t->cpus)
		return -ENOMEM;
	for (i = 0; i < cl->nr_cpus; i++)
		seqcount_init(&t->cpus[i].seq);
	t->cl = cl;
	t->on_exec = t->flags & ARCHPMU_TASK_ENABLE_ON_EXEC;
	cl->scope = &task_gate_scope;
	cl->scope_data = t;
	return 0;
}
