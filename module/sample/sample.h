/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sampling: the PMI handler (pmi.c) and the sampling tick (tick.c), the rings
 * (ring.c) and a session's samplers, one per CPU (sample.c).
 *
 * Lifetime: a session's samplers and rings are allocated before its
 * counters are programmed and freed only after the release cross-calls
 * have cleared every CPU's live view, so the NMI handler, which reaches
 * them only through the live view, never sees them freed. The NMI handler
 * is registered while any sampling session exists.
 */
#ifndef ARCHPMU_SAMPLE_SAMPLE_H
#define ARCHPMU_SAMPLE_SAMPLE_H

#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/time64.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "../own/own.h"
#include "ring.h"

/* One session's sampling on one CPU. */
struct archpmu_sampler {
	struct archpmu_ring ring;
	struct archpmu_hw_event *hw;	/* the claim's events, for group reads */
	unsigned int nr_events;
	bool read_group;		/* ARCHPMU_SAMPLE_READ */
	u32 user_only;			/* events counting in user mode only, by index */
	bool task_scope;		/* a task session's: whoever runs at the tick is not its */
	bool callchain;			/* ARCHPMU_SAMPLE_CALLCHAIN */
	u32 stack_user;			/* ARCHPMU_SAMPLE_USER_STACK: bytes, else 0 */
	/* Throttles, unthrottles and lost samples told so far (notes.c). */
	u64 noted[3];
};

/* What a session's rings pinned, and whose (ring_charge.c). */
struct archpmu_ring_charge {
	struct user_struct *user;	/* NULL: nothing charged */
	unsigned long allowance;	/* pages on the user's ring_mlock_kb allowance */
	unsigned long locked;		/* pages on the user's locked_vm */
};

/* A session's sampling. */
struct archpmu_sample {
	struct archpmu_sampler *smp;	/* one per claim, in claim order */
	unsigned int nr;
	u32 ring_pages;
	struct archpmu_ring_charge charge;
	bool registered;		/* holds a reference on the PMI handler */
	wait_queue_head_t wq;
	const struct archpmu_claims *cl;
	struct delayed_work notes;	/* tells throttles and losses (notes.c) */
	bool notes_on;
};

/*
 * COUNT_OPEN, before the locks: check the sampling fields of @cmd and
 * copy in the per-event specs (@specs has ARCHPMU_MAX_EVENTS entries); a
 * refused spec's index goes to @cmd->bad_event.
 * Returns 0 with *@sampling false for a counting session.
 */
int archpmu_sample_copy_in(struct archpmu_count_open *cmd,
			   struct archpmu_sample_event *specs, bool *sampling);
/*
 * Under the locks, after the plan: check each period against the counter
 * it got on each CPU (-ERANGE, @cmd's bad_event and bad_cpu say where),
 * allocate the rings and set the events' sampling fields.
 */
int archpmu_sample_setup(struct archpmu_sample *sm, struct archpmu_claims *cl,
			 const struct archpmu_sample_event *specs,
			 struct archpmu_count_open *cmd);
/* After the claims are released. */
void archpmu_sample_teardown(struct archpmu_sample *sm);

int archpmu_sample_mmap(struct archpmu_sample *sm, struct vm_area_struct *vma);
__poll_t archpmu_sample_poll(struct archpmu_sample *sm, struct file *file,
			     poll_table *wait);

/*
 * notes.c: tell what the PMI handler counted (throttles, unthrottles, lost
 * samples) through notify/, from a work item, every 100 ms at most, from
 * the session's open to its close. stop() tells what is left.
 */
void archpmu_sample_notes_start(struct archpmu_sample *sm);
void archpmu_sample_notes_stop(struct archpmu_sample *sm);

/*
 * ring_charge.c: charge @pages of rings to the caller's user: an allowance
 * per online CPU, then RLIMIT_MEMLOCK; -ENOMEM (and a line in dmesg naming
 * the limits) over them. Uncharging a charge never taken does nothing.
 */
int archpmu_ring_charge(struct archpmu_ring_charge *ch, unsigned long pages);
void archpmu_ring_uncharge(struct archpmu_ring_charge *ch);

/* pmi.c */
/*
 * A sampling session on @cl's CPUs begins (ends): the handler is there, and
 * the sampling tick runs on those CPUs (a task session's until the first
 * tick that finds none of its tasks there, tick.c), and on no CPU without a
 * sampling session, which idle stays out of NOHZ for nothing. get() with
 * the CPU hotplug lock read-held, put() without it.
 */
int archpmu_pmi_get(const struct archpmu_claims *cl);
void archpmu_pmi_put(const struct archpmu_claims *cl);
int archpmu_pmi_init(void);
void archpmu_pmi_exit(void);
/*
 * record.c: the throttles and the samples a full ring dropped on @cpu, of
 * every session since the module loaded.
 */
void archpmu_sample_cpu_totals(unsigned int cpu, u64 *throttled, u64 *lost);
/* PMIs the handler took as its own so far, and the nanoseconds they took. */
void archpmu_pmi_stats(u64 *handled, u64 *ns);
/*
 * The sampling tick's pass on this CPU (tick.c), interrupts off: frequency
 * estimates, throttles ended, pending LOST records, a lost PMI. Whether
 * anything samples here.
 */
bool archpmu_pmi_tick_local(void);
/* The tick starts on this CPU (tick.c): credit in hand, LVTPC unmasked. */
void archpmu_pmi_begin_local(void);

/* tick.c */
/* @cl's CPUs tick (stop ticking); the CPU hotplug lock read-held. */
void archpmu_tick_get(const struct archpmu_claims *cl);
void archpmu_tick_put(const struct archpmu_claims *cl);
int archpmu_tick_init(void);
void archpmu_tick_exit(void);
/* The sampling ticks that ran on @cpu so far (tests). */
u64 archpmu_sample_ticks_run(unsigned int cpu);
/*
 * A task session's counters joined sampling on this CPU as its gate opened:
 * the sampling tick, which stops where none of their tasks runs, runs again.
 * Interrupts off.
 */
void archpmu_sample_tick_resume(void);
/*
 * callchain.c: @regs' call chain in perf's form (context markers, then the
 * frames: at most sample_max_stack; the user's only with @user), in a
 * per-CPU buffer (*@ips) that stays the caller's until its PMI handler
 * returns; the number of entries.
 */
u32 archpmu_callchain(struct pt_regs *regs, bool user, u64 **ips);
/*
 * The user context of a sample taken at @regs: @regs in user mode, else
 * where the task's user mode left off; NULL in a kernel thread.
 */
struct pt_regs *archpmu_user_regs(struct pt_regs *regs);
int archpmu_callchain_init(void);
void archpmu_callchain_exit(void);
/* The module parameter sample_max_rate: samples per second per CPU. */
u32 archpmu_sample_max_rate(void);
/* The sampling tick's period (tick.c). */
#define ARCHPMU_SAMPLE_TICK_NS	(4 * NSEC_PER_MSEC)
/*
 * One sampling event's state in one task, as it goes from CPU to CPU
 * (task_gate.c); all zero for a task new to the session.
 */
struct archpmu_sample_carry {
	u64 period;		/* its period (a frequency's estimate); 0: none yet */
	s64 left;		/* events to the next sample */
	u64 last_period;	/* the period of the sample being counted */
	/* A frequency's estimate (freq.c): counted toward the next, and over what time. */
	u64 freq_events;
	u64 freq_ns;
	bool freq_stamped;
	bool freq_estimated;
};

/*
 * task_gate.c: a task session's per-task sampling state, for task/; the
 * hooks sampling gives the core (the gate's, and pmi.c's restart).
 */
size_t archpmu_sample_carry_size(unsigned int nr_events);
extern const struct archpmu_sampling_hooks archpmu_sample_hooks;

/* pmi.c: struct archpmu_sampling_hooks' restart. */
void archpmu_sample_restart_local(struct archpmu_batch *b);

/*
 * freq.c: a frequency's period until the tick has estimated it; the tick's
 * estimate (and restart, when much shorter), with the PMI handler kept out;
 * the clock of the time counted toward it; a task's estimate saved and
 * loaded as it switches.
 */
u64 archpmu_freq_first_period(u64 freq, u64 max);
void archpmu_freq_counting(struct archpmu_hw_event *hw, bool on, u64 now);
void archpmu_freq_save(const struct archpmu_hw_event *hw, u64 total,
		       struct archpmu_sample_carry *carry);
void archpmu_freq_load(struct archpmu_hw_event *hw, u64 total,
		       const struct archpmu_sample_carry *carry);
void archpmu_freq_estimate(struct archpmu_cpu_ctx *ctx, struct archpmu_hw_event *hw,
			   unsigned int bit, u64 now);
/*
 * limits.c: a sample within sample_max_rate, a PMI's time within
 * sample_cpu_percent (false: throttle); sampling begins.
 */
bool archpmu_sample_rate_take(struct archpmu_cpu_ctx *ctx, u64 now);
bool archpmu_sample_time_take(struct archpmu_cpu_ctx *ctx, u64 now, u64 took);
void archpmu_sample_credit_reset(struct archpmu_cpu_ctx *ctx, u64 now);

#endif /* ARCHPMU_SAMPLE_SAMPLE_H */
