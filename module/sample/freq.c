// SPDX-License-Identifier: GPL-2.0
/*
 * Frequency mode (perf's attr.freq): a sampling event's period, estimated at
 * each sampling tick (pmi.c) from the events its counter counted over the
 * time it counted, so that it gives the frequency asked. In a task session
 * the estimate is each task's own (task_gate.c carries it).
 */
#include <linux/math64.h>
#include <linux/minmax.h>
#include <asm/tsc.h>

#include "sample.h"

/*
 * A frequency's period until the tick has estimated it (pmi.c): a
 * second's events at the TSC's rate, which cycles and instructions come
 * close to. perf starts from 1 and re-estimates at every PMI; from 1 here the
 * first tick would sample at sample_max_rate and be throttled, and its count
 * with it. The tick restarts a counter whose estimate comes out shorter.
 */
u64 archpmu_freq_first_period(u64 freq, u64 max)
{
	u64 rate = (u64)(tsc_khz ?: USEC_PER_SEC) * 1000;

	return clamp_t(u64, div64_u64(rate, freq), 1, max);
}

/*
 * A frequency event's counter stops (@on false: a task session's gate closes,
 * or a throttle) or starts counting toward its next estimate, at @now
 * (ktime_get_mono_fast_ns). On its CPU, interrupts off, or in the PMI.
 */
void archpmu_freq_counting(struct archpmu_hw_event *hw, bool on, u64 now)
{
	if (!hw->freq)
		return;
	if (on) {
		/*
		 * Counting already: the tick stamped it before its gate first
		 * opened, while it did not count. The estimate starts again.
		 */
		if (hw->freq_since)
			hw->freq_stamped = false;
		hw->freq_since = now;
	} else if (hw->freq_since) {
		if (now > hw->freq_since)
			hw->freq_ns += now - hw->freq_since;
		hw->freq_since = 0;
	}
}

/*
 * A task's estimate leaves with it (its counter stopped, at @total) and comes
 * back with it: what it counted toward the next, over what time, as perf's
 * per-task events each keep their own. A task new to the session (all zero)
 * starts one afresh from the period it finds, its first taken whole.
 */
void archpmu_freq_save(const struct archpmu_hw_event *hw, u64 total,
		       struct archpmu_sample_carry *carry)
{
	carry->freq_events = hw->freq_stamped ? total - hw->freq_total : 0;
	carry->freq_ns = hw->freq_ns;
	carry->freq_stamped = hw->freq_stamped;
	carry->freq_estimated = hw->freq_estimated;
}

void archpmu_freq_load(struct archpmu_hw_event *hw, u64 total,
		       const struct archpmu_sample_carry *carry)
{
	hw->freq_total = total - carry->freq_events;
	hw->freq_ns = carry->freq_ns;
	hw->freq_since = 0;
	hw->freq_stamped = carry->freq_stamped;
	hw->freq_estimated = carry->freq_estimated;
}

/*
 * perf_adjust_period: the period that gives @hw->freq samples a second,
 * low-pass, from the events counted over the time the counter counted since
 * the last estimate (archpmu_freq_counting: not while a task session's gate
 * is closed, nor while throttled), so a task session's estimate is the rate
 * of its tasks while they ran here, not the CPU's, and a throttle does not
 * read as a slow event. The first estimate is taken whole, as is one eight
 * times the period: the first period is only a guess. Returns whether the
 * counter should restart.
 */
static bool adjust_period(const struct archpmu_cpu_ctx *ctx, struct archpmu_hw_event *hw,
			  u64 now)
{
	u64 total = archpmu_hw_event_update(ctx, hw);
	u64 counted, target, period = hw->period;
	s64 step, left;

	/* Started since the last tick: it counts now, as the tick sees it. */
	if (!hw->freq_stamped) {
		hw->freq_stamped = true;
		hw->freq_total = total;
		hw->freq_ns = 0;
		hw->freq_since = now;
		return false;
	}
	counted = hw->freq_ns + (hw->freq_since && now > hw->freq_since ? now - hw->freq_since : 0);
	/* Too short to tell, or nothing counted yet: go on counting toward it. */
	if (counted < ARCHPMU_SAMPLE_TICK_NS / 4 || total == hw->freq_total)
		return false;
	target = div64_u64(mul_u64_u64_div_u64(total - hw->freq_total, NSEC_PER_SEC, counted),
			   hw->freq) ?: 1;
	hw->freq_total = total;
	hw->freq_ns = 0;
	hw->freq_since = hw->freq_since ? now : 0;
	step = (s64)(target - period);
	step = step >= 0 ? (step + 7) / 8 : step / 8;
	if (!hw->freq_estimated || target / 8 > period)
		step = target - period;
	hw->freq_estimated = true;
	period = clamp_t(u64, period + step, 1, hw->period_max);
	WRITE_ONCE(hw->period, period);
	/* As perf's: a counter far from its overflow would sample too late. */
	left = local64_read(&hw->period_left);
	return left > 0 && (u64)left / 8 > period;
}

/* Restart a counter with its new period, as perf's x86_perf_event_set_period. */
static void restart_period(struct archpmu_cpu_ctx *ctx, struct archpmu_hw_event *hw,
			   unsigned int bit)
{
	u64 running;

	running = archpmu_counters_pause_local(BIT_ULL(bit));
	archpmu_hw_event_update(ctx, hw);
	hw->last_period = READ_ONCE(hw->period);
	archpmu_hw_event_reload(ctx, hw, hw->last_period);
	archpmu_counters_resume_local(running);
}

void archpmu_freq_estimate(struct archpmu_cpu_ctx *ctx, struct archpmu_hw_event *hw,
			   unsigned int bit, u64 now)
{
	if (adjust_period(ctx, hw, now))
		restart_period(ctx, hw, bit);
}
