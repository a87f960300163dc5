// SPDX-License-Identifier: GPL-2.0
/*
 * Top-down metric events (uapi): not counters, but fields of IA32_PERF_METRICS,
 * each a fraction of 0xFF of the slots fixed counter 3 counted since both
 * were last written 0. A fold turns them into slots per category and, for
 * the next one to measure from there, resets both, the counters paused for
 * it, as perf's intel_update_topdown_event(); a claim programs both from 0.
 */
#include "own.h"

#define SLOTS_COUNTER	(ARCHPMU_COUNTER_FIXED | 3)

/* Does @c have top-down metric events on its PMU now? */
static bool metrics_placed(const struct archpmu_claims *cl, const struct archpmu_claim *c)
{
	unsigned int e;

	for (e = 0; e < cl->nr_events; e++)
		if (archpmu_claim_placed(c, e) && archpmu_counter_is_metric(c->hw[e].counter))
			return true;
	return false;
}

/* The event on fixed counter 3 in @counters: the metric events' slots. */
static int slots_event(const struct archpmu_claims *cl, const u32 *counters)
{
	unsigned int e;

	for (e = 0; e < cl->nr_events; e++)
		if (counters[e] == SLOTS_COUNTER)
			return e;
	return -1;
}

struct archpmu_msr_op *archpmu_metrics_pause(struct archpmu_claims *cl, struct archpmu_claim *c)
{
	if (!metrics_placed(cl, c))
		return NULL;
	return archpmu_batch_pause(&c->batch, archpmu_counter_bit(SLOTS_COUNTER) |
					      ARCHPMU_GLOBAL_PERF_METRICS);
}

void archpmu_metrics_reset(struct archpmu_claim *c, struct archpmu_msr_op *pause)
{
	if (!pause)
		return;
	/* Fixed counter 3 first, as perf writes them. */
	archpmu_batch_write(&c->batch, ARCHPMU_MSR_FIXED_CTR0 + 3, 0);
	archpmu_batch_write(&c->batch, ARCHPMU_MSR_PERF_METRICS, 0);
	archpmu_batch_resume(&c->batch, pause);
}

/* Are any of @counters top-down metric events? */
static bool metrics_in(const struct archpmu_claims *cl, const u32 *counters)
{
	unsigned int e;

	for (e = 0; e < cl->nr_events; e++)
		if (archpmu_counter_is_metric(counters[e]))
			return true;
	return false;
}

void archpmu_claim_fold(struct archpmu_claims *cl, struct archpmu_claim *c, const u64 *raw,
			const u32 *counters, bool reset)
{
	int slots = slots_event(cl, counters);
	bool metrics = slots >= 0 && metrics_in(cl, counters);
	u64 counted = 0, prev;
	unsigned int e;

	if (metrics) {
		/*
		 * Fixed counter 3 below where it was: another agent reset it with
		 * PERF_METRICS (perf's PMI handler does on GLOBAL_STATUS bit 48),
		 * not a wrap, which takes hours of slots.
		 */
		prev = local64_read(&c->hw[slots].prev);
		counted = raw[slots] >= prev ? raw[slots] - prev : raw[slots];
		local64_add(counted, &c->hw[slots].total);
		local64_set(&c->hw[slots].prev, reset ? 0 : raw[slots]);
	}
	for (e = 0; e < cl->nr_events; e++) {
		u32 ctr = counters[e];

		if (ctr == ARCHPMU_NO_COUNTER || (metrics && (int)e == slots))
			continue;
		if (archpmu_counter_is_metric(ctr))
			archpmu_hw_fold_metric(&c->hw[e], counted, raw[e], ctr & 0xff);
		else
			archpmu_hw_fold(&c->hw[e], raw[e], archpmu_claim_width_mask(c, ctr));
	}
}

void archpmu_metrics_lost(struct archpmu_claims *cl, struct archpmu_claim *c)
{
	unsigned int e;

	for (e = 0; e < cl->nr_events; e++)
		if (c->hw[e].counter == SLOTS_COUNTER)
			local64_set(&c->hw[e].prev, 0);
}
