// SPDX-License-Identifier: GPL-2.0
/*
 * Event validation and counter allocation, per CPU, against the CPU's own
 * enumeration (hybrid parts differ per core). See uapi/archpmu.h for the
 * errno of each refusal.
 */
#include "alloc.h"

/* What a fixed counter cannot do: its event is only the bare encoding. */
#define EVTSEL_FILTERS		(ARCHPMU_EVTSEL_EDGE | ARCHPMU_EVTSEL_INV | \
				 ARCHPMU_EVTSEL_CMASK | ARCHPMU_EVTSEL_ANY | \
				 ARCHPMU_EVTSEL_EQ | ARCHPMU_EVTSEL_UMASK2)
#define EVENT_FLAGS		(ARCHPMU_EVENT_GP_ONLY | ARCHPMU_EVENT_PIN | \
				 ARCHPMU_EVENT_RAW | ARCHPMU_EVENT_GROUP | \
				 ARCHPMU_EVENT_NO_ROTATE | ARCHPMU_EVENT_GP_MASK | \
				 ARCHPMU_EVENT_CORE_TYPE)

static bool fixed_only(u64 config)
{
	return !(config & ARCHPMU_EVTSEL_EVENT);
}

int archpmu_check_event(const struct archpmu_pmu_desc *d,
			const struct archpmu_event *ev)
{
	u64 forbidden = ARCHPMU_EVTSEL_EN | ARCHPMU_EVTSEL_INT | ARCHPMU_EVTSEL_PC;
	u64 config = ev->config;
	int arch;

	if (!d->version)
		return -ENODEV;
	if ((ev->flags & ~EVENT_FLAGS) || (config & forbidden))
		return -EINVAL;
	if (config & ~(archpmu_evtsel_valid_bits(d) | ARCHPMU_EVTSEL_ANY))
		return -EINVAL;
	/* Both change only the CMASK comparison, which CMASK 0 turns off. */
	if ((config & (ARCHPMU_EVTSEL_INV | ARCHPMU_EVTSEL_EQ)) && !(config & ARCHPMU_EVTSEL_CMASK))
		return -EDOM;
	if ((config & ARCHPMU_EVTSEL_ANY) && !archpmu_anythread_allowed(d))
		return -EOPNOTSUPP;
	if (archpmu_metric_field(config) >= 0)
		return d->flags & ARCHPMU_PMU_PERF_METRICS ? 0 : -ENOENT;
	arch = archpmu_arch_event_of(config);
	if (arch >= 0 && !(d->events_mask & BIT_ULL(arch)) &&
	    !(ev->flags & ARCHPMU_EVENT_RAW))
		return -ENOENT;
	return 0;
}

static u64 fixed_usable(const struct archpmu_pmu_desc *d)
{
	return d->version >= 2 ?
	       d->fixed_mask & (BIT_ULL(ARCHPMU_NR_FIXED) - 1) : 0;
}

/* Not GP counter 3 where TSX may take it (arch_pmu.c, TSX_FORCE_ABORT). */
static u64 gp_usable(const struct archpmu_pmu_desc *d)
{
	u64 gp = archpmu_gp_driven(d);

	return d->flags & ARCHPMU_PMU_TSX_FORCE_ABORT ? gp & ~BIT_ULL(3) : gp;
}

/* The GP counters @ev may use on this PMU: its constraint (uapi), if any. */
static u64 event_gp(const struct archpmu_pmu_desc *d, const struct archpmu_event *ev)
{
	u64 allowed = (ev->flags & ARCHPMU_EVENT_GP_MASK) >> ARCHPMU_EVENT_GP_MASK_SHIFT;

	return allowed ? gp_usable(d) & allowed : gp_usable(d);
}

static int pin(const struct archpmu_pmu_desc *d, const struct archpmu_event *ev,
	       u64 taken, u64 busy, u32 *counter)
{
	bool fixed = ev->counter & ARCHPMU_COUNTER_FIXED;
	u32 idx = ev->counter & 0xff;

	if (ev->counter & ~(ARCHPMU_COUNTER_FIXED | 0xff))
		return -ECHRNG;
	/* Before any BIT_ULL(idx): a shift by 64 or more is undefined. */
	if (idx >= (fixed ? ARCHPMU_NR_FIXED : ARCHPMU_NR_GP))
		return -ECHRNG;
	if (fixed) {
		if (!(fixed_usable(d) & BIT_ULL(idx)) ||
		    archpmu_fixed_counter_of(ev->config) != (int)idx)
			return -ECHRNG;
		if (ev->config & EVTSEL_FILTERS)
			return -EMEDIUMTYPE;
	} else if (!(event_gp(d, ev) & BIT_ULL(idx)) || fixed_only(ev->config)) {
		return -ECHRNG;
	}
	if (taken & archpmu_counter_bit(ev->counter))
		return busy & archpmu_counter_bit(ev->counter) ? -EBUSY : -EINVAL;
	*counter = ev->counter;
	return 0;
}

/*
 * A fixed counter for an unpinned event: 0 when placed, NOT_PLACED when it
 * should go to a GP counter, or the errno when only a fixed counter will do.
 */
#define NOT_PLACED	1

static int place_fixed(const struct archpmu_pmu_desc *d,
		       const struct archpmu_event *ev, u64 taken, u64 busy,
		       u32 *counter)
{
	int j = archpmu_fixed_counter_of(ev->config);
	bool must = fixed_only(ev->config);
	u32 c;

	if (ev->flags & ARCHPMU_EVENT_GP_ONLY)
		return must ? -ENOENT : NOT_PLACED;
	if (j < 0 || !(fixed_usable(d) & BIT_ULL(j)))
		return must ? -ENOENT : NOT_PLACED;
	if (ev->config & EVTSEL_FILTERS)
		return must ? -EMEDIUMTYPE : NOT_PLACED;
	c = ARCHPMU_COUNTER_FIXED | j;
	if (taken & archpmu_counter_bit(c))
		return must ? ((busy & archpmu_counter_bit(c)) ? -EBUSY : -ENOSPC) : NOT_PLACED;
	*counter = c;
	return 0;
}

bool archpmu_event_absent(const struct archpmu_pmu_desc *d, const struct archpmu_event *ev)
{
	int j = archpmu_fixed_counter_of(ev->config);

	if (archpmu_event_elsewhere(d, ev) || archpmu_check_event(d, ev) == -ENOENT)
		return true;
	return !(ev->flags & ARCHPMU_EVENT_PIN) && fixed_only(ev->config) &&
	       archpmu_metric_field(ev->config) < 0 &&
	       (j < 0 || !(fixed_usable(d) & BIT_ULL(j)));
}

int archpmu_check_events(const struct archpmu_pmu_desc *d,
			 const struct archpmu_event *ev, unsigned int n,
			 bool absent_ok, u64 *absent, unsigned int *bad)
{
	unsigned int e;
	int ret;

	*absent = 0;
	for (e = 0; e < n; e++) {
		if ((absent_ok && archpmu_event_absent(d, &ev[e])) ||
		    archpmu_event_elsewhere(d, &ev[e])) {
			*absent |= BIT_ULL(e);
			continue;
		}
		ret = archpmu_check_event(d, &ev[e]);
		if (ret) {
			*bad = e;
			return ret;
		}
	}
	return 0;
}

u64 archpmu_candidate_counters(const struct archpmu_pmu_desc *d,
			       const struct archpmu_event *ev)
{
	int j = archpmu_fixed_counter_of(ev->config);
	u64 bits = 0;

	if (ev->flags & ARCHPMU_EVENT_PIN)
		return archpmu_counter_bit(ev->counter);
	/* With fixed counter 3, which its slots event needs. */
	if (archpmu_metric_field(ev->config) >= 0)
		return d->flags & ARCHPMU_PMU_PERF_METRICS ?
		       ARCHPMU_GLOBAL_PERF_METRICS |
		       archpmu_counter_bit(ARCHPMU_COUNTER_FIXED | 3) : 0;
	if (!fixed_only(ev->config))
		bits |= event_gp(d, ev);
	if (!(ev->flags & ARCHPMU_EVENT_GP_ONLY) && j >= 0 && (fixed_usable(d) & BIT_ULL(j)))
		bits |= archpmu_counter_bit(ARCHPMU_COUNTER_FIXED | j);
	return bits;
}

/* The first event of @e's group. */
static unsigned int group_lead(const struct archpmu_event *ev, unsigned int e)
{
	while (e && (ev[e].flags & ARCHPMU_EVENT_GROUP))
		e--;
	return e;
}

/* Topdown slots, A4H/01H or fixed counter 3's own 00H/04H, that it can take. */
static bool is_slots(u64 config)
{
	return !(config & EVTSEL_FILTERS) && archpmu_fixed_counter_of(config) == 3;
}

static u64 ring_of(u64 config)
{
	u64 r = config & (ARCHPMU_EVTSEL_USR | ARCHPMU_EVTSEL_OS);

	return r ? r : ARCHPMU_EVTSEL_USR | ARCHPMU_EVTSEL_OS;
}

int archpmu_check_metrics(const struct archpmu_event *ev, unsigned int n, bool sampling,
			  unsigned int *bad)
{
	u64 allowed = ARCHPMU_EVTSEL_EVENT | ARCHPMU_EVTSEL_UMASK | ARCHPMU_EVTSEL_USR |
		      ARCHPMU_EVTSEL_OS;
	unsigned int e, lead;

	for (e = 0; e < n; e++) {
		if (archpmu_metric_field(ev[e].config) < 0)
			continue;
		*bad = e;
		if (sampling)
			return -EOPNOTSUPP;
		lead = group_lead(ev, e);
		if ((ev[e].config & ~allowed) ||
		    (ev[e].flags & (ARCHPMU_EVENT_PIN | ARCHPMU_EVENT_GP_ONLY |
				    ARCHPMU_EVENT_GP_MASK)) ||
		    lead == e || !is_slots(ev[lead].config) ||
		    (ev[lead].flags & (ARCHPMU_EVENT_GP_ONLY | ARCHPMU_EVENT_GP_MASK)) ||
		    ring_of(ev[lead].config) != ring_of(ev[e].config))
			return -EINVAL;
	}
	return 0;
}

int archpmu_check_core_types(const struct archpmu_event *ev, unsigned int n, unsigned int *bad)
{
	unsigned int e;

	for (e = 0; e < n; e++) {
		u32 type = ev[e].flags & ARCHPMU_EVENT_CORE_TYPE;

		*bad = e;
		if (type != (ev[group_lead(ev, e)].flags & ARCHPMU_EVENT_CORE_TYPE))
			return -EINVAL;
	}
	*bad = ~0U;
	return 0;
}

/*
 * A metric event on its CPU's PERF_METRICS, which the events of a session
 * share: its group's slots event must have fixed counter 3.
 */
static int place_metric(const struct archpmu_pmu_desc *d, const struct archpmu_event *ev,
			unsigned int e, u32 *counters, u64 busy)
{
	int field = archpmu_metric_field(ev[e].config);
	u32 slots = ARCHPMU_COUNTER_FIXED | 3;

	if (field < 0 || !(d->flags & ARCHPMU_PMU_PERF_METRICS))
		return -ENOENT;
	if (busy & ARCHPMU_GLOBAL_PERF_METRICS)
		return -EBUSY;
	if (counters[group_lead(ev, e)] != slots)
		return busy & archpmu_counter_bit(slots) ? -EBUSY : -ENOSPC;
	counters[e] = ARCHPMU_COUNTER_METRICS | field;
	return 0;
}

int archpmu_allocate(const struct archpmu_pmu_desc *d,
		     const struct archpmu_event *ev, unsigned int n, u64 absent,
		     u64 busy, u32 *counters, unsigned int *bad)
{
	u64 taken = busy, done = absent;
	unsigned int i, weight;
	int ret;

	for (i = 0; i < n; i++) {
		counters[i] = ARCHPMU_NO_COUNTER;
		if ((done & BIT_ULL(i)) || !(ev[i].flags & ARCHPMU_EVENT_PIN))
			continue;
		ret = pin(d, &ev[i], taken, busy, &counters[i]);
		if (ret)
			goto refuse;
		taken |= archpmu_counter_bit(counters[i]);
		done |= BIT_ULL(i);
	}
	for (i = 0; i < n; i++) {
		if ((done & BIT_ULL(i)) || archpmu_metric_field(ev[i].config) >= 0)
			continue;
		ret = place_fixed(d, &ev[i], taken, busy, &counters[i]);
		if (ret < 0)
			goto refuse;
		if (!ret) {
			taken |= archpmu_counter_bit(counters[i]);
			done |= BIT_ULL(i);
		}
	}
	/* As perf's scheduler: the events with the fewest GP counters first. */
	for (weight = 1; weight <= ARCHPMU_NR_GP; weight++) {
		for (i = 0; i < n; i++) {
			u64 free_gp, gp = event_gp(d, &ev[i]);
			u32 g;

			if ((done & BIT_ULL(i)) || (gp && hweight64(gp) != weight) ||
			    archpmu_metric_field(ev[i].config) >= 0)
				continue;
			/* A mask with none of the CPU's counters; else, no GP counter at all. */
			if (!gp) {
				ret = ev[i].flags & ARCHPMU_EVENT_GP_MASK ? -ECHRNG : -ENOSPC;
				goto refuse;
			}
			free_gp = gp & ~taken;
			if (!free_gp) {
				ret = (gp & busy) ? -EBUSY : -ENOSPC;
				goto refuse;
			}
			for (g = 0; !(free_gp & BIT_ULL(g)); g++)
				;
			counters[i] = g;
			taken |= BIT_ULL(g);
			done |= BIT_ULL(i);
		}
	}
	for (i = 0; i < n; i++) {
		if (done & BIT_ULL(i))
			continue;
		ret = place_metric(d, ev, i, counters, busy);
		if (ret)
			goto refuse;
	}
	return 0;

refuse:
	*bad = i;
	return ret;
}
