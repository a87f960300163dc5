// SPDX-License-Identifier: GPL-2.0
/*
 * Which counters of which CPU a session gets: each event is checked against
 * each CPU's own enumeration, placed around the counters other sessions
 * hold (the contexts' taken masks) and those perf holds, and the GP
 * counters' perf reservation is taken (perf_share.c). Nothing is programmed
 * here; a refusal records the event, the CPU and the holder (cl->refusal)
 * for the session to report (notify/).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/lockdep.h>
#include <linux/pid.h>
#include <linux/string.h>

#include "own.h"

/* See own.h: the allocation view of every context, and every claim. */
DEFINE_MUTEX(archpmu_own_lock);

/* The session that holds any of @bits on @cpu, for the refusal. */
static const struct archpmu_holder *holder_of(unsigned int cpu, u64 bits)
{
	const struct archpmu_cpu_ctx *ctx = per_cpu_ptr(&archpmu_cpu_ctx, cpu);
	unsigned int i;

	/* PERF_METRICS is held with fixed counter 3. */
	if (bits & ARCHPMU_GLOBAL_PERF_METRICS)
		bits |= archpmu_counter_bit(ARCHPMU_COUNTER_FIXED | 3);
	for (i = 0; i < ARCHPMU_NR_GP; i++)
		if ((bits & BIT_ULL(i)) && ctx->holder[i])
			return ctx->holder[i];
	for (i = 0; i < ARCHPMU_NR_FIXED; i++)
		if ((bits & BIT_ULL(ARCHPMU_BUSY_FIXED_SHIFT + i)) &&
		    ctx->holder[ARCHPMU_NR_GP + i])
			return ctx->holder[ARCHPMU_NR_GP + i];
	return NULL;
}

/* Record who holds the counters that event @bad could have used on @c's CPU. */
static void name_holder(struct archpmu_claims *cl, const struct archpmu_claim *c,
			u64 perf_held, unsigned int bad, struct archpmu_count_open *out)
{
	const struct archpmu_event *ev = &cl->ev[bad];
	u64 wanted = archpmu_candidate_counters(&c->desc, ev);
	struct archpmu_refusal *r = &cl->refusal;
	const struct archpmu_holder *holder;

	r->cpu = c->cpu;
	r->event = bad;
	if (wanted & perf_held) {
		out->busy_holder = ARCHPMU_HOLDER_PERF;
		r->kind = ev->flags & ARCHPMU_EVENT_PIN ? ARCHPMU_REFUSED_PERF_PINNED :
			  ARCHPMU_REFUSED_PERF;
		r->counter = ev->counter;
		r->counters = wanted & perf_held;
		return;
	}
	holder = holder_of(c->cpu, wanted & per_cpu(archpmu_cpu_ctx, c->cpu).taken);
	if (!holder)
		return;
	out->busy_holder = ARCHPMU_HOLDER_SESSION;
	out->busy_pid = pid_vnr(holder->tgid);
	r->kind = ARCHPMU_REFUSED_SESSION;
	r->holder_id = holder->id;
	r->holder_pid = holder->pid;
	memcpy(r->holder_comm, holder->comm, sizeof(r->holder_comm));
}

/* The events for another core type than @c's CPU's: no counter there, in any session. */
static u64 elsewhere_on(const struct archpmu_claims *cl, const struct archpmu_claim *c)
{
	u64 out = 0;
	unsigned int e;

	for (e = 0; e < cl->nr_events; e++)
		if (archpmu_event_elsewhere(&c->desc, &cl->ev[e]))
			out |= BIT_ULL(e);
	return out;
}

/* Without a placer: each event for one core type counts on some CPU. */
static int check_somewhere(struct archpmu_claims *cl, struct archpmu_count_open *out)
{
	u64 nowhere = GENMASK_ULL(cl->nr_events - 1, 0);
	unsigned int i;

	for (i = 0; i < cl->nr_cpus; i++)
		nowhere &= cl->cpus[i].absent;
	if (!nowhere || !cl->nr_cpus)
		return 0;
	/* No CPU to name: none of them is of the event's type. */
	out->bad_event = __ffs64(nowhere);
	out->bad_cpu = ~0U;
	return -ENOENT;
}

/* Allocate on every CPU around other sessions' counters and @perf_held. */
static int allocate(struct archpmu_claims *cl, u64 perf_held, struct archpmu_count_open *out)
{
	u32 counters[ARCHPMU_MAX_EVENTS];
	unsigned int i, e, bad = 0;
	int ret;

	for (i = 0; i < cl->nr_cpus; i++) {
		struct archpmu_claim *c = &cl->cpus[i];
		u64 busy = per_cpu(archpmu_cpu_ctx, c->cpu).taken | perf_held;
		u64 elsewhere = elsewhere_on(cl, c);

		out->bad_cpu = c->cpu;
		c->partial = false;
		c->used = 0;
		ret = archpmu_allocate(&c->desc, cl->ev, cl->nr_events, elsewhere, busy,
				       counters, &bad);
		/* Held counters matter only if the events fit on a free PMU. */
		if (ret == -EBUSY)
			ret = archpmu_allocate(&c->desc, cl->ev, cl->nr_events, elsewhere, 0,
					       counters, &bad) ?: -EBUSY;
		/* An event the CPU lacks must not be placed there, even if it fits. */
		if ((c->absent & ~elsewhere) && !ret)
			ret = -ENOENT;
		if ((ret == -EBUSY || ret == -ENOSPC || ret == -ENOENT) && cl->placer) {
			ret = cl->placer->place(cl, c, busy, counters, &bad);
			c->partial = !ret;
		}
		if (ret) {
			out->bad_event = bad;
			if (ret == -EBUSY)
				name_holder(cl, c, perf_held, bad, out);
			return ret;
		}
		for (e = 0; e < cl->nr_events; e++) {
			c->hw[e].counter = counters[e];
			c->used |= archpmu_counter_bit(counters[e]);
		}
	}
	out->bad_cpu = ~0U;
	return 0;
}

/*
 * Validate, take perf's reservation of the GP counters perf does not hold,
 * allocate around those it does, and keep the reservation of the GP
 * counters the session uses, or, for a session of fixed counters only, of
 * one more, so perf stays out (perf_share.c). One pass: what perf holds is
 * known before anything is placed.
 */
int archpmu_own_plan(struct archpmu_claims *cl, struct archpmu_count_open *out)
{
	u64 held, perf_held, exists = 0, gp = 0, reserved;
	unsigned int i;
	int ret;

	lockdep_assert_held(&archpmu_own_lock);
	memset(&cl->refusal, 0, sizeof(cl->refusal));
	for (i = 0; i < cl->nr_cpus; i++) {
		struct archpmu_claim *c = &cl->cpus[i];

		out->bad_cpu = c->cpu;
		ret = archpmu_enum_get(c->cpu, &c->desc, &c->ops);
		if (ret)
			return ret;
		/* Multiplexing: what this core type lacks counts on the others. */
		ret = archpmu_check_events(&c->desc, cl->ev, cl->nr_events, cl->placer,
					   &c->absent, &out->bad_event);
		if (ret)
			return ret;
		exists |= archpmu_gp_driven(&c->desc);
	}
	ret = cl->placer ? cl->placer->check(cl, out) : check_somewhere(cl, out);
	if (ret)
		return ret;
	out->bad_cpu = ~0U;

	held = archpmu_reserve_gp(exists & ARCHPMU_LEGACY_GP_BITS, &reserved);
	perf_held = archpmu_perf_holds(held);
	if (exists && !(exists & ~perf_held)) {
		out->busy_holder = ARCHPMU_HOLDER_PERF;
		out->bad_cpu = cl->cpus[0].cpu;
		cl->refusal.kind = ARCHPMU_REFUSED_PERF_ALL;
		cl->refusal.cpu = out->bad_cpu;
		cl->refusal.event = ~0U;
		cl->refusal.counters = perf_held;
		ret = -EBUSY;
	} else {
		ret = allocate(cl, perf_held, out);
	}
	if (!ret) {
		for (i = 0; i < cl->nr_cpus; i++)
			gp |= cl->cpus[i].used & ARCHPMU_LEGACY_GP_BITS;
		/* Fixed counters and GP 8 and up have no reservation: hold another's. */
		if (!gp && reserved)
			gp = BIT_ULL(__ffs64(reserved));
		/* Placed around perf's: a counter not reserved would be another's to free. */
		if (WARN_ON_ONCE(gp & ~reserved))
			gp &= reserved;
	}
	archpmu_release_gp(reserved & ~gp);
	cl->gp_reserved = gp;
	return ret;
}

static void set_holder(unsigned int cpu, u64 bits, const struct archpmu_holder *holder)
{
	struct archpmu_cpu_ctx *ctx = per_cpu_ptr(&archpmu_cpu_ctx, cpu);
	unsigned int i;

	for (i = 0; i < ARCHPMU_NR_GP; i++)
		if (bits & BIT_ULL(i))
			ctx->holder[i] = holder;
	for (i = 0; i < ARCHPMU_NR_FIXED; i++)
		if (bits & BIT_ULL(ARCHPMU_BUSY_FIXED_SHIFT + i))
			ctx->holder[ARCHPMU_NR_GP + i] = holder;
}

/* The planned counters are programmed: other sessions now place around them. */
void archpmu_own_commit(struct archpmu_claims *cl)
{
	unsigned int i;

	lockdep_assert_held(&archpmu_own_lock);
	for (i = 0; i < cl->nr_cpus; i++) {
		per_cpu(archpmu_cpu_ctx, cl->cpus[i].cpu).taken |= cl->cpus[i].used;
		set_holder(cl->cpus[i].cpu, cl->cpus[i].used, cl->holder);
	}
	cl->owned = true;
}

u64 archpmu_own_take_more(struct archpmu_claims *cl, struct archpmu_claim *c, u64 bits)
{
	struct archpmu_cpu_ctx *ctx = per_cpu_ptr(&archpmu_cpu_ctx, c->cpu);

	lockdep_assert_held(&archpmu_own_lock);
	bits &= ~ctx->taken;
	ctx->taken |= bits;
	set_holder(c->cpu, bits, cl->holder);
	return bits;
}

/*
 * As at the open: GP 8 and up are perf's while it holds any legacy counter,
 * so for those every free legacy counter's reservation is taken to learn
 * it, and only @bits' kept.
 */
u64 archpmu_own_reserve_more(struct archpmu_claims *cl, struct archpmu_claim *c, u64 bits,
			     u64 *reserved)
{
	u64 probe = bits & ARCHPMU_LEGACY_GP_BITS, got, perf_held;
	unsigned int i;

	lockdep_assert_held(&archpmu_own_lock);
	if (bits & ARCHPMU_GP_BITS & ~ARCHPMU_LEGACY_GP_BITS)
		for (i = 0; i < cl->nr_cpus; i++)
			probe |= archpmu_gp_driven(&cl->cpus[i].desc) & ARCHPMU_LEGACY_GP_BITS;
	perf_held = archpmu_perf_holds(archpmu_reserve_gp(probe & ~cl->gp_reserved, &got));
	archpmu_release_gp(got & ~bits);
	*reserved = got & bits;
	cl->gp_reserved |= *reserved;
	if (bits & perf_held)
		archpmu_own_give_back(cl, c, bits & perf_held);
	return bits & ~perf_held;
}

void archpmu_own_unreserve(struct archpmu_claims *cl, u64 reserved)
{
	lockdep_assert_held(&archpmu_own_lock);
	cl->gp_reserved &= ~reserved;
	archpmu_release_gp(reserved);
}

void archpmu_own_give_back(struct archpmu_claims *cl, struct archpmu_claim *c, u64 bits)
{
	lockdep_assert_held(&archpmu_own_lock);
	per_cpu(archpmu_cpu_ctx, c->cpu).taken &= ~bits;
	set_holder(c->cpu, bits, NULL);
}

/* Give up the counters (already put back on every CPU) and perf's reservation. */
void archpmu_own_forget(struct archpmu_claims *cl)
{
	unsigned int i;

	lockdep_assert_held(&archpmu_own_lock);
	for (i = 0; cl->owned && i < cl->nr_cpus; i++) {
		/* Allocation kept these clear of every other session's counters. */
		per_cpu(archpmu_cpu_ctx, cl->cpus[i].cpu).taken &= ~cl->cpus[i].used;
		set_holder(cl->cpus[i].cpu, cl->cpus[i].used, NULL);
	}
	cl->owned = false;
	archpmu_release_gp(cl->gp_reserved);
	cl->gp_reserved = 0;
}
