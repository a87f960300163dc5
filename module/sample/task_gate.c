// SPDX-License-Identifier: GPL-2.0
/*
 * Sampling in a task session's gate (task/gate.c calls these hooks on the
 * claim's CPU with interrupts disabled, the counters stopped).
 *
 * While the gate is closed the sampling counters are hidden from the PMI
 * handler (the context's sampling bits): an overflow still pending as the
 * gate closes (its PMI not yet taken) is acked and stays in the period's
 * remainder, to be sampled once a task of the session runs again, never in
 * whichever task runs meanwhile. Its PMI, should it be on its way, is
 * claimed by the grace of released_ns.
 *
 * Each event's period follows its task from CPU to CPU, as the state of
 * perf's per-task event does: saved as the gate closes, loaded before it
 * opens on another CPU. So does a frequency's estimate (freq.c): each task's
 * period comes from its own rate, not from whatever else ran on the CPU.
 */
#include <linux/minmax.h>

#include "record.h"
#include "sample.h"

size_t archpmu_sample_carry_size(unsigned int nr_events)
{
	return array_size(nr_events, sizeof(struct archpmu_sample_carry));
}

static void save(const struct archpmu_claims *cl, struct archpmu_claim *c,
		 struct archpmu_sample_carry *carry)
{
	const struct archpmu_cpu_ctx *ctx = this_cpu_ptr(&archpmu_cpu_ctx);
	unsigned int e;

	for (e = 0; e < cl->nr_events; e++) {
		struct archpmu_hw_event *hw = &c->hw[e];
		u64 total;

		if (!hw->period || !archpmu_claim_placed(c, e))
			continue;
		total = archpmu_hw_event_update(ctx, hw);
		carry[e].left = local64_read(&hw->period_left);
		carry[e].period = hw->period;
		carry[e].last_period = hw->last_period;
		if (hw->freq)
			archpmu_freq_save(hw, total, &carry[e]);
	}
}

static void load(const struct archpmu_claims *cl, struct archpmu_claim *c,
		 const struct archpmu_sample_carry *carry)
{
	const struct archpmu_cpu_ctx *ctx = this_cpu_ptr(&archpmu_cpu_ctx);
	unsigned int e;

	for (e = 0; e < cl->nr_events; e++) {
		struct archpmu_hw_event *hw = &c->hw[e];
		u64 total;
		s64 next;

		if (!hw->period || !archpmu_claim_placed(c, e))
			continue;
		total = archpmu_hw_event_update(ctx, hw);
		if (hw->freq)
			archpmu_freq_load(hw, total, &carry[e]);
		if (!carry[e].period) {
			next = hw->period;	/* a task new to the session */
		} else {
			if (hw->freq)
				WRITE_ONCE(hw->period, carry[e].period);
			hw->last_period = carry[e].last_period;
			/* <= 0: an overflow pending when it left, sampled at once here. */
			next = clamp_t(s64, carry[e].left, 1, hw->period);
		}
		archpmu_hw_event_reload(ctx, hw, next);
	}
}

static void frequencies_count(const struct archpmu_claims *cl, struct archpmu_claim *c,
			      bool on, u64 now)
{
	unsigned int e;

	for (e = 0; e < cl->nr_events; e++)
		archpmu_freq_counting(&c->hw[e], on, now);
}

/*
 * A counter throttled as its gate closes runs again when it opens, as perf's
 * event_sched_in unthrottles: hidden, no tick would resume it, and its task's
 * events would go uncounted until the next one. Ended as the gate closes,
 * with its UNTHROTTLE, so that one left behind (the session closed, the CPU
 * gone) never outlives its gate; hidden, no PMI handler throttles it again.
 */
static void unthrottle(struct archpmu_cpu_ctx *ctx, const struct archpmu_claims *cl,
		       struct archpmu_claim *c, u64 pmi, u64 now)
{
	u64 bits = atomic64_fetch_andnot(pmi, &ctx->throttled) & pmi;
	unsigned int e;

	for (e = 0; bits && e < cl->nr_events; e++)
		if (archpmu_claim_placed(c, e) &&
		    bits & archpmu_counter_bit(c->hw[e].counter))
			archpmu_record_throttle(&c->hw[e], false, now);
}

static void gate_close(const struct archpmu_claims *cl, struct archpmu_claim *c, void *carry,
		       u64 now)
{
	struct archpmu_cpu_ctx *ctx = this_cpu_ptr(&archpmu_cpu_ctx);
	u64 pmi = archpmu_ctx_pmi_counters(&c->change);

	if (!pmi)
		return;
	WRITE_ONCE(ctx->sampling, ctx->sampling & ~pmi);
	WRITE_ONCE(ctx->released_ns, now);
	archpmu_wrmsr_local(ARCHPMU_MSR_GLOBAL_OVF_CTRL, pmi);
	unthrottle(ctx, cl, c, pmi, now);
	frequencies_count(cl, c, false, now);
	if (carry)
		save(cl, c, carry);
}

static void gate_open(const struct archpmu_claims *cl, struct archpmu_claim *c,
		      const void *carry, u64 now)
{
	struct archpmu_cpu_ctx *ctx = this_cpu_ptr(&archpmu_cpu_ctx);
	u64 pmi = archpmu_ctx_pmi_counters(&c->change);

	if (!pmi)
		return;
	if (carry)
		load(cl, c, carry);
	frequencies_count(cl, c, true, now);
	WRITE_ONCE(ctx->sampling, ctx->sampling | pmi);
	archpmu_sample_tick_resume();
}

const struct archpmu_sampling_hooks archpmu_sample_hooks = {
	.gate_close = gate_close,
	.gate_open = gate_open,
	.restart = archpmu_sample_restart_local,
};
