/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-CPU PMU context: the one place that says who holds each counter
 * of a CPU. Counting, sampling, task switching and multiplexing all act on
 * it (perf's struct cpu_hw_events is the precedent).
 *
 * NMI-safety contract. Three kinds of field, each with one writer:
 *
 *  - desc, ops, enumerated: written by enumeration (pmu/enum.c) on this CPU
 *    as it comes online (enumerated also as it goes offline). desc and ops
 *    only change as the CPU comes online, when they are rewritten with what
 *    the same CPU reports again. Process-context readers copy them under
 *    archpmu_enum_lock; the NMI handler may use them as they are whenever it
 *    finds an owner in owner[]. ops is there for the NMI handler.
 *
 *  - taken, holder[]: the allocation view (own/), written and read only in
 *    process context under archpmu_own_lock. Never read in NMI.
 *
 *  - active, owner[]: the live view. Written only on this CPU, with
 *    interrupts disabled, inside the cross-call that claims or releases the
 *    counters (archpmu_ctx_claim_local(), archpmu_ctx_release_local(), and
 *    archpmu_ctx_grow_local() as a multiplexing claim takes more), each
 *    with WRITE_ONCE. An NMI on this CPU may read them at any time without a
 *    lock (READ_ONCE): a counter's owner is set before its counter is
 *    programmed, and it joins sampling (what the PMI handler looks at) only
 *    after its load (a task session's, only while its gate is open); both
 *    are cleared before it is stopped and put back. A
 *    multiplexing turn (mux/mux.c) also rewrites owner[] in its hook;
 *    multiplexing sessions never sample, so no PMI looks at those. An owner is
 *    cleared on this CPU before its memory is freed, and the freeing path
 *    waits for that cross-call to return: an NMI cannot see a freed owner.
 *    NMIs on other CPUs only read their own CPU's context.
 *
 *  - global_ours: the IA32_PERF_GLOBAL_CTRL bits archpmu's own writes left
 *    set (on v1, which has no such register, the counters its sessions hold
 *    running), written only on this CPU with interrupts disabled, by
 *    archpmu_global_ctrl_local(), before the register; the PMI handler reads
 *    it to restore what a freeze on PMI cleared (v2-3), and an unthrottle
 *    to start only what should run.
 *
 *  - sampling, throttled, rate_credit*, time_credit*, released_ns:
 *    sampling's per-CPU state,
 *    written only on this CPU: by the same hooks (sampling), by a task
 *    session's gate with interrupts disabled (sample/task_gate.c: its
 *    counters leave sampling, stopped, as it closes and rejoin it, loaded,
 *    before it opens), by the PMI handler in NMI and by the sampling tick in
 *    hard interrupt context. The tick can be interrupted by the NMI, never the reverse;
 *    each field is a single-word store, except throttled, which all of them
 *    change and so is changed only with atomic bit operations.
 *
 *  - An event's prev and total (struct archpmu_hw_event) change on the
 *    event's CPU only, in the cross-call hooks, the tick and the NMI, with
 *    archpmu_hw_event_update()'s cmpxchg protocol (perf's
 *    x86_perf_event_update), so an NMI between a hook's read and its update
 *    is never counted twice; a reset takes what it folded away from total
 *    in one local64_sub. Counting-only sessions fold them from process
 *    context instead, which no NMI touches.
 */
#ifndef ARCHPMU_PMU_CPU_CTX_H
#define ARCHPMU_PMU_CPU_CTX_H

#include <asm/local64.h>
#include <linux/math64.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/types.h>

#include "arch_pmu.h"
#include "batch.h"

/* A counter's index in a context: GP i is i, fixed j is ARCHPMU_NR_GP + j. */
#define ARCHPMU_CTX_COUNTERS	(ARCHPMU_NR_GP + ARCHPMU_NR_FIXED)

struct archpmu_sampler;

/* One event on one counter of one CPU (perf's hw_perf_event). */
struct archpmu_hw_event {
	u32 counter;		/* ARCHPMU_COUNTER_* encoding */
	local64_t prev;		/* raw counter value at the last fold */
	local64_t total;	/* 64-bit count */
	/*
	 * Sampling (sample/), set before the counter is programmed: period 0
	 * only counts. For a frequency event the tick rewrites period.
	 */
	u64 period;		/* events per sample */
	u64 last_period;	/* the period of the sample being counted */
	local64_t period_left;	/* events until the next sample: folds take from it */
	u64 period_max;		/* what the counter takes */
	u64 freq;		/* Hz, or 0 */
	/* A frequency event's estimate (sample/freq.c): what it counted since the last. */
	u64 freq_total;		/* total at the last estimate */
	u64 freq_since;		/* since when it counts toward the next; 0: stopped */
	u64 freq_ns;		/* time counted toward it before freq_since */
	bool freq_stamped;	/* freq_total is set: the next tick estimates */
	bool freq_estimated;	/* once: a first estimate is taken whole */
	u64 id;			/* in the event's records */
	struct archpmu_sampler *smp;	/* the session's sampler on this CPU */
};

/*
 * Add what a counting (not sampling) event's counter counted since the last
 * fold, read as @raw, to its total; in process context, under the lock of
 * whoever programmed it.
 */
static inline void archpmu_hw_fold(struct archpmu_hw_event *hw, u64 raw, u64 width_mask)
{
	local64_add((raw - local64_read(&hw->prev)) & width_mask, &hw->total);
	local64_set(&hw->prev, raw);
}

/*
 * A top-down metric event (uapi): add field @field of PERF_METRICS, read as
 * @metrics, of the @slots fixed counter 3 counted since both were last
 * reset, as perf's icl_get_metrics_event_value().
 */
static inline void archpmu_hw_fold_metric(struct archpmu_hw_event *hw, u64 slots, u64 metrics,
					  u32 field)
{
	local64_add(mul_u64_u32_div(slots, (metrics >> (8 * field)) & 0xff, 0xff), &hw->total);
}

/*
 * The value that makes a counter overflow after @left events: at least 2, as
 * perf's x86_perf_event_set_period has it (some CPUs misbehave with 1).
 */
static inline u64 archpmu_counter_start(u64 left, u64 width_mask)
{
	return -(left < 2 ? 2 : left) & width_mask;
}

/*
 * What a sampling counter is loaded with for @left events to go: at most half
 * its range, as perf's x86_pmu.max_period, so that an overflow always shows in
 * the counter's top bit, even when another agent's handler acked its
 * GLOBAL_STATUS bit first; a longer period takes several overflows, only the
 * last of which samples.
 */
static inline u64 archpmu_sampling_start(u64 left, u64 width_mask)
{
	return archpmu_counter_start(min(left, width_mask >> 1), width_mask);
}

/*
 * A sampling event has @left events to go: the value its counter is
 * programmed with.
 */
static inline u64 archpmu_hw_event_load(struct archpmu_hw_event *hw, s64 left, u64 width_mask)
{
	local64_set(&hw->period_left, left);
	return archpmu_sampling_start(left, width_mask);
}

/*
 * A sampling event starts a period: the value its counter is programmed with
 * (0 to count from zero).
 */
static inline u64 archpmu_hw_event_start(struct archpmu_hw_event *hw, u64 width_mask)
{
	if (!hw->period)
		return 0;
	hw->freq_stamped = false;	/* stopped meanwhile: the estimate starts again */
	return archpmu_hw_event_load(hw, hw->period, width_mask);
}

/* Saved PMU state: what a claim found, to put back on release. */
struct archpmu_pmu_saved {
	u64 evtsel[ARCHPMU_NR_GP];
	u64 pmc[ARCHPMU_NR_GP];
	u64 fixed[ARCHPMU_NR_FIXED];
	u64 fixed_ctrl;
	u64 global_ctrl;
	u64 metrics;		/* IA32_PERF_METRICS, where a claim uses it */
};

/*
 * What differs between PMU versions, as batch steps over a set of counters
 * (busy-mask bits): v1 has no global MSRs, v2+ have them.
 */
struct archpmu_pmu_ops {
	const char *name;
	/* Read the global state a claim must put back. */
	void (*save_global)(struct archpmu_batch *b, struct archpmu_pmu_saved *sv);
	/* Clear (set) @used in IA32_PERF_GLOBAL_CTRL. */
	void (*disable)(struct archpmu_batch *b, u64 used);
	void (*enable)(struct archpmu_batch *b, u64 used);
	/* Clear the overflow bits of @used. */
	void (*ack)(struct archpmu_batch *b, u64 used);
	/* Put back what save_global() read, for the counters in @used. */
	void (*restore_global)(struct archpmu_batch *b, const struct archpmu_pmu_saved *sv,
			       u64 used);
};

const struct archpmu_pmu_ops *archpmu_pmu_ops_for(const struct archpmu_pmu_desc *d);
/* The IA32_FIXED_CTR_CTRL nibbles of the fixed counters in @used (busy-mask bits). */
static inline u64 archpmu_fixed_ctrl_mask(u64 used)
{
	u64 mask = 0;
	u32 j;

	for (j = 0; j < ARCHPMU_NR_FIXED; j++)
		if (used & BIT_ULL(ARCHPMU_BUSY_FIXED_SHIFT + j))
			mask |= 0xfULL << ARCHPMU_FIXED_SHIFT(j);
	return mask;
}

struct archpmu_holder;

struct archpmu_cpu_ctx {
	/* Enumeration: see the contract above. */
	struct archpmu_pmu_desc desc;
	const struct archpmu_pmu_ops *ops;
	bool enumerated;
	/* Allocation, under archpmu_own_lock. */
	u64 taken;		/* busy-mask bits held by any session */
	const struct archpmu_holder *holder[ARCHPMU_CTX_COUNTERS];
	/* Live, on this CPU with interrupts disabled; NMI reads. */
	u64 active;		/* busy-mask bits of claimed, programmed counters */
	struct archpmu_hw_event *owner[ARCHPMU_CTX_COUNTERS];
	/* Sampling, on this CPU: see the contract above. */
	u64 sampling;		/* of active, the counters that raise PMIs */
	atomic64_t throttled;	/* of sampling, the ones stopped until the next tick */
	u64 rate_credit;	/* samples sample_max_rate allows now: sample/limits.c */
	u64 rate_credit_ns;	/* when it was last topped up */
	u64 time_credit;	/* handler time sample_cpu_percent allows now */
	u64 time_credit_ns;	/* when it was last topped up */
	u64 released_ns;	/* when sampling counters were last claimed or released */
	u64 global_ours;	/* GLOBAL_CTRL bits our writes left set */
};

DECLARE_PER_CPU(struct archpmu_cpu_ctx, archpmu_cpu_ctx);

/* Guards desc, ops and enumerated against process-context readers. */
extern struct mutex archpmu_enum_lock;

/* The context index of a counter (ARCHPMU_COUNTER_* encoding), or -1. */
static inline int archpmu_ctx_index(u32 counter)
{
	u32 idx = counter & 0xff;

	if (counter & ~(ARCHPMU_COUNTER_FIXED | 0xff))
		return -1;
	if (counter & ARCHPMU_COUNTER_FIXED)
		return idx < ARCHPMU_NR_FIXED ? ARCHPMU_NR_GP + idx : -1;
	return idx < ARCHPMU_NR_GP ? idx : -1;
}

/*
 * A change of the live view, applied by batch hooks on the CPU: the events
 * hw[0..nr) on the counters @used become (or stop being) the owners.
 */
struct archpmu_ctx_change {
	u64 used;
	struct archpmu_hw_event *hw;
	unsigned int nr;
	/*
	 * A task session's: programmed behind its closed gate, whose opening
	 * shows its sampling counters to the PMI handler (task/gate.c's hooks).
	 */
	bool gated;
};

/*
 * The change's counters that raise PMIs, as busy-mask bits: those of its
 * events with a sampling period.
 */
u64 archpmu_ctx_pmi_counters(const struct archpmu_ctx_change *ch);

/*
 * Batch hooks (b->arg is a struct archpmu_ctx_change). The claim comes
 * before the programming ops, so that a PMI the very first overflow raises
 * finds its owner.
 */
void archpmu_ctx_claim_local(struct archpmu_batch *b);
void archpmu_ctx_release_local(struct archpmu_batch *b);
/*
 * On this CPU, interrupts disabled: @bits join a claim already programmed
 * (ch->used and the live view), before the ops that program them.
 */
void archpmu_ctx_grow_local(struct archpmu_ctx_change *ch, u64 bits);
/* After a release's ops: GLOBAL_CTRL's bits of the change are no longer ours. */
void archpmu_ctx_released_local(struct archpmu_batch *b);
/* Fold every event of the change (sampling sessions: see the contract). */
void archpmu_ctx_update_local(struct archpmu_batch *b);
/*
 * After a claim's programming ops: if they failed, the claim is undone; else
 * its sampling counters become the PMI handler's.
 */
void archpmu_ctx_claimed_local(struct archpmu_batch *b);
/*
 * Zero every placed event's count, each counter stopped meanwhile: a counting
 * session's are written 0, a sampling session's keep their values (and the
 * periods their progress) where any of its counters samples on the CPU; where
 * none does (its sampling events are for another core type), they are written
 * 0 as counting ones.
 */
void archpmu_ctx_reset_local(struct archpmu_batch *b);

/*
 * On this CPU, interrupts disabled (NMI too): stop those of @bits (busy-mask
 * bits) that count and return them; resume starts those again. The SDM has a
 * counter stopped before IA32_PMCx is written (18.2.1.1). v2+ through
 * GLOBAL_CTRL, v1 through each EN; either way a counter the PMI handler
 * throttles meanwhile stays stopped.
 */
u64 archpmu_counters_pause_local(u64 bits);
void archpmu_counters_resume_local(u64 running);

/*
 * On this CPU, interrupts disabled: set @set and clear @clear (busy-mask
 * bits, which are GLOBAL_CTRL's) in IA32_PERF_GLOBAL_CTRL; every other bit is
 * written back as read. A sampling counter the PMI handler throttles stays
 * stopped, even when the throttle comes between the read and the write. On
 * v1, which has no such register, only global_ours changes.
 */
int archpmu_global_ctrl_local(u64 set, u64 clear);

/*
 * A counter's MSR: for a write, IA32_A_PMCx where full-width writes exist;
 * GP 8 and up at their v6 address (archpmu_gp_ctr_msr()).
 */
static inline u32 archpmu_counter_msr(const struct archpmu_pmu_desc *d, u32 counter,
				      bool write)
{
	if (counter & ARCHPMU_COUNTER_METRICS)
		return ARCHPMU_MSR_PERF_METRICS;
	if (counter & ARCHPMU_COUNTER_FIXED)
		return ARCHPMU_MSR_FIXED_CTR0 + (counter & 0xff);
	return archpmu_gp_ctr_msr(counter, write && (d->flags & ARCHPMU_PMU_FULL_WIDTH_WRITE));
}

static inline u64 archpmu_counter_width_mask(const struct archpmu_pmu_desc *d,
					     u32 counter)
{
	if (counter & ARCHPMU_COUNTER_METRICS)
		return ~0ULL;
	return archpmu_width_mask(counter & ARCHPMU_COUNTER_FIXED ? d->fixed_width :
				  d->gp_width);
}

/*
 * On the event's CPU, in NMI or with interrupts disabled: fold the counter
 * into the event's total and return the total (only the total for an event
 * with no counter there).
 */
u64 archpmu_hw_event_update(const struct archpmu_cpu_ctx *ctx, struct archpmu_hw_event *hw);

/*
 * On the event's CPU with interrupts disabled, its counter stopped: a
 * sampling event's counter loaded to sample after @left events.
 */
static inline void archpmu_hw_event_reload(const struct archpmu_cpu_ctx *ctx,
					   struct archpmu_hw_event *hw, s64 left)
{
	u64 start = archpmu_hw_event_load(hw, left,
					  archpmu_counter_width_mask(&ctx->desc, hw->counter));

	archpmu_wrmsr_local(archpmu_counter_msr(&ctx->desc, hw->counter, true), start);
	local64_set(&hw->prev, start);
}

#endif /* ARCHPMU_PMU_CPU_CTX_H */
