// SPDX-License-Identifier: GPL-2.0
/*
 * Taking counters from the PMU and putting them back: each step is a batch
 * per CPU, and all CPUs run theirs in one round of cross-calls (one CPU
 * alone for hotplug). A claim first reads what the PMU holds in the
 * counters it will use (and refuses counters another agent is using), then
 * programs them from zero (sampling events from -period); the context's
 * live view names the claim from just before the programming ops, so that
 * the PMI of a first overflow finds its owner, and forgets it again if they
 * fail (archpmu_ctx_claim_local). The release clears the live view first,
 * then puts back what the claim read.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/lockdep.h>
#include <linux/printk.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "own.h"

#define RING_BITS	(ARCHPMU_EVTSEL_USR | ARCHPMU_EVTSEL_OS)

static u64 used_gp(const struct archpmu_claim *c)
{
	return c->used & ARCHPMU_GP_BITS;
}

static u64 used_fixed(const struct archpmu_claim *c)
{
	return c->used >> ARCHPMU_BUSY_FIXED_SHIFT;
}

static bool is_fixed(u32 counter)
{
	return counter & ARCHPMU_COUNTER_FIXED;
}

/* The first event whose counter on @c is one of @bits, or ~0. */
static unsigned int event_on(const struct archpmu_claims *cl, const struct archpmu_claim *c,
			     u64 bits)
{
	unsigned int e;

	for (e = 0; e < cl->nr_events; e++)
		if (archpmu_counter_bit(c->hw[e].counter) & bits)
			return e;
	return ~0U;
}

/* USR/OS of an event; neither means both. */
static u64 ring_bits(u64 config)
{
	return config & RING_BITS ? config & RING_BITS : RING_BITS;
}

/* A sampling event's counter raises a PMI when it overflows. */
static u64 evtsel_image(u64 config, const struct archpmu_hw_event *hw, bool enable)
{
	u64 v = (config & ~RING_BITS) | ring_bits(config);

	if (hw->period)
		v |= ARCHPMU_EVTSEL_INT;
	return enable ? v | ARCHPMU_EVTSEL_EN : v;
}

static u64 fixed_nibble(u64 config, const struct archpmu_hw_event *hw)
{
	u64 r = ring_bits(config);

	return (r & ARCHPMU_EVTSEL_OS ? ARCHPMU_FIXED_OS : 0) |
	       (r & ARCHPMU_EVTSEL_USR ? ARCHPMU_FIXED_USR : 0) |
	       (hw->period ? ARCHPMU_FIXED_PMI : 0);
}

u64 archpmu_claim_event_ctl(const struct archpmu_claims *cl, const struct archpmu_claim *c,
			    unsigned int e, u32 counter, bool enable)
{
	if (!is_fixed(counter))
		return evtsel_image(cl->ev[e].config, &c->hw[e], enable);
	if (!enable || (counter & 0xff) >= ARCHPMU_NR_FIXED)
		return 0;
	return fixed_nibble(cl->ev[e].config, &c->hw[e]) << ARCHPMU_FIXED_SHIFT(counter & 0xff);
}

static u64 fixed_ctrl_value(const struct archpmu_claims *cl, const struct archpmu_claim *c)
{
	u64 v = 0;
	unsigned int i;

	for (i = 0; i < cl->nr_events; i++)
		if (archpmu_claim_placed(c, i) && is_fixed(c->hw[i].counter))
			v |= archpmu_claim_event_ctl(cl, c, i, c->hw[i].counter, true);
	return v;
}

/* Set (or clear) our nibbles of IA32_FIXED_CTR_CTRL in @c's batch. */
static void add_fixed_enable(struct archpmu_claims *cl, struct archpmu_claim *c, bool enable)
{
	if (used_fixed(c))
		archpmu_batch_modify(&c->batch, ARCHPMU_MSR_FIXED_CTR_CTRL,
				     enable ? fixed_ctrl_value(cl, c) : 0,
				     archpmu_fixed_ctrl_mask(c->used));
}

/*
 * The fixed counters of @bits (busy-mask bits) that IA32_FIXED_CTR_CTRL
 * enables: a ring bit counts, the PMI bit alone does not.
 */
static u64 fixed_in_use(u64 bits, u64 fixed_ctrl)
{
	u64 live = ARCHPMU_FIXED_OS | ARCHPMU_FIXED_USR;
	u64 busy = 0;
	u32 j;

	for (j = 0; j < ARCHPMU_NR_FIXED; j++)
		if ((bits & BIT_ULL(ARCHPMU_BUSY_FIXED_SHIFT + j)) &&
		    (fixed_ctrl >> ARCHPMU_FIXED_SHIFT(j)) & live)
			busy |= BIT_ULL(ARCHPMU_BUSY_FIXED_SHIFT + j);
	return busy;
}

/*
 * Which of the counters in @bits another agent is counting with, from what
 * a read found (@sv): only a live enable (EN, a fixed counter's ring bits)
 * says so. perf disables an event by clearing EN alone and leaves the rest
 * (event, umask, USR, OS, INT) behind for good, which GLOBAL_INUSE then
 * reports too; such a counter is taken and put back as found. perf's own
 * users are refused through its reservation (perf_share.c), not here.
 */
u64 archpmu_found_in_use(u64 bits, const struct archpmu_pmu_saved *sv)
{
	u64 busy = 0;
	u32 i;

	for (i = 0; i < ARCHPMU_NR_GP; i++)
		if ((bits & BIT_ULL(i)) && (sv->evtsel[i] & ARCHPMU_EVTSEL_EN))
			busy |= BIT_ULL(i);
	return busy | fixed_in_use(bits, sv->fixed_ctrl);
}

/* After a save found @c's counters in use (-EBUSY): fill cl->refusal. */
static void describe_agent(struct archpmu_claims *cl, const struct archpmu_claim *c)
{
	const struct archpmu_pmu_saved *sv = &c->saved;
	struct archpmu_refusal *r = &cl->refusal;
	u64 gp = c->agent_busy & used_gp(c);
	u64 fixed = fixed_in_use(c->used, sv->fixed_ctrl);

	memset(r, 0, sizeof(*r));
	r->cpu = c->cpu;
	r->event = event_on(cl, c, c->agent_busy);
	if (gp) {
		r->kind = ARCHPMU_REFUSED_AGENT_EVTSEL;
		r->counter = __ffs64(gp);
		r->msr = archpmu_gp_sel_msr(r->counter);
		r->msr_value = sv->evtsel[r->counter];
	} else if (fixed) {
		r->kind = ARCHPMU_REFUSED_AGENT_FIXED;
		r->counter = ARCHPMU_COUNTER_FIXED | (__ffs64(fixed) - ARCHPMU_BUSY_FIXED_SHIFT);
		r->msr = ARCHPMU_MSR_FIXED_CTR_CTRL;
		r->msr_value = sv->fixed_ctrl;
	}
}

u32 archpmu_claim_ctl_msr(const struct archpmu_claim *c, unsigned int e)
{
	u32 ctr = c->hw[e].counter;

	return is_fixed(ctr) ? ARCHPMU_MSR_FIXED_CTR_CTRL : archpmu_gp_sel_msr(ctr);
}

u64 archpmu_claim_ctl_expected(const struct archpmu_claims *cl, const struct archpmu_claim *c,
			       unsigned int e, bool enable, u64 *mask)
{
	u32 ctr = c->hw[e].counter;
	u64 nibble_mask;

	if (!is_fixed(ctr)) {
		*mask = ~0ULL;
		return evtsel_image(cl->ev[e].config, &c->hw[e], enable);
	}
	nibble_mask = archpmu_fixed_ctrl_mask(archpmu_counter_bit(ctr));
	*mask = nibble_mask;
	return enable ? fixed_ctrl_value(cl, c) & nibble_mask : 0;
}

/* --- rounds over every claim -------------------------------------------- */

/* Claims are in ascending CPU order. No lock: cpus[] is fixed for the claims' life. */
struct archpmu_claim *archpmu_claims_on_cpu(struct archpmu_claims *cl, unsigned int cpu)
{
	int i = archpmu_cpu_index(cl->all, cpu);

	return i < 0 ? NULL : &cl->cpus[i];
}

int archpmu_claims_init(struct archpmu_claims *cl)
{
	unsigned int i;

	if (!zalloc_cpumask_var(&cl->mask, GFP_KERNEL) ||
	    !zalloc_cpumask_var(&cl->all, GFP_KERNEL))
		return -ENOMEM;
	for (i = 0; i < cl->nr_cpus; i++) {
		cl->cpus[i].claims = cl;
		cpumask_set_cpu(cl->cpus[i].cpu, cl->all);
	}
	cl->round.mask = cl->mask;
	cl->round.cpus = cl->all;
	cl->round.first = &cl->cpus[0].batch;
	cl->round.stride = sizeof(cl->cpus[0]);
	return 0;
}

void archpmu_claims_free(struct archpmu_claims *cl)
{
	free_cpumask_var(cl->all);
	free_cpumask_var(cl->mask);
}

void archpmu_claims_round_begin(struct archpmu_claims *cl)
{
	cpumask_clear(cl->mask);
}

struct archpmu_batch *archpmu_claims_round_add(struct archpmu_claims *cl,
					       struct archpmu_claim *c)
{
	cpumask_set_cpu(c->cpu, cl->mask);
	return &c->batch;
}

int archpmu_claims_round_run(struct archpmu_claims *cl)
{
	lockdep_assert_held(&archpmu_own_lock);
	return archpmu_round_run(&cl->round);
}

/* --- the steps, as batches ------------------------------------------------- */

void archpmu_claim_build_read(struct archpmu_claim *c, u64 bits, struct archpmu_pmu_saved *sv)
{
	struct archpmu_batch *b = &c->batch;
	u32 i;

	memset(sv, 0, sizeof(*sv));
	archpmu_batch_init(b, NULL, NULL, NULL);
	for (i = 0; i < ARCHPMU_NR_GP; i++) {
		if (!(bits & BIT_ULL(i)))
			continue;
		archpmu_batch_read(b, archpmu_gp_sel_msr(i), &sv->evtsel[i]);
		archpmu_batch_read(b, archpmu_gp_ctr_msr(i, false), &sv->pmc[i]);
	}
	for (i = 0; i < ARCHPMU_NR_FIXED; i++)
		if (bits & BIT_ULL(ARCHPMU_BUSY_FIXED_SHIFT + i))
			archpmu_batch_read(b, ARCHPMU_MSR_FIXED_CTR0 + i, &sv->fixed[i]);
	if (bits & ARCHPMU_GLOBAL_PERF_METRICS)
		archpmu_batch_read(b, ARCHPMU_MSR_PERF_METRICS, &sv->metrics);
	c->ops->save_global(b, sv);
}

void archpmu_claim_keep_found(struct archpmu_claim *c, u64 bits,
			      const struct archpmu_pmu_saved *sv)
{
	struct archpmu_pmu_saved *to = &c->saved;
	u64 fixed = archpmu_fixed_ctrl_mask(bits);
	u32 i;

	for (i = 0; i < ARCHPMU_NR_GP; i++) {
		if (!(bits & BIT_ULL(i)))
			continue;
		to->evtsel[i] = sv->evtsel[i];
		to->pmc[i] = sv->pmc[i];
	}
	for (i = 0; i < ARCHPMU_NR_FIXED; i++)
		if (bits & BIT_ULL(ARCHPMU_BUSY_FIXED_SHIFT + i))
			to->fixed[i] = sv->fixed[i];
	if (bits & ARCHPMU_GLOBAL_PERF_METRICS)
		to->metrics = sv->metrics;
	/* GLOBAL_CTRL's bits are the busy-mask bits; the restore puts back ours. */
	to->fixed_ctrl = (to->fixed_ctrl & ~fixed) | (sv->fixed_ctrl & fixed);
	to->global_ctrl = (to->global_ctrl & ~bits) | (sv->global_ctrl & bits);
}

void archpmu_claim_grow_local(struct archpmu_claim *c, u64 bits)
{
	c->used |= bits;
	archpmu_ctx_grow_local(&c->change, bits);
}

/* Read what the PMU holds in our counters. */
static void build_save(struct archpmu_claim *c)
{
	archpmu_claim_build_read(c, c->used, &c->saved);
	c->agent_busy = 0;
}

/* What the save found: 0, or -EBUSY with c->agent_busy the counters in use. */
static int saved(struct archpmu_claim *c)
{
	if (c->batch.err) {
		pr_err("CPU %u: reading the PMU failed (%d)\n", c->cpu, c->batch.err);
		return c->batch.err;
	}
	c->agent_busy = archpmu_found_in_use(c->used, &c->saved);
	return c->agent_busy ? -EBUSY : 0;
}

/* Program our counters from zero; counting if @start. */
static void build_program(struct archpmu_claims *cl, struct archpmu_claim *c, bool start)
{
	struct archpmu_batch *b = &c->batch;
	unsigned int i;

	/* A task session's counters start with its tasks (its gate). */
	start = start && !cl->scope;
	c->change.used = c->used;
	c->change.hw = c->hw;
	c->change.nr = cl->nr_events;
	c->change.gated = !!cl->scope;
	archpmu_batch_init(b, archpmu_ctx_claim_local, archpmu_ctx_claimed_local,
			   &c->change);
	c->ops->disable(b, c->used);
	for (i = 0; i < cl->nr_events; i++) {
		u32 ctr = c->hw[i].counter;
		u64 value;

		if (!archpmu_claim_placed(c, i))
			continue;
		value = archpmu_hw_event_start(&c->hw[i], archpmu_claim_width_mask(c, ctr));
		/*
		 * The counter first: v1's EN starts it (SDM 18.2.1.1). PERF_METRICS
		 * after fixed counter 3, which leads its metric events' group.
		 */
		archpmu_batch_write(b, archpmu_claim_counter_msr(c, ctr, true), value);
		if (!is_fixed(ctr) && !archpmu_counter_is_metric(ctr))
			archpmu_batch_write(b, archpmu_gp_sel_msr(ctr),
					    evtsel_image(cl->ev[i].config, &c->hw[i], start));
		local64_set(&c->hw[i].prev, value);
		c->hw[i].last_period = c->hw[i].period;
	}
	add_fixed_enable(cl, c, start);
	c->ops->ack(b, c->used);
	if (start)
		c->ops->enable(b, c->used);
	/* If only in part: the restore undoes it. */
	c->programmed = true;
	c->programs++;
}

/* Put back what the PMU held before the claim; every op runs. */
static void build_restore(struct archpmu_claim *c)
{
	const struct archpmu_pmu_saved *sv = &c->saved;
	struct archpmu_batch *b = &c->batch;
	u32 i;

	archpmu_batch_init(b, c->claims->scope ? c->claims->scope->release_local :
			   archpmu_ctx_release_local, archpmu_ctx_released_local, &c->change);
	b->best_effort = true;
	c->ops->disable(b, c->used);
	for (i = 0; i < ARCHPMU_NR_GP; i++) {
		if (!(used_gp(c) & BIT_ULL(i)))
			continue;
		archpmu_batch_write(b, archpmu_gp_sel_msr(i), sv->evtsel[i]);
		archpmu_batch_write(b, archpmu_claim_counter_msr(c, i, true), sv->pmc[i]);
	}
	for (i = 0; i < ARCHPMU_NR_FIXED; i++)
		if (used_fixed(c) & BIT_ULL(i))
			archpmu_batch_write(b, ARCHPMU_MSR_FIXED_CTR0 + i, sv->fixed[i]);
	/* After fixed counter 3: the fractions are of its value (perf's order). */
	if (c->used & ARCHPMU_GLOBAL_PERF_METRICS)
		archpmu_batch_write(b, ARCHPMU_MSR_PERF_METRICS, sv->metrics);
	c->ops->restore_global(b, sv, c->used);
	c->programmed = false;
}

static void restored(struct archpmu_claim *c)
{
	if (c->batch.err)
		pr_err("CPU %u: restoring the PMU failed (%d)\n", c->cpu, c->batch.err);
}

/*
 * Read what the PMU holds in every claim's counters, on every CPU at once,
 * and refuse counters another agent uses (c->agent_busy).
 */
static int claims_save(struct archpmu_claims *cl, struct archpmu_claim **bad)
{
	unsigned int i;
	int ret;

	archpmu_claims_round_begin(cl);
	for (i = 0; i < cl->nr_cpus; i++) {
		build_save(&cl->cpus[i]);
		archpmu_claims_round_add(cl, &cl->cpus[i]);
	}
	archpmu_claims_round_run(cl);
	for (i = 0; i < cl->nr_cpus; i++) {
		ret = saved(&cl->cpus[i]);
		if (ret) {
			*bad = &cl->cpus[i];
			return ret;
		}
	}
	return 0;
}

/*
 * Program every claim's counters in one round. A failure on any CPU puts
 * back every CPU's PMU as the save found it.
 */
static int claims_program(struct archpmu_claims *cl, bool start, struct archpmu_claim **bad)
{
	unsigned int i;
	int ret = 0;

	archpmu_claims_round_begin(cl);
	for (i = 0; i < cl->nr_cpus; i++) {
		build_program(cl, &cl->cpus[i], start);
		archpmu_claims_round_add(cl, &cl->cpus[i]);
	}
	archpmu_claims_round_run(cl);
	for (i = 0; i < cl->nr_cpus; i++) {
		struct archpmu_claim *c = &cl->cpus[i];

		if (!c->batch.err || ret)
			continue;
		pr_err("CPU %u: programming the counters failed (%d); the PMU is put back as it was\n",
		       c->cpu, c->batch.err);
		ret = c->batch.err;
		*bad = c;
	}
	if (ret)
		archpmu_claims_restore(cl);
	return ret;
}

int archpmu_claims_take(struct archpmu_claims *cl, bool start, struct archpmu_count_open *out)
{
	struct archpmu_claim *bad = NULL;
	int ret;

	ret = claims_save(cl, &bad);
	if (ret == -EBUSY) {
		out->busy_holder = ARCHPMU_HOLDER_AGENT;
		out->bad_event = event_on(cl, bad, bad->agent_busy);
		describe_agent(cl, bad);
	}
	if (!ret)
		ret = claims_program(cl, start, &bad);
	if (ret)
		out->bad_cpu = bad->cpu;
	return ret;
}

/* Put back every programmed claim's PMU, in one round. */
void archpmu_claims_restore(struct archpmu_claims *cl)
{
	unsigned int i;

	archpmu_claims_round_begin(cl);
	for (i = 0; i < cl->nr_cpus; i++) {
		if (!cl->cpus[i].programmed)
			continue;
		build_restore(&cl->cpus[i]);
		archpmu_claims_round_add(cl, &cl->cpus[i]);
	}
	archpmu_claims_round_run(cl);
	for (i = 0; i < cl->nr_cpus; i++)
		if (cpumask_test_cpu(cl->cpus[i].cpu, cl->mask))
			restored(&cl->cpus[i]);
}

/* --- one CPU (hotplug, suspend) ------------------------------------------- */

int archpmu_claim_save(struct archpmu_claims *cl, struct archpmu_claim *c)
{
	lockdep_assert_held(&archpmu_own_lock);
	build_save(c);
	archpmu_batch_run(c->cpu, &c->batch);
	return saved(c);
}

int archpmu_claim_program(struct archpmu_claims *cl, struct archpmu_claim *c, bool start)
{
	int ret;

	lockdep_assert_held(&archpmu_own_lock);
	build_program(cl, c, start);
	ret = archpmu_batch_run(c->cpu, &c->batch);
	if (ret) {
		pr_err("CPU %u: programming the counters failed (%d); the PMU is put back as it was\n",
		       c->cpu, ret);
		archpmu_claim_restore(cl, c);
	}
	return ret;
}

int archpmu_claim_restore(struct archpmu_claims *cl, struct archpmu_claim *c)
{
	lockdep_assert_held(&archpmu_own_lock);
	if (!c->programmed)
		return 0;
	build_restore(c);
	archpmu_batch_run(c->cpu, &c->batch);
	restored(c);
	return c->batch.err;
}

/*
 * Start or stop our counters. Each is gated by its own enable (EN, or its
 * nibble of IA32_FIXED_CTR_CTRL) and on v2+ by its GLOBAL_CTRL bit as well:
 * an agent that rewrites GLOBAL_CTRL wholesale, as perf does, then neither
 * starts a stopped session nor keeps a running one stopped once it enables
 * again.
 */
void archpmu_claim_add_enable(struct archpmu_claims *cl, struct archpmu_claim *c,
			      bool enable)
{
	struct archpmu_batch *b = &c->batch;
	unsigned int i;

	if (!enable)
		c->ops->disable(b, c->used);
	for (i = 0; i < cl->nr_events; i++)
		if (archpmu_claim_controlled(c, i) && !is_fixed(c->hw[i].counter))
			archpmu_batch_write(b, archpmu_gp_sel_msr(c->hw[i].counter),
					    evtsel_image(cl->ev[i].config, &c->hw[i], enable));
	add_fixed_enable(cl, c, enable);
	if (enable)
		c->ops->enable(b, c->used);
}
