// SPDX-License-Identifier: GPL-2.0
/*
 * The per-CPU PMU context; cpu_ctx.h has its NMI-safety contract.
 */
#include <linux/ktime.h>
#include <linux/lockdep.h>

#include "cpu_ctx.h"

DEFINE_PER_CPU(struct archpmu_cpu_ctx, archpmu_cpu_ctx);
/* Process-context readers of the contexts' enumeration fields (cpu_ctx.h). */
DEFINE_MUTEX(archpmu_enum_lock);

u64 archpmu_hw_event_update(const struct archpmu_cpu_ctx *ctx, struct archpmu_hw_event *hw)
{
	u64 mask, prev, raw;
	u32 msr;

	/* Off the PMU here (another core type's, or multiplexed out): no counter to read. */
	if (hw->counter == ARCHPMU_NO_COUNTER)
		return local64_read(&hw->total);
	mask = archpmu_counter_width_mask(&ctx->desc, hw->counter);
	msr = archpmu_counter_msr(&ctx->desc, hw->counter, false);
	do {
		prev = local64_read(&hw->prev);
		if (archpmu_rdmsr_local(msr, &raw))
			return local64_read(&hw->total);
	} while (local64_cmpxchg(&hw->prev, prev, raw) != prev);
	local64_add((raw - prev) & mask, &hw->total);
	if (hw->period)
		local64_sub((raw - prev) & mask, &hw->period_left);
	return local64_read(&hw->total);
}

/* The busy-mask bit of a counter (the IA32_PERF_GLOBAL_* bit), or 0. */
static u64 ctx_bit(u32 counter)
{
	int idx = archpmu_ctx_index(counter);

	if (idx < 0)
		return 0;
	return idx < ARCHPMU_NR_GP ? BIT_ULL(idx) :
	       BIT_ULL(ARCHPMU_BUSY_FIXED_SHIFT + idx - ARCHPMU_NR_GP);
}

u64 archpmu_ctx_pmi_counters(const struct archpmu_ctx_change *ch)
{
	u64 bits = 0;
	unsigned int i;

	for (i = 0; i < ch->nr; i++)
		if (ch->hw[i].period)
			bits |= ctx_bit(ch->hw[i].counter);
	return bits & ch->used;
}

/*
 * Before the programming ops; archpmu_ctx_claimed_local() undoes it, or
 * makes the sampling counters the PMI handler's.
 */
void archpmu_ctx_claim_local(struct archpmu_batch *b)
{
	struct archpmu_cpu_ctx *ctx = this_cpu_ptr(&archpmu_cpu_ctx);
	const struct archpmu_ctx_change *ch = b->arg;
	unsigned int i;
	int idx;

	lockdep_assert_irqs_disabled();
	for (i = 0; i < ch->nr; i++) {
		idx = archpmu_ctx_index(ch->hw[i].counter);
		if (idx >= 0)
			WRITE_ONCE(ctx->owner[idx], &ch->hw[i]);
	}
	WRITE_ONCE(ctx->active, ctx->active | ch->used);
}

/* Before the ops that stop and put back the counters. */
void archpmu_ctx_release_local(struct archpmu_batch *b)
{
	struct archpmu_cpu_ctx *ctx = this_cpu_ptr(&archpmu_cpu_ctx);
	const struct archpmu_ctx_change *ch = b->arg;
	unsigned int i;
	int idx;

	lockdep_assert_irqs_disabled();
	if (ctx->sampling & ch->used) {
		/* A PMI of these counters may still be on its way (sample/pmi.c). */
		WRITE_ONCE(ctx->released_ns, ktime_get_mono_fast_ns());
		WRITE_ONCE(ctx->sampling, ctx->sampling & ~ch->used);
	}
	/* Also those a closed gate hid: the next owner starts unthrottled. */
	atomic64_andnot(ch->used, &ctx->throttled);
	WRITE_ONCE(ctx->active, ctx->active & ~ch->used);
	for (i = 0; i < ch->nr; i++) {
		idx = archpmu_ctx_index(ch->hw[i].counter);
		if (idx >= 0 && READ_ONCE(ctx->owner[idx]) == &ch->hw[i])
			WRITE_ONCE(ctx->owner[idx], NULL);
	}
}

void archpmu_ctx_grow_local(struct archpmu_ctx_change *ch, u64 bits)
{
	struct archpmu_cpu_ctx *ctx = this_cpu_ptr(&archpmu_cpu_ctx);

	lockdep_assert_irqs_disabled();
	ch->used |= bits;
	WRITE_ONCE(ctx->active, ctx->active | bits);
}

void archpmu_ctx_update_local(struct archpmu_batch *b)
{
	const struct archpmu_cpu_ctx *ctx = this_cpu_ptr(&archpmu_cpu_ctx);
	const struct archpmu_ctx_change *ch = b->arg;
	unsigned int i;

	lockdep_assert_irqs_disabled();
	for (i = 0; i < ch->nr; i++)
		archpmu_hw_event_update(ctx, &ch->hw[i]);
}

void archpmu_ctx_released_local(struct archpmu_batch *b)
{
	struct archpmu_cpu_ctx *ctx = this_cpu_ptr(&archpmu_cpu_ctx);
	const struct archpmu_ctx_change *ch = b->arg;

	lockdep_assert_irqs_disabled();
	/* The restore wrote back what the claim found: another agent's bits. */
	WRITE_ONCE(ctx->global_ours, ctx->global_ours & ~ch->used);
}

void archpmu_ctx_claimed_local(struct archpmu_batch *b)
{
	struct archpmu_cpu_ctx *ctx = this_cpu_ptr(&archpmu_cpu_ctx);
	u64 sampling = archpmu_ctx_pmi_counters(b->arg);

	if (b->err) {
		archpmu_ctx_release_local(b);
		return;
	}
	if (!sampling)
		return;
	/*
	 * Only once loaded: a PMI handler (another session's PMI) that looked
	 * at a counter still holding its old value would take it for an
	 * overflow. A PMI of these in the last op's wake, before this, is
	 * claimed by the grace of released_ns and handled by the tick. A task
	 * session's join as its gate opens: closed, no PMI handler nor tick
	 * may throttle or restart them.
	 */
	WRITE_ONCE(ctx->released_ns, ktime_get_mono_fast_ns());
	if (!((const struct archpmu_ctx_change *)b->arg)->gated)
		WRITE_ONCE(ctx->sampling, ctx->sampling | sampling);
}

static u64 throttled_now(const struct archpmu_cpu_ctx *ctx)
{
	return atomic64_read(&ctx->throttled) & READ_ONCE(ctx->sampling);
}

void archpmu_ctx_reset_local(struct archpmu_batch *b)
{
	const struct archpmu_cpu_ctx *ctx = this_cpu_ptr(&archpmu_cpu_ctx);
	const struct archpmu_ctx_change *ch = b->arg;
	u64 running = archpmu_counters_pause_local(ch->used);
	bool samples = archpmu_ctx_pmi_counters(ch);
	unsigned int i;
	int ret;

	lockdep_assert_irqs_disabled();
	for (i = 0; i < ch->nr; i++) {
		struct archpmu_hw_event *hw = &ch->hw[i];

		if (!ctx_bit(hw->counter))
			continue;
		if (samples) {
			/*
			 * As perf's PERF_EVENT_IOC_RESET: the count, not the
			 * period, which goes on the same for the tasks whose
			 * periods the gate holds. The estimate keeps its span.
			 * No write: a sampling session's events are the PMI
			 * handler's to fold too (group reads), never behind it.
			 */
			u64 total = archpmu_hw_event_update(ctx, hw);

			local64_sub(total, &hw->total);
			hw->freq_total -= total;
			continue;
		}
		ret = archpmu_wrmsr_local(archpmu_counter_msr(&ctx->desc, hw->counter, true), 0);
		if (ret && !b->err)
			b->err = ret;
		local64_set(&hw->prev, 0);
		local64_set(&hw->total, 0);
	}
	/* The top-down metrics measure from fixed counter 3's zero too (uapi). */
	if ((ch->used & ARCHPMU_GLOBAL_PERF_METRICS) && !samples) {
		ret = archpmu_wrmsr_local(ARCHPMU_MSR_PERF_METRICS, 0);
		if (ret && !b->err)
			b->err = ret;
	}
	archpmu_counters_resume_local(running);
}

u64 archpmu_counters_pause_local(u64 bits)
{
	struct archpmu_cpu_ctx *ctx = this_cpu_ptr(&archpmu_cpu_ctx);
	unsigned long gp = bits & ARCHPMU_GP_BITS;
	u64 running = 0, sel;
	unsigned int i;

	lockdep_assert_irqs_disabled();
	if (ctx->desc.version >= 2) {
		running = bits & READ_ONCE(ctx->global_ours);
		if (running)
			archpmu_global_ctrl_local(0, running);
		return running;
	}
	for_each_set_bit(i, &gp, ARCHPMU_NR_GP)
		if (!archpmu_rdmsr_local(archpmu_gp_sel_msr(i), &sel) &&
		    (sel & ARCHPMU_EVTSEL_EN) &&
		    !archpmu_wrmsr_local(archpmu_gp_sel_msr(i), sel & ~ARCHPMU_EVTSEL_EN))
			running |= BIT_ULL(i);
	return running;
}

void archpmu_counters_resume_local(u64 running)
{
	const struct archpmu_cpu_ctx *ctx = this_cpu_ptr(&archpmu_cpu_ctx);
	unsigned long gp = running;
	unsigned int i;
	u64 sel;

	if (!running)
		return;
	if (ctx->desc.version >= 2) {
		archpmu_global_ctrl_local(running, 0);
		return;
	}
	/* A PMI in the pause may have throttled one: it stays stopped. */
	gp &= ~throttled_now(ctx);
	for_each_set_bit(i, &gp, ARCHPMU_NR_GP)
		if (!archpmu_rdmsr_local(archpmu_gp_sel_msr(i), &sel))
			archpmu_wrmsr_local(archpmu_gp_sel_msr(i), sel | ARCHPMU_EVTSEL_EN);
}

int archpmu_global_ctrl_local(u64 set, u64 clear)
{
	struct archpmu_cpu_ctx *ctx = this_cpu_ptr(&archpmu_cpu_ctx);
	u64 v, held;
	int err;

	lockdep_assert_irqs_disabled();
	/* First: a PMI from here on restores the new bits, never the old. */
	WRITE_ONCE(ctx->global_ours, (ctx->global_ours & ~clear) | set);
	/* v1: no register, the enables are the EVTSELs' own; what runs is kept. */
	if (ctx->desc.version < 2)
		return 0;
	/*
	 * The PMI handler writes GLOBAL_CTRL back as it found it, less what it
	 * throttles: a throttle between our read and write is redone.
	 */
	do {
		held = throttled_now(ctx);
		err = archpmu_rdmsr_local(ARCHPMU_MSR_GLOBAL_CTRL, &v);
		if (!err)
			err = archpmu_wrmsr_local(ARCHPMU_MSR_GLOBAL_CTRL,
						  ((v & ~clear) | set) & ~held);
	} while (!err && throttled_now(ctx) != held);
	return err;
}
