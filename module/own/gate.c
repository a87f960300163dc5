// SPDX-License-Identifier: GPL-2.0
/*
 * The gate of a task session's claim: its counters are programmed on every
 * CPU of the session, and started only while one of the session's tasks runs
 * there. The context-switch probe (task/) and the rounds below open and close
 * it on the claim's CPU, with interrupts disabled, so the two never overlap;
 * the counts stay in the counters, which count/ folds as for any session.
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

#include "own.h"

static void gate_msrs(const struct archpmu_claims *cl, const struct archpmu_claim *c, bool on)
{
	u64 fixed_val = 0, fixed_mask = 0, mask, v;
	unsigned int e;

	for (e = 0; e < cl->nr_events; e++) {
		if (!archpmu_claim_placed(c, e))
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
static void gate_time(struct archpmu_claim *c, bool on, u64 now)
{
	raw_write_seqcount_begin(&c->task_seq);
	if (on) {
		c->task_since = now;
		WRITE_ONCE(c->task_ran, true);
	} else if (now > c->task_since) {
		c->task_ns += now - c->task_since;
	}
	WRITE_ONCE(c->task_in, on);
	raw_write_seqcount_end(&c->task_seq);
}

void archpmu_claim_gate_task_local(const struct archpmu_claims *cl, struct archpmu_claim *c,
				   bool on, void *carry)
{
	const struct archpmu_sampling_hooks *hooks = cl->sampling_hooks;
	u64 now;

	lockdep_assert_irqs_disabled();
	if (c->task_in == on)
		return;
	/* The clocks stop once the counters have, and start before they do. */
	if (!on) {
		gate_global(c, false);
		gate_msrs(cl, c, false);
		now = ktime_get_mono_fast_ns();
		if (hooks)
			hooks->gate_close(cl, c, carry, now);
		gate_time(c, false, now);
	} else {
		now = ktime_get_mono_fast_ns();
		gate_time(c, true, now);
		if (hooks)
			hooks->gate_open(cl, c, carry, now);
		gate_msrs(cl, c, true);
		gate_global(c, true);
	}
}

static struct archpmu_claim *claim_of_batch(struct archpmu_batch *b)
{
	return container_of(b, struct archpmu_claim, batch);
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
	bool here = cl->task_here(cl, &carry);

	archpmu_claim_gate_task_local(cl, c, may_open && here, carry);
}

void archpmu_claim_gate_sync_local(struct archpmu_batch *b)
{
	struct archpmu_claim *c = claim_of_batch(b);

	gate_set_local(c, archpmu_task_running(c->claims) && !READ_ONCE(c->claims->suspended));
}

void archpmu_claim_gate_shut_local(struct archpmu_claim *c)
{
	gate_set_local(c, false);
}

static void gate_off_local(struct archpmu_batch *b)
{
	archpmu_claim_gate_shut_local(claim_of_batch(b));
}

void archpmu_claim_gate_release_local(struct archpmu_batch *b)
{
	struct archpmu_claim *c = claim_of_batch(b);

	if (c->task_in)
		gate_time(c, false, ktime_get_mono_fast_ns());
	archpmu_ctx_release_local(b);
}

int archpmu_claims_gate_sync(struct archpmu_claims *cl)
{
	unsigned int i;

	lockdep_assert_held(&archpmu_own_lock);
	archpmu_claims_round_begin(cl);
	for (i = 0; i < cl->nr_cpus; i++) {
		struct archpmu_claim *c = &cl->cpus[i];

		if (!c->programmed)
			continue;
		archpmu_batch_init(&c->batch, archpmu_claim_gate_sync_local, NULL, NULL);
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
		archpmu_batch_init(&c->batch, archpmu_claim_gate_sync_local, NULL, NULL);
		ret = archpmu_batch_run(cpu, &c->batch);
	}
	put_cpu();
	return ret;
}

int archpmu_claims_gate_start(struct archpmu_claims *cl, bool here)
{
	bool armed = cl->task_on_exec && !READ_ONCE(cl->task_exec_seen);

	lockdep_assert_held(&archpmu_own_lock);
	xchg(&cl->task_state, armed ? ARCHPMU_TASK_ARMED : ARCHPMU_TASK_RUNNING);
	return here ? gate_sync_here(cl) : archpmu_claims_gate_sync(cl);
}

void archpmu_claims_gate_stopping(struct archpmu_claims *cl)
{
	lockdep_assert_held(&archpmu_own_lock);
	xchg(&cl->task_state, ARCHPMU_TASK_STOPPED);
}

int archpmu_claim_gate_off(struct archpmu_claims *cl, struct archpmu_claim *c)
{
	lockdep_assert_held(&archpmu_own_lock);
	if (!c->programmed)
		return 0;
	archpmu_batch_init(&c->batch, gate_off_local, NULL, NULL);
	return archpmu_batch_run(c->cpu, &c->batch);
}

void archpmu_claim_gate_fold_local(struct archpmu_batch *b)
{
	struct archpmu_claim *c = claim_of_batch(b);

	WRITE_ONCE(c->task_ran, c->task_in);
}

void archpmu_claim_gate_close_local(struct archpmu_batch *b)
{
	archpmu_claim_gate_shut_local(claim_of_batch(b));
	archpmu_claim_gate_fold_local(b);
}

void archpmu_claim_task_zero_local(struct archpmu_batch *b)
{
	struct archpmu_claim *c = claim_of_batch(b);

	raw_write_seqcount_begin(&c->task_seq);
	c->task_ns = 0;
	c->task_since = ktime_get_mono_fast_ns();
	raw_write_seqcount_end(&c->task_seq);
}

u64 archpmu_claim_task_ns(const struct archpmu_claim *c, u64 now)
{
	unsigned int seq;
	u64 ns;

	do {
		seq = raw_read_seqcount_begin(&c->task_seq);
		ns = c->task_ns;
		if (READ_ONCE(c->task_in) && now > c->task_since)
			ns += now - c->task_since;
	} while (read_seqcount_retry(&c->task_seq, seq));
	return ns;
}
