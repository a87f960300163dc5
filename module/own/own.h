/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Counter ownership: which counters of which CPU a session gets (plan.c),
 * perf's reservation of them (perf_share.c), and taking them from the PMU
 * and putting them back (claim.c).
 */
#ifndef ARCHPMU_OWN_OWN_H
#define ARCHPMU_OWN_OWN_H

#include <linux/cpumask.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/types.h>
#include <linux/uidgid.h>

#include "../pmu/pmu.h"
#include "alloc.h"

/*
 * Guards every context's allocation view (taken, holder[]) and every
 * claim's state. Taken after cpus_read_lock(); nothing that can fault on
 * user memory runs under it.
 */
extern struct mutex archpmu_own_lock;

/* Who holds counters: named in refusals (dmesg, netlink and busy_pid). */
struct archpmu_holder {
	u64 id;			/* the session's, unique until unload */
	pid_t pid;		/* in the initial namespace, for dmesg and events */
	struct pid *tgid;	/* for busy_pid and dumps, in the asker's namespace */
	kuid_t uid;
	char comm[TASK_COMM_LEN];
};

/* Why counters were refused with -EBUSY: for the notification (notify/). */
enum archpmu_refusal_kind {
	ARCHPMU_REFUSED_NONE,
	ARCHPMU_REFUSED_SESSION,	/* another session holds them */
	ARCHPMU_REFUSED_PERF_PINNED,	/* perf holds the pinned GP counter */
	ARCHPMU_REFUSED_PERF,		/* perf holds the GP counters the event could use */
	ARCHPMU_REFUSED_PERF_ALL,	/* perf holds every GP counter */
	ARCHPMU_REFUSED_AGENT_EVTSEL,	/* EN in a PERFEVTSEL */
	ARCHPMU_REFUSED_AGENT_FIXED,	/* a ring bit in a nibble of FIXED_CTR_CTRL */
};

struct archpmu_refusal {
	enum archpmu_refusal_kind kind;
	u32 cpu;
	u32 event;		/* or ~0 */
	u32 counter;		/* PERF_PINNED, AGENT_*: ARCHPMU_COUNTER_* */
	u64 counters;		/* PERF: busy-mask bits perf holds */
	u32 msr;		/* AGENT_*: the MSR that showed it, and its value */
	u64 msr_value;
	/* SESSION: a copy, so the refusal outlives archpmu_own_lock. */
	u64 holder_id;
	pid_t holder_pid;
	char holder_comm[TASK_COMM_LEN];
};

/* One session's hold on one CPU. */
struct archpmu_claim {
	unsigned int cpu;
	bool programmed;	/* our counters are on the CPU (false while offline) */
	struct archpmu_pmu_desc desc;
	const struct archpmu_pmu_ops *ops;
	u64 used;		/* our counters, busy-mask bits */
	u64 agent_busy;		/* of those, the ones another agent was found using */
	struct archpmu_ctx_change change;	/* for the context's hooks */
	struct archpmu_hw_event hw[ARCHPMU_MAX_EVENTS];
	u32 programs;		/* times claim.c programmed it: features note a new programming */
	struct archpmu_pmu_saved saved;
	struct archpmu_claims *claims;	/* the claims this one is part of */
	/*
	 * From the plan (plan.c): the events (bit e) this CPU lacks (hybrid:
	 * never on it), and whether the session's placer placed the events here
	 * (@partial: not all of them are on at once; a read asks the placer
	 * what to report of each). An event off the PMU has hw[].counter
	 * ARCHPMU_NO_COUNTER; a placer changes hw[].counter on this CPU with
	 * interrupts disabled (a turn's hook), under archpmu_own_lock.
	 */
	u64 absent;
	bool partial;
	/* This claim's batch: operations on all CPUs run in one round. */
	struct archpmu_batch batch;
};

/* Everything one session holds. */
struct archpmu_claims {
	const struct archpmu_holder *holder;
	const struct archpmu_event *ev;
	unsigned int nr_events;
	struct archpmu_claim *cpus;
	unsigned int nr_cpus;
	u64 gp_reserved;	/* GP counters whose perf reservation we hold */
	bool owned;		/* taken[] and holder[] name us */
	bool suspended;		/* from suspend until its counters are reprogrammed */
	struct archpmu_refusal refusal;	/* after an -EBUSY from plan or save */
	/*
	 * Whose tasks the counters follow (task/ sets it before the claims are
	 * programmed), or NULL: they count on their CPUs.
	 */
	const struct archpmu_scope *scope;
	void *scope_data;
	/* What samples (sample/), or NULL: see archpmu_claims_sampling(). */
	const struct archpmu_sampling_hooks *sampling_hooks;
	/* The claims' running clock (count/ keeps it). */
	const struct archpmu_clock *clock;
	void *clock_data;
	/* What places the events that do not all fit at once (mux/), or NULL. */
	const struct archpmu_placer *placer;
	void *placer_data;
	/* Preallocated, so that operations allocate nothing: the CPUs of a round. */
	cpumask_var_t mask;
	/* The claims' CPUs: where the round finds each CPU's batch. */
	cpumask_var_t all;
	struct archpmu_round round;
};

/*
 * The time each claim's counters have been counting for the session: for a
 * CPU session while it is started and the claim programmed (not while its
 * CPU is offline), for a task session while its tasks ran on the claim's
 * CPU. Callable on the claim's CPU with interrupts disabled, under
 * archpmu_own_lock.
 */
struct archpmu_clock {
	u64 (*running_ns)(const struct archpmu_claims *cl, const struct archpmu_claim *c);
};

/*
 * A feature that places a session's events where they do not all fit at
 * once, and changes over time which of them are on the PMU (mux/). Its
 * hooks run under archpmu_own_lock.
 */
struct archpmu_placer {
	/*
	 * Once each claim's absent events are known, before any placement: 0,
	 * or the -errno that refuses the session, with @out's bad_* set.
	 */
	int (*check)(struct archpmu_claims *cl, struct archpmu_count_open *out);
	/* As archpmu_allocate() for @c around @busy, with c->used set. */
	int (*place)(struct archpmu_claims *cl, struct archpmu_claim *c, u64 busy, u32 *counters,
		     unsigned int *bad);
	/*
	 * What a read reports of event @e of a claim it placed (c->partial):
	 * its ARCHPMU_VALUE_* flags (multiplexed, crowded out) and, in
	 * *@on_pmu, its time on the PMU by the claim's running clock, now
	 * @running.
	 */
	u32 (*report)(const struct archpmu_claims *cl, const struct archpmu_claim *c,
		      unsigned int e, u64 running, u64 *on_pmu);
	/* COUNT_RESET: every event's time on @c's PMU starts from zero. */
	void (*reset)(struct archpmu_claims *cl, struct archpmu_claim *c);
	/* The session starts or stops counting. */
	void (*started)(struct archpmu_claims *cl);
	void (*stopped)(struct archpmu_claims *cl);
};

/*
 * A session whose counters follow its tasks, not its CPUs (task/): each
 * claim's counters are programmed on every CPU of the session and started
 * only while one of its tasks runs there, behind a gate. The core and the other
 * features reach the gate through these. The *_local ones are batch hooks
 * on c->batch, on the claim's CPU with interrupts disabled.
 */
struct archpmu_scope {
	/* Open the gate if the session is started and one of its tasks runs here, else close it. */
	void (*sync_local)(struct archpmu_batch *b);
	/* Close it, whatever the session's state. */
	void (*shut_local)(struct archpmu_batch *b);
	/* Before a read: from here the counters change only while the gate is open (ran()). */
	void (*fold_local)(struct archpmu_batch *b);
	/* The same as the session stops: the gate is shut first. */
	void (*close_local)(struct archpmu_batch *b);
	/* A restore's before hook: the gate's clock stops with the rest. */
	void (*release_local)(struct archpmu_batch *b);
	/*
	 * Under archpmu_own_lock. start(): the session starts counting (its
	 * tasks' counters start where they run; with enable-on-exec, from the
	 * first exec of one of them); @here: the caller is the session's only
	 * task, so only the claim of the CPU it runs on is synced, on that CPU,
	 * with no cross-call. stopping(): from here no gate opens; the caller
	 * closes the open ones with close_local(), in the batches that fold the
	 * counters. sync(): every programmed claim as sync_local(). off(): @c's
	 * gate shut (its CPU goes down or suspends).
	 */
	int (*start)(struct archpmu_claims *cl, bool here);
	void (*stopping)(struct archpmu_claims *cl);
	int (*sync)(struct archpmu_claims *cl);
	int (*off)(struct archpmu_claims *cl, struct archpmu_claim *c);
	/*
	 * Zero the time the tasks ran on @c's CPU: on that CPU with interrupts
	 * disabled, or while @c is not programmed.
	 */
	void (*time_zero)(const struct archpmu_claims *cl, struct archpmu_claim *c);
	/* Any context: is the gate open; has it opened since fold_local()? */
	bool (*open)(const struct archpmu_claims *cl, const struct archpmu_claim *c);
	bool (*ran)(const struct archpmu_claims *cl, const struct archpmu_claim *c);
	/* The time the session's tasks ran on @c's CPU, up to @now (mono fast ns). */
	u64 (*time_ns)(const struct archpmu_claims *cl, const struct archpmu_claim *c, u64 now);
	/* Were tasks the session should count left out (children it could not follow)? */
	bool (*incomplete)(const struct archpmu_claims *cl);
};

/*
 * What a sampling session (sample/) adds to the core's steps, each on the
 * claim's CPU with interrupts disabled. A task session's gate: its sampling
 * counters hidden from the PMI handler while no task of the session runs,
 * and each task's periods; gate_close() after the counters stopped,
 * gate_open() before they start. @carry is the state of the session's task
 * that runs there (switches in or out; task/ keeps it), zeroed for a task new
 * to the session, or NULL where none does.
 */
struct archpmu_sampling_hooks {
	void (*gate_close)(const struct archpmu_claims *cl, struct archpmu_claim *c, void *carry,
			   u64 now);
	void (*gate_open)(const struct archpmu_claims *cl, struct archpmu_claim *c,
			  const void *carry, u64 now);
	/*
	 * The batch hook after COUNT_START's enables, COUNT_STOP's disables
	 * (or a gate's closing) and a CPU's going down (b->arg: the claim's
	 * change): every counter folded, none left throttled (each unthrottle
	 * recorded; started again if the session starts), and the CPU's
	 * frequency estimates started again.
	 */
	void (*restart)(struct archpmu_batch *b);
};

/* Is event @e on @c's PMU (not multiplexed off it)? */
static inline bool archpmu_claim_placed(const struct archpmu_claim *c, unsigned int e)
{
	return c->hw[e].counter != ARCHPMU_NO_COUNTER;
}

/*
 * Is event @e on @c's PMU with a control register of its own (not a top-down
 * metric event, which fixed counter 3's nibble and GLOBAL_CTRL bit 48 run)?
 */
static inline bool archpmu_claim_controlled(const struct archpmu_claim *c, unsigned int e)
{
	return archpmu_claim_placed(c, e) && !archpmu_counter_is_metric(c->hw[e].counter);
}

/* Does the session sample (its counters raise PMIs, sample/)? */
static inline bool archpmu_claims_sampling(const struct archpmu_claims *cl)
{
	return cl->sampling_hooks;
}

/*
 * metrics.c: a fold of @c's counters in its batch. archpmu_metrics_pause()
 * before the counters' reads, archpmu_metrics_reset() after them, when the
 * claim has top-down metric events placed (else they add nothing); then
 * archpmu_claim_fold() adds what each event of @counters (its counter when
 * read, or ARCHPMU_NO_COUNTER: not read) counted, read as @raw, to its
 * total; @reset: the batch reset the metrics. Where metric events are, a
 * fixed counter 3 found below its last value was reset by another agent
 * and counts from 0 (perf's PMI handler does, on PERF_METRICS' overflow).
 */
struct archpmu_msr_op *archpmu_metrics_pause(struct archpmu_claims *cl, struct archpmu_claim *c);
void archpmu_metrics_reset(struct archpmu_claim *c, struct archpmu_msr_op *pause);
void archpmu_claim_fold(struct archpmu_claims *cl, struct archpmu_claim *c, const u64 *raw,
			const u32 *counters, bool reset);
/* The batch that reset the metrics failed: what it read is lost, not counted twice. */
void archpmu_metrics_lost(struct archpmu_claims *cl, struct archpmu_claim *c);

/* plan.c, under archpmu_own_lock and cpus_read_lock() */
int archpmu_own_plan(struct archpmu_claims *cl, struct archpmu_count_open *out);
void archpmu_own_commit(struct archpmu_claims *cl);
void archpmu_own_forget(struct archpmu_claims *cl);
/*
 * More counters for @c, already programmed (a multiplexing session's pool
 * growing into counters others let go). archpmu_own_take_more(): of @bits,
 * those no session holds, held by @cl from now on. archpmu_own_reserve_more(),
 * once they are to be used: of those, the ones perf's reservation lets @cl
 * have (the others given back: those perf holds, and GP 8 and up while it
 * holds any legacy counter); *@reserved is what it newly reserved. Both
 * return the counters @cl now holds. archpmu_own_give_back() lets go of
 * those @c does not use after all, and archpmu_own_unreserve() of what
 * reserve_more newly reserved for them.
 */
u64 archpmu_own_take_more(struct archpmu_claims *cl, struct archpmu_claim *c, u64 bits);
u64 archpmu_own_reserve_more(struct archpmu_claims *cl, struct archpmu_claim *c, u64 bits,
			     u64 *reserved);
void archpmu_own_give_back(struct archpmu_claims *cl, struct archpmu_claim *c, u64 bits);
void archpmu_own_unreserve(struct archpmu_claims *cl, u64 reserved);

/*
 * claim.c, under archpmu_own_lock. The claims_* functions act on every
 * claim in one round of cross-calls, the claim_* ones on one CPU; each
 * returns the first error in CPU order, *@bad its claim where asked.
 */
/* Once cl->cpus is set; archpmu_claims_free() undoes it, even a failed one. */
int archpmu_claims_init(struct archpmu_claims *cl);
/* The claim on @cpu, or NULL (any context: cl->cpus does not change). */
struct archpmu_claim *archpmu_claims_on_cpu(struct archpmu_claims *cl, unsigned int cpu);
void archpmu_claims_free(struct archpmu_claims *cl);
/*
 * Check and program every claim: one round reads what every CPU holds,
 * before anything is programmed, and refuses counters another agent uses;
 * one round programs them (counting if @start). A failure leaves every PMU
 * as found; @out's fields say which CPU and event, and cl->refusal why.
 */
int archpmu_claims_take(struct archpmu_claims *cl, bool start, struct archpmu_count_open *out);
void archpmu_claims_restore(struct archpmu_claims *cl);
int archpmu_claim_save(struct archpmu_claims *cl, struct archpmu_claim *c);
/*
 * A claim growing (archpmu_own_take_more()): its batch reads what the PMU
 * holds in @bits into @sv; archpmu_found_in_use() says which of @bits
 * another agent counts with; archpmu_claim_keep_found() keeps the others'
 * as the claim found them, to be put back; archpmu_claim_grow_local() adds
 * them to the claim on its CPU, in the hook before the ops that program them.
 */
void archpmu_claim_build_read(struct archpmu_claim *c, u64 bits, struct archpmu_pmu_saved *sv);
u64 archpmu_found_in_use(u64 bits, const struct archpmu_pmu_saved *sv);
void archpmu_claim_keep_found(struct archpmu_claim *c, u64 bits,
			      const struct archpmu_pmu_saved *sv);
void archpmu_claim_grow_local(struct archpmu_claim *c, u64 bits);
int archpmu_claim_program(struct archpmu_claims *cl, struct archpmu_claim *c, bool start);
int archpmu_claim_restore(struct archpmu_claims *cl, struct archpmu_claim *c);
/*
 * For operations of other layers: empty the round, then add each claim's
 * batch (after filling it) and run the round.
 */
void archpmu_claims_round_begin(struct archpmu_claims *cl);
struct archpmu_batch *archpmu_claims_round_add(struct archpmu_claims *cl,
					       struct archpmu_claim *c);
int archpmu_claims_round_run(struct archpmu_claims *cl);
/* Add the ops that start or stop @c's counters to its batch. */
void archpmu_claim_add_enable(struct archpmu_claims *cl, struct archpmu_claim *c,
			      bool enable);

static inline u32 archpmu_claim_counter_msr(const struct archpmu_claim *c, u32 counter,
					    bool write)
{
	return archpmu_counter_msr(&c->desc, counter, write);
}

static inline u64 archpmu_claim_width_mask(const struct archpmu_claim *c, u32 counter)
{
	return archpmu_counter_width_mask(&c->desc, counter);
}

/*
 * What event @e's control register holds when the claim is programmed,
 * started or not (@enable), and the bits of it that are ours: the whole
 * PERFEVTSELx, or the event's nibble of IA32_FIXED_CTR_CTRL.
 */
u64 archpmu_claim_ctl_expected(const struct archpmu_claims *cl, const struct archpmu_claim *c,
			       unsigned int e, bool enable, u64 *mask);
u32 archpmu_claim_ctl_msr(const struct archpmu_claim *c, unsigned int e);
/*
 * Event @e's control bits were it on @counter: its PERFEVTSELx image, or
 * its nibble of IA32_FIXED_CTR_CTRL in place (0 unless @enable).
 */
u64 archpmu_claim_event_ctl(const struct archpmu_claims *cl, const struct archpmu_claim *c,
			    unsigned int e, u32 counter, bool enable);

/* perf_share.c */
u64 archpmu_reserve_gp(u64 gp, u64 *reserved);
void archpmu_release_gp(u64 gp);
/* GP counters (busy-mask bits) reserved by perf, not by archpmu. */
u64 archpmu_perf_held_gp(void);

/*
 * What perf holding the legacy GP counters @held means: GP 8 and up too,
 * which its GLOBAL_CTRL rewrites stop and no reservation covers.
 */
static inline u64 archpmu_perf_holds(u64 held)
{
	return held ? held | (ARCHPMU_GP_BITS & ~ARCHPMU_LEGACY_GP_BITS) : 0;
}

#endif /* ARCHPMU_OWN_OWN_H */
