// SPDX-License-Identifier: GPL-2.0
/*
 * Groups and multiplexing rules (plan.h). Every placement goes through
 * archpmu_allocate() on a scratch list of the events concerned, so a turn
 * follows the rules of a session that fits (fixed counters first).
 */
#include "plan.h"

int archpmu_check_groups(const struct archpmu_event *ev, unsigned int n, unsigned int *bad)
{
	unsigned int e;

	for (e = 0; e < n; e++) {
		bool member = ev[e].flags & ARCHPMU_EVENT_GROUP;

		if ((member && !e) || (member && (ev[e].flags & ARCHPMU_EVENT_NO_ROTATE))) {
			*bad = e;
			return -EINVAL;
		}
	}
	return 0;
}

bool archpmu_group_stays(const struct archpmu_event *ev, unsigned int n, unsigned int lead)
{
	unsigned int e, end = archpmu_group_end(ev, n, lead);

	if (ev[lead].flags & ARCHPMU_EVENT_NO_ROTATE)
		return true;
	for (e = lead; e < end; e++)
		if (ev[e].flags & ARCHPMU_EVENT_PIN)
			return true;
	return false;
}

/* Does the group [lead, end) have a member the CPU lacks? */
static bool group_absent(u64 absent, unsigned int lead, unsigned int end)
{
	unsigned int e;

	for (e = lead; e < end; e++)
		if (absent & (1ULL << e))
			return true;
	return false;
}

static void add_group(struct archpmu_mux_scratch *s, const struct archpmu_event *ev,
		      unsigned int lead, unsigned int end)
{
	unsigned int e;

	for (e = lead; e < end && s->n < ARCHPMU_MAX_EVENTS; e++, s->n++) {
		s->ev[s->n] = ev[e];
		s->from[s->n] = e;
	}
}

/* Place the list around @busy; a refusal names the event, as allocate() in plan.c. */
static int place(const struct archpmu_pmu_desc *d, struct archpmu_mux_scratch *s, u64 busy,
		 unsigned int *bad)
{
	unsigned int b = 0;
	int ret = archpmu_allocate(d, s->ev, s->n, 0, busy, s->counters, &b);

	/* Held counters matter only if the events fit on a free PMU. */
	if (ret == -EBUSY)
		ret = archpmu_allocate(d, s->ev, s->n, 0, 0, s->counters, &b) ?: -EBUSY;
	if (ret)
		*bad = b < s->n ? s->from[b] : 0;
	return ret;
}

int archpmu_mux_plan(struct archpmu_mux_scratch *s, const struct archpmu_pmu_desc *d,
		     const struct archpmu_event *ev, unsigned int n, u64 absent, u64 busy,
		     u32 *counters, u64 *pool, unsigned int *bad)
{
	unsigned int lead, end, k, base;
	u64 stay = 0;
	int ret;

	s->n = 0;
	for (k = 0; k < n; k++)
		counters[k] = ~0U;
	for (lead = 0; lead < n; lead = end) {
		end = archpmu_group_end(ev, n, lead);
		/* A group for another core type (all its events are) has no counter here. */
		if (!archpmu_group_stays(ev, n, lead) || archpmu_event_elsewhere(d, &ev[lead]))
			continue;
		/* Never rotated out where the CPU lacks it: it could never count. */
		for (k = lead; k < end; k++) {
			if (absent & (1ULL << k)) {
				*bad = k;
				return -ENOENT;
			}
		}
		add_group(s, ev, lead, end);
	}
	ret = s->n ? place(d, s, busy, bad) : 0;
	if (ret)
		return ret;
	for (k = 0; k < s->n; k++) {
		counters[s->from[k]] = s->counters[k];
		stay |= archpmu_counter_bit(s->counters[k]);
	}
	base = s->n;
	for (lead = 0; lead < n; lead = end) {
		end = archpmu_group_end(ev, n, lead);
		if (archpmu_group_stays(ev, n, lead) || group_absent(absent, lead, end))
			continue;
		s->n = base;
		add_group(s, ev, lead, end);
		ret = place(d, s, busy, bad);
		/* Crowded out by others' counters: it never counts here (<not counted>). */
		if (ret && ret != -EBUSY)
			return ret;
	}
	*pool = archpmu_mux_wanted(d, ev, n, absent) & ~busy & ~stay;
	/* PERF_METRICS goes with fixed counter 3, which its events' slots need. */
	if (!((*pool | stay) & archpmu_counter_bit(ARCHPMU_COUNTER_FIXED | 3)))
		*pool &= ~ARCHPMU_GLOBAL_PERF_METRICS;
	return 0;
}

u64 archpmu_mux_wanted(const struct archpmu_pmu_desc *d, const struct archpmu_event *ev,
		       unsigned int n, u64 absent)
{
	unsigned int lead, end, k;
	u64 want = 0;

	for (lead = 0; lead < n; lead = end) {
		end = archpmu_group_end(ev, n, lead);
		if (archpmu_group_stays(ev, n, lead) || group_absent(absent, lead, end))
			continue;
		for (k = lead; k < end; k++)
			want |= archpmu_candidate_counters(d, &ev[k]);
	}
	return want;
}

/* Could the group go on @pool at all? One that never can must not hold up the turns. */
static bool fits_alone(struct archpmu_mux_scratch *s, const struct archpmu_pmu_desc *d,
		       const struct archpmu_event *ev, unsigned int lead, unsigned int end,
		       u64 pool)
{
	unsigned int b;

	return !archpmu_allocate(d, ev + lead, end - lead, 0, ~pool, s->alone, &b);
}

u64 archpmu_mux_crowded(struct archpmu_mux_scratch *s, const struct archpmu_pmu_desc *d,
			const struct archpmu_event *ev, unsigned int n, u64 absent, u64 pool)
{
	unsigned int lead, end, e;
	u64 out = 0;

	for (lead = 0; lead < n; lead = end) {
		end = archpmu_group_end(ev, n, lead);
		if (archpmu_group_stays(ev, n, lead) || group_absent(absent, lead, end) ||
		    fits_alone(s, d, ev, lead, end, pool))
			continue;
		for (e = lead; e < end; e++)
			out |= 1ULL << e;
	}
	return out;
}

unsigned int archpmu_mux_turn(struct archpmu_mux_scratch *s, const struct archpmu_pmu_desc *d,
			      const struct archpmu_event *ev, unsigned int n, u64 absent, u64 pool,
			      unsigned int first, u32 *counters)
{
	unsigned int start = first < n ? archpmu_group_lead(ev, first) : 0, next = ~0U;
	unsigned int lead = start, end, k, i, b, base;

	s->n = 0;
	for (k = 0; k < n; k = end) {
		end = archpmu_group_end(ev, n, k);
		if (!archpmu_group_stays(ev, n, k))
			for (i = k; i < end; i++)
				counters[i] = ~0U;
	}
	/* At most n groups: the walk ends even if @first leads none. */
	for (i = 0; i < n; i++) {
		end = archpmu_group_end(ev, n, lead);
		if (!archpmu_group_stays(ev, n, lead) && !group_absent(absent, lead, end)) {
			base = s->n;
			add_group(s, ev, lead, end);
			if (archpmu_allocate(d, s->ev, s->n, 0, ~pool, s->counters, &b)) {
				s->n = base;
				if (next == ~0U && fits_alone(s, d, ev, lead, end, pool))
					next = lead;
			} else {
				for (k = 0; k < s->n; k++)
					counters[s->from[k]] = s->counters[k];
			}
		}
		lead = end < n ? end : 0;
		if (lead == start)
			break;
	}
	return next == ~0U ? start : next;
}
