// SPDX-License-Identifier: GPL-2.0
/*
 * The PMI handler, and the sampling tick's pass (the tick itself: tick.c).
 *
 * The handler follows intel_pmu_handle_irq (docs/pmu.md §5): GLOBAL_CTRL
 * = 0, read GLOBAL_STATUS, ack our bits through OVF_CTRL, then for each of
 * our overflowed counters fold, reload -period and write a sample; again
 * while our bits stay set (at most PMI_MAX_LOOPS times: then our counters
 * stop until the tick); restore GLOBAL_CTRL and unmask LVTPC. v1 has no
 * GLOBAL_STATUS, and another agent's handler (perf's, for the NMI
 * watchdog) may ack our bits first, so a counter whose top bit is clear
 * has also overflowed, as in x86_pmu_handle_irq. It claims only its own
 * overflows (their number, so that the NMI core swallows a PMI latched
 * meanwhile), the NMIs the model says it sent, and the first NMI within
 * RELEASE_GRACE_NS of a release.
 *
 * NMI rules: no lock, no allocation, no printk; wakeups go through each
 * ring's irq_work. It reaches sessions only through the per-CPU context's
 * live view (pmu/cpu_ctx.h).
 *
 * Throttling, like perf's: the sample that takes a CPU over sample_max_rate
 * a second stops its counter (limits.c keeps that rate as credit over time,
 * where perf counts each tick apart, so uneven samples within the rate are
 * not throttled: bench/README.md); handler time above sample_cpu_percent
 * of the CPU (perf's perf_cpu_time_max_percent, 25 by default as there),
 * kept as credit too, stops all of the CPU's sampling counters; each until
 * the next tick (or its task's switch-out: task_gate.c, or its session's
 * START or STOP), with a THROTTLE and an UNTHROTTLE record. The tick also
 * re-estimates the period of frequency events (perf_adjust_period), writes
 * pending LOST records, and handles an overflow whose PMI was lost.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/string.h>
#include <asm/irq_regs.h>
#include <asm/nmi.h>

#include "../compat.h"
#include "record.h"

#define PMI_MAX_LOOPS		100
/* An NMI this soon after a claim or release may be a PMI of those counters. */
#define RELEASE_GRACE_NS	NSEC_PER_MSEC
/* pmi_lock, with the CPU hotplug lock read-held around it, guards these. */
static DEFINE_MUTEX(pmi_lock);
static unsigned int pmi_users;	/* sampling sessions */
/* For the benchmark (dev/debugfs.c): PMIs handled and the time they took. */
static DEFINE_PER_CPU(u64, pmi_handled);
static DEFINE_PER_CPU(u64, pmi_ns);

void archpmu_pmi_stats(u64 *handled, u64 *ns)
{
	unsigned int cpu;

	*handled = 0;
	*ns = 0;
	for_each_possible_cpu(cpu) {
		*handled += READ_ONCE(per_cpu(pmi_handled, cpu));
		*ns += READ_ONCE(per_cpu(pmi_ns, cpu));
	}
}

static int ctx_idx(unsigned int bit)
{
	return bit < ARCHPMU_BUSY_FIXED_SHIFT ? bit :
	       ARCHPMU_NR_GP + bit - ARCHPMU_BUSY_FIXED_SHIFT;
}

static bool global_msrs(const struct archpmu_cpu_ctx *ctx)
{
	return ctx->desc.version >= 2;
}

/* GLOBAL_STATUS's CTR_Frz, which v4 acks with the overflows: 0 before v4. */
static u64 frz_bit(const struct archpmu_cpu_ctx *ctx)
{
	return ctx->desc.version >= 4 ? ARCHPMU_STATUS_CTR_FRZ : 0;
}

/* Stop (or start) one of our counters by its own enable (v1: no GLOBAL_CTRL). */
static void v1_enable(struct archpmu_hw_event *hw, bool on)
{
	u32 msr = archpmu_gp_sel_msr(hw->counter);
	u64 sel;

	if (archpmu_rdmsr_local(msr, &sel))
		return;
	archpmu_wrmsr_local(msr, on ? sel | ARCHPMU_EVTSEL_EN : sel & ~ARCHPMU_EVTSEL_EN);
}

static void throttle(struct archpmu_cpu_ctx *ctx, u64 bits, u64 now)
{
	unsigned long todo = bits & READ_ONCE(ctx->sampling);
	unsigned int bit;

	todo &= ~atomic64_fetch_or(todo, &ctx->throttled);
	for_each_set_bit(bit, &todo, 64) {
		struct archpmu_hw_event *hw = READ_ONCE(ctx->owner[ctx_idx(bit)]);

		if (!hw)
			continue;
		if (!global_msrs(ctx))
			v1_enable(hw, false);
		archpmu_freq_counting(hw, false, now);
		archpmu_record_throttle(hw, true, now);
	}
}

/* Our counters that overflowed: by GLOBAL_STATUS, or by their value. */
static u64 overflowed(const struct archpmu_cpu_ctx *ctx, u64 sampling, u64 *status)
{
	unsigned long rest;
	unsigned int bit;
	u64 ovf = 0;

	*status = 0;
	if (global_msrs(ctx) && !archpmu_rdmsr_local(ARCHPMU_MSR_GLOBAL_STATUS, status))
		ovf = *status & sampling;
	rest = sampling & ~ovf;
	for_each_set_bit(bit, &rest, 64) {
		struct archpmu_hw_event *hw = READ_ONCE(ctx->owner[ctx_idx(bit)]);
		u32 width;
		u64 raw;

		if (!hw)
			continue;
		width = hw->counter & ARCHPMU_COUNTER_FIXED ? ctx->desc.fixed_width :
			ctx->desc.gp_width;
		/* Loaded for at most half the range: the top bit is set until it wraps. */
		if (width < 2)
			continue;
		if (archpmu_rdmsr_local(archpmu_counter_msr(&ctx->desc, hw->counter, false), &raw))
			continue;
		if (!(raw & BIT_ULL(width - 1)))
			ovf |= BIT_ULL(bit);
	}
	return ovf;
}

static void handle_overflow(struct archpmu_cpu_ctx *ctx, unsigned int bit,
			    struct pt_regs *regs, u64 now)
{
	struct archpmu_hw_event *hw = READ_ONCE(ctx->owner[ctx_idx(bit)]);
	u64 mask, period, start, running;
	s64 left;
	bool sample;

	if (!hw || !hw->smp)
		return;
	mask = archpmu_counter_width_mask(&ctx->desc, hw->counter);
	/* The fold takes every event since the last one from period_left. */
	archpmu_hw_event_update(ctx, hw);
	period = READ_ONCE(hw->period);
	/*
	 * As perf's x86_perf_event_set_period: the events counted past the end
	 * of the period belong to the next one (past whole periods, to where
	 * they leave off), so N events in steps shorter than a period give
	 * exactly N / period samples. Only adds: a fold this NMI interrupted
	 * still takes its share.
	 */
	left = local64_read(&hw->period_left);
	sample = left <= 0;
	if (sample) {
		u64 past = (u64)-left % period;
		s64 next = past ? period - past : period;

		local64_add(next - left, &hw->period_left);
		left = next;
	}
	start = archpmu_sampling_start(left, mask);
	/* v2+: GLOBAL_CTRL is 0 in here; v1 stops the counter (SDM 18.2.1.1). */
	running = global_msrs(ctx) ? 0 : archpmu_counters_pause_local(BIT_ULL(bit));
	archpmu_wrmsr_local(archpmu_counter_msr(&ctx->desc, hw->counter, true), start);
	archpmu_counters_resume_local(running);
	local64_set(&hw->prev, start);
	if (!sample)
		return;
	archpmu_record_sample(ctx, hw, regs, hw->last_period, now);
	hw->last_period = period;
	if (!archpmu_sample_rate_take(ctx, now))
		throttle(ctx, BIT_ULL(bit), now);
}

/*
 * Ours. @events overflows handled: more than one tells the NMI core (as
 * perf's handler does) that a PMI latched meanwhile may find nothing, and is
 * ours.
 */
static int handled(unsigned int events)
{
	return max(events, 1U);
}

/*
 * Nothing to handle: ours all the same if the model sent it, or if a claim
 * or release has just changed counters with a PMI on its way.
 */
static int not_ours(struct archpmu_cpu_ctx *ctx, bool model_sent)
{
	u64 released = READ_ONCE(ctx->released_ns);

	if (model_sent)
		return handled(1);
	if (released && ktime_get_mono_fast_ns() - released < RELEASE_GRACE_NS) {
		WRITE_ONCE(ctx->released_ns, 0);
		return handled(1);
	}
	return NMI_DONE;
}

static void unmask_lvtpc(void)
{
	if (archpmu_backend->pmi_unmask)
		archpmu_backend->pmi_unmask();
}

/*
 * The handler proper, in NMI, or in the tick with pmi_running set. With
 * @mid_ack, LVTPC is unmasked once the overflows are acked, before the
 * counters run again (*@mid_ack is then true).
 */
static int handle_pmi(struct archpmu_cpu_ctx *ctx, struct pt_regs *nmi_regs, bool model_sent,
		      bool *mid_ack)
{
	u64 sampling = READ_ONCE(ctx->sampling);
	bool global = global_msrs(ctx);
	struct pt_regs *regs = NULL;
	u64 t0, t1, ctrl = 0, status, ovf;
	unsigned int bit, events = 0;
	unsigned long todo;
	int loops, ret;

	if (!sampling)
		return not_ours(ctx, model_sent);
	t0 = ktime_get_mono_fast_ns();
	if (global) {
		ret = archpmu_rdmsr_local(ARCHPMU_MSR_GLOBAL_CTRL, &ctrl);
		/*
		 * The model refuses an NMI that meets one of its steps and sends
		 * it again when the step ends: this one may be ours, unseen.
		 */
		if (ret)
			return ret == -EBUSY ? NMI_HANDLED : NMI_DONE;
		archpmu_wrmsr_local(ARCHPMU_MSR_GLOBAL_CTRL, 0);
	}
	for (loops = 0; (ovf = overflowed(ctx, sampling, &status)); loops++) {
		if (loops == PMI_MAX_LOOPS) {
			/* Stuck: stop ours until the tick rather than loop on. */
			throttle(ctx, sampling, t0);
			if (global)
				archpmu_wrmsr_local(ARCHPMU_MSR_GLOBAL_OVF_CTRL, status & ovf);
			break;
		}
		if (!regs)
			regs = archpmu_backend->pmi_regs ?
			       archpmu_backend->pmi_regs(nmi_regs) : nmi_regs;
		/* v4+ under a freeze on PMI: the counters stay frozen until CTR_Frz is acked. */
		if (global && (status & ovf))
			archpmu_wrmsr_local(ARCHPMU_MSR_GLOBAL_OVF_CTRL,
					    status & (ovf | frz_bit(ctx)));
		todo = ovf;
		for_each_set_bit(bit, &todo, 64)
			handle_overflow(ctx, bit, regs, t0);
		events += hweight64(ovf);
	}
	t1 = ktime_get_mono_fast_ns();
	/* The fast clock may step back a little as an NMI meets its update. */
	if (loops && !archpmu_sample_time_take(ctx, t1, t1 > t0 ? t1 - t0 : 0))
		throttle(ctx, sampling, t0);
	if (loops) {
		__this_cpu_inc(pmi_handled);
		__this_cpu_add(pmi_ns, t1 - t0);
	}
	if (mid_ack) {
		unmask_lvtpc();
		*mid_ack = true;
	}
	/*
	 * What the handler found, and ours: on v2-3 a freeze on PMI
	 * (DEBUGCTL.FREEZE_PERFMON_ON_PMI, set by firmware or another kernel)
	 * cleared GLOBAL_CTRL before the handler read it.
	 */
	if (global)
		archpmu_wrmsr_local(ARCHPMU_MSR_GLOBAL_CTRL,
				    (ctrl | READ_ONCE(ctx->global_ours)) &
				    ~(atomic64_read(&ctx->throttled) & sampling));
	return loops ? handled(events) : not_ours(ctx, model_sent);
}

/*
 * The tick is in handle_pmi() on this CPU: an NMI then leaves the work to it
 * (pmi_deferred says one came, and the tick's pass goes again).
 */
static DEFINE_PER_CPU(bool, pmi_running);
static DEFINE_PER_CPU(bool, pmi_deferred);
#define RESCAN_MAX_PASSES	8

static int pmi_handler(unsigned int type, struct pt_regs *nmi_regs)
{
	struct archpmu_cpu_ctx *ctx = this_cpu_ptr(&archpmu_cpu_ctx);
	bool model_sent = archpmu_backend->pmi_take && archpmu_backend->pmi_take();
	bool sampling = READ_ONCE(ctx->sampling);
	bool unmasked = false;
	int ret;

	/*
	 * The APIC masked LVTPC as it delivered this NMI, if it was a PMI. It is
	 * unmasked for one of ours, and for any while this CPU samples: a PMI of
	 * ours that another handler took first, or that the model refused in
	 * the middle of a step, must not leave our next one masked. When: as
	 * perf does on this core (pmi_ack, arch_pmu.c).
	 */
	if (sampling && ctx->desc.pmi_ack == ARCHPMU_PMI_ACK_EARLY) {
		unmask_lvtpc();
		unmasked = true;
	}
	/*
	 * The tick's pass finds the overflows of ours this NMI could be for,
	 * going again if it came after the pass looked (rescan_lost_pmi).
	 */
	if (__this_cpu_read(pmi_running)) {
		__this_cpu_write(pmi_deferred, true);
		ret = sampling || model_sent ? NMI_HANDLED : NMI_DONE;
	} else {
		ret = handle_pmi(ctx, nmi_regs, model_sent,
				 sampling && ctx->desc.pmi_ack == ARCHPMU_PMI_ACK_MID ?
				 &unmasked : NULL);
	}
	if (!unmasked && (ret != NMI_DONE || sampling))
		unmask_lvtpc();
	return ret;
}

/*
 * A PMI of ours that was lost (LVTPC still masked when it came: a hypervisor
 * need not deliver it later) leaves an overflowed counter that is never
 * reloaded, its next PMI ~2^48 events away. The tick looks for one and
 * handles it as the NMI would have. Interrupts are off; an NMI meanwhile
 * leaves the work to this pass (pmi_running).
 */
static void rescan_lost_pmi(struct archpmu_cpu_ctx *ctx, u64 sampling)
{
	unsigned int pass;
	u64 status;

	if (!overflowed(ctx, sampling & ~atomic64_read(&ctx->throttled), &status))
		return;
	for (pass = 0; pass < RESCAN_MAX_PASSES; pass++) {
		__this_cpu_write(pmi_deferred, false);
		__this_cpu_write(pmi_running, true);
		barrier();
		handle_pmi(ctx, get_irq_regs(), false, NULL);
		barrier();
		__this_cpu_write(pmi_running, false);
		barrier();
		if (!__this_cpu_read(pmi_deferred))
			break;
	}
}

/*
 * The tick's estimate of a frequency event, and its restart. The PMI handler
 * leaves the event to this pass meanwhile (pmi_running), so a throttle does
 * not stop its clock halfway through; an overflow it found is the rescan's.
 */
static void estimate(struct archpmu_cpu_ctx *ctx, struct archpmu_hw_event *hw, unsigned int bit,
		     u64 now)
{
	__this_cpu_write(pmi_running, true);
	barrier();
	archpmu_freq_estimate(ctx, hw, bit, now);
	barrier();
	__this_cpu_write(pmi_running, false);
}

/*
 * The throttles of @bits have ended, their bits cleared: each told, and the
 * counters sessions hold running (global_ours: not one a session stopped
 * meanwhile) started again, on v1 by their own enable.
 */
static void throttles_ended(struct archpmu_cpu_ctx *ctx, u64 bits, u64 now)
{
	unsigned long todo = bits;
	unsigned int bit;

	for_each_set_bit(bit, &todo, 64) {
		struct archpmu_hw_event *hw = READ_ONCE(ctx->owner[ctx_idx(bit)]);

		if (!hw)
			continue;
		archpmu_record_throttle(hw, false, now);
		if (!global_msrs(ctx) && (BIT_ULL(bit) & READ_ONCE(ctx->global_ours)))
			v1_enable(hw, true);
	}
	if (bits && global_msrs(ctx))
		archpmu_global_ctrl_local(bits & READ_ONCE(ctx->global_ours), 0);
}

static void unthrottle(struct archpmu_cpu_ctx *ctx, u64 bits, u64 now)
{
	unsigned long todo = bits;
	unsigned int bit;

	atomic64_andnot(bits, &ctx->throttled);
	for_each_set_bit(bit, &todo, 64) {
		struct archpmu_hw_event *hw = READ_ONCE(ctx->owner[ctx_idx(bit)]);

		if (hw)
			archpmu_freq_counting(hw, true, now);
	}
	throttles_ended(ctx, bits, now);
}

void archpmu_sample_restart_local(struct archpmu_batch *b)
{
	struct archpmu_cpu_ctx *ctx = this_cpu_ptr(&archpmu_cpu_ctx);
	const struct archpmu_ctx_change *ch = b->arg;
	unsigned int i;

	archpmu_ctx_update_local(b);
	for (i = 0; i < ch->nr; i++)
		ch->hw[i].freq_stamped = false;
	/* One throttled as START's enables ran: they left it stopped. */
	throttles_ended(ctx, atomic64_fetch_andnot(ch->used, &ctx->throttled) & ch->used,
			ktime_get_mono_fast_ns());
}

bool archpmu_pmi_tick_local(void)
{
	struct archpmu_cpu_ctx *ctx = this_cpu_ptr(&archpmu_cpu_ctx);
	u64 sampling = READ_ONCE(ctx->sampling);
	unsigned long todo = sampling;
	u64 now = ktime_get_mono_fast_ns();
	unsigned int bit;

	if (!sampling)
		return false;
	for_each_set_bit(bit, &todo, 64) {
		struct archpmu_hw_event *hw = READ_ONCE(ctx->owner[ctx_idx(bit)]);

		if (!hw || !hw->smp)
			continue;
		if (hw->freq)
			estimate(ctx, hw, bit, now);
		archpmu_record_lost(&hw->smp->ring, now);
	}
	if (atomic64_read(&ctx->throttled) & sampling)
		unthrottle(ctx, atomic64_read(&ctx->throttled) & sampling, now);
	rescan_lost_pmi(ctx, sampling);
	/* Should LVTPC have been left masked (by another NMI handler, say). */
	unmask_lvtpc();
	return true;
}

void archpmu_pmi_begin_local(void)
{
	struct archpmu_cpu_ctx *ctx = this_cpu_ptr(&archpmu_cpu_ctx);

	/* Counters sampling here already keep their credit. */
	if (!READ_ONCE(ctx->sampling))
		archpmu_sample_credit_reset(ctx, ktime_get_mono_fast_ns());
	unmask_lvtpc();
}

int archpmu_pmi_get(const struct archpmu_claims *cl)
{
	int ret = 0;

	/* COUNT_OPEN holds the hotplug lock already (session.c), and archpmu_own_lock. */
	lockdep_assert_held(&archpmu_own_lock);
	mutex_lock(&pmi_lock);
	if (!pmi_users) {
		ret = register_nmi_handler(NMI_LOCAL, pmi_handler, 0, "archpmu");
		if (ret) {
			pr_err("registering the PMI handler failed (%d)\n", ret);
			goto out;
		}
	}
	pmi_users++;
	archpmu_tick_get(cl);
out:
	mutex_unlock(&pmi_lock);
	return ret;
}

void archpmu_pmi_put(const struct archpmu_claims *cl)
{
	cpus_read_lock();
	mutex_lock(&pmi_lock);
	archpmu_tick_put(cl);
	if (!--pmi_users) {
		/* Waits for handlers still running on any CPU. */
		unregister_nmi_handler(NMI_LOCAL, "archpmu");
	}
	mutex_unlock(&pmi_lock);
	cpus_read_unlock();
}

int archpmu_pmi_init(void)
{
	int ret;

	ret = archpmu_callchain_init();
	if (ret)
		return ret;
	ret = archpmu_tick_init();
	if (ret)
		archpmu_callchain_exit();
	return ret;
}

void archpmu_pmi_exit(void)
{
	archpmu_tick_exit();
	archpmu_callchain_exit();
}
