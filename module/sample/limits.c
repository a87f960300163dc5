// SPDX-License-Identifier: GPL-2.0
/*
 * Sampling's limits, writable at run time in /sys/module/archpmu/parameters/:
 * sample_max_rate (perf's perf_event_max_sample_rate) and sample_cpu_percent
 * (perf's perf_cpu_time_max_percent), which the PMI handler and the sampling
 * tick (pmi.c) throttle by, each kept as credit per CPU.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/string.h>

#include "sample.h"

#define MAX_RATE_LIMIT		10000000

#define DEFAULT_MAX_RATE	100000
/* perf's max_samples_per_tick at @rate: at least one. */
#define PER_TICK(rate)		DIV_ROUND_UP((u64)(rate) * ARCHPMU_SAMPLE_TICK_NS, NSEC_PER_SEC)

static uint sample_max_rate = DEFAULT_MAX_RATE;
/* The credit archpmu_sample_rate_take() holds at most: two ticks' share. */
static u64 rate_credit_cap = 2 * PER_TICK(DEFAULT_MAX_RATE) * NSEC_PER_SEC;

static int max_rate_set(const char *text, const struct kernel_param *kp)
{
	uint v;
	int ret = kstrtouint(text, 0, &v);

	if (ret || !v || v > MAX_RATE_LIMIT) {
		pr_err("sample_max_rate=%.*s: allowed 1-%u samples per second\n",
		       (int)strcspn(text, "\n"), text, MAX_RATE_LIMIT);
		return -EINVAL;
	}
	/* Set apart: a PMI meanwhile may take one with the other's old value. */
	WRITE_ONCE(rate_credit_cap, 2 * PER_TICK(v) * NSEC_PER_SEC);
	WRITE_ONCE(sample_max_rate, v);
	return 0;
}

static const struct kernel_param_ops max_rate_ops = {
	.set = max_rate_set,
	.get = param_get_uint,
};

module_param_cb(sample_max_rate, &max_rate_ops, &sample_max_rate, 0644);
MODULE_PARM_DESC(sample_max_rate, "Samples per second per CPU before throttling (default 100000)");

static uint sample_cpu_percent = 25;

static int cpu_percent_set(const char *text, const struct kernel_param *kp)
{
	uint v;
	int ret = kstrtouint(text, 0, &v);

	if (ret || !v || v > 100) {
		pr_err("sample_cpu_percent=%.*s: allowed 1-100 (100: no time budget)\n",
		       (int)strcspn(text, "\n"), text);
		return -EINVAL;
	}
	WRITE_ONCE(sample_cpu_percent, v);
	return 0;
}

static const struct kernel_param_ops cpu_percent_ops = {
	.set = cpu_percent_set,
	.get = param_get_uint,
};

module_param_cb(sample_cpu_percent, &cpu_percent_ops, &sample_cpu_percent, 0644);
MODULE_PARM_DESC(sample_cpu_percent, "Percent of each CPU the PMI handler may take before throttling; 100: no limit (default 25)");

u32 archpmu_sample_max_rate(void)
{
	return READ_ONCE(sample_max_rate);
}

/*
 * sample_max_rate as credit (in 1/NSEC_PER_SEC samples) that time tops up at
 * that rate, holding at most two ticks' share (perf's max_samples_per_tick,
 * at least one sample). A CPU whose samples come unevenly (a tick's worth
 * late, then at once) keeps within the rate over time without a throttle,
 * where perf counts each tick apart and throttles. In the PMI, on its CPU.
 */
bool archpmu_sample_rate_take(struct archpmu_cpu_ctx *ctx, u64 now)
{
	u64 rate = READ_ONCE(sample_max_rate);
	u64 cap = READ_ONCE(rate_credit_cap);
	u64 gap = now > ctx->rate_credit_ns ? now - ctx->rate_credit_ns : 0;

	/* A second tops up any rate's cap (a gap of 8 ms would not, below 125/s). */
	gap = min_t(u64, gap, NSEC_PER_SEC);
	ctx->rate_credit = min(ctx->rate_credit + gap * rate, cap);
	ctx->rate_credit_ns = now;
	if (ctx->rate_credit < NSEC_PER_SEC)
		return false;
	ctx->rate_credit -= NSEC_PER_SEC;
	return true;
}

/*
 * sample_cpu_percent as credit of handler time, as the rate: time tops it up
 * at that share of the CPU, with two ticks' budget at most, and each PMI
 * takes what it took (@took ns, at @now). perf averages its handler's time
 * per sample and lowers its rate limit when that goes past the share; a CPU
 * here keeps within the share over time, and a burst within it (two ticks'
 * samples at once after a stall) is not throttled. The credit is in
 * hundredths of a nanosecond. In the PMI, on its CPU.
 */
bool archpmu_sample_time_take(struct archpmu_cpu_ctx *ctx, u64 now, u64 took)
{
	u64 pct = READ_ONCE(sample_cpu_percent);
	u64 gap = now > ctx->time_credit_ns ? now - ctx->time_credit_ns : 0;

	if (pct >= 100)
		return true;
	gap = min_t(u64, gap, NSEC_PER_SEC);
	ctx->time_credit = min(ctx->time_credit + gap * pct, 2 * ARCHPMU_SAMPLE_TICK_NS * pct);
	ctx->time_credit_ns = now;
	if (ctx->time_credit < took * 100) {
		ctx->time_credit = 0;
		return false;
	}
	ctx->time_credit -= took * 100;
	return true;
}

/* Sampling begins on this CPU: a tick's share of samples and of time in hand. */
void archpmu_sample_credit_reset(struct archpmu_cpu_ctx *ctx, u64 now)
{
	ctx->rate_credit = READ_ONCE(rate_credit_cap) / 2;
	ctx->rate_credit_ns = now;
	ctx->time_credit = ARCHPMU_SAMPLE_TICK_NS * READ_ONCE(sample_cpu_percent);
	ctx->time_credit_ns = now;
}
