/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Groups and multiplexing rules: which groups never rotate, what a
 * rotating CPU must hold, and which groups are on its PMU in each turn.
 * Portable, like alloc.c: the unit tests drive it directly.
 */
#ifndef ARCHPMU_MUX_PLAN_H
#define ARCHPMU_MUX_PLAN_H

#include "../own/alloc.h"

/*
 * Room for the placements below (too big for a kernel stack frame): the
 * events placed together, where each came from, and their counters.
 */
struct archpmu_mux_scratch {
	struct archpmu_event ev[ARCHPMU_MAX_EVENTS];
	unsigned int from[ARCHPMU_MAX_EVENTS];
	u32 counters[ARCHPMU_MAX_EVENTS];
	u32 alone[ARCHPMU_MAX_EVENTS];
	unsigned int n;
};

/* 0, or -EINVAL: GROUP on the first event, NO_ROTATE off a group's lead (*@bad). */
int archpmu_check_groups(const struct archpmu_event *ev, unsigned int n, unsigned int *bad);

/* The first event after the group that event @lead leads. */
static inline unsigned int archpmu_group_end(const struct archpmu_event *ev, unsigned int n,
					     unsigned int lead)
{
	unsigned int e = lead + 1;

	while (e < n && (ev[e].flags & ARCHPMU_EVENT_GROUP))
		e++;
	return e;
}

/* The lead of event @e's group. */
static inline unsigned int archpmu_group_lead(const struct archpmu_event *ev, unsigned int e)
{
	while (e && (ev[e].flags & ARCHPMU_EVENT_GROUP))
		e--;
	return e;
}

/* Is the group led by @lead on the PMU all the time (NO_ROTATE, or a PIN member)? */
bool archpmu_group_stays(const struct archpmu_event *ev, unsigned int n, unsigned int lead);

/*
 * For a CPU where the @n events do not all fit around @busy (counters held
 * by others): place the groups that stay (their counters in counters[],
 * every other entry ~0U), and check that each rotating group would fit
 * beside them alone on a free PMU; one that does not fit only because of
 * @busy is never on this CPU's PMU, nor is a group with a member in
 * @absent (bit e: the CPU lacks event e, archpmu_event_absent()).
 * *@pool: the free counters the rotating events can use; the CPU holds
 * those and the staying groups' counters. Returns 0, or the -errno of
 * archpmu_allocate() with *@bad an event of the group that does not fit.
 */
int archpmu_mux_plan(struct archpmu_mux_scratch *s, const struct archpmu_pmu_desc *d,
		     const struct archpmu_event *ev, unsigned int n, u64 absent, u64 busy,
		     u32 *counters, u64 *pool, unsigned int *bad);

/* The counters the rotating groups (not those of @absent) could use. */
u64 archpmu_mux_wanted(const struct archpmu_pmu_desc *d, const struct archpmu_event *ev,
		       unsigned int n, u64 absent);

/* The rotating events whose group can never go on @pool (bit e: event e). */
u64 archpmu_mux_crowded(struct archpmu_mux_scratch *s, const struct archpmu_pmu_desc *d,
			const struct archpmu_event *ev, unsigned int n, u64 absent, u64 pool);

/*
 * One turn: the rotating groups in order from the one led by @first,
 * round to the start, each placed on @pool if it fits beside those placed
 * before it. Sets counters[] of the rotating events (~0U: off the PMU this
 * turn) and leaves the staying ones'. Returns the lead of the first group
 * that did not fit though it could alone, where the next turn begins
 * (@first if there is none).
 */
unsigned int archpmu_mux_turn(struct archpmu_mux_scratch *s, const struct archpmu_pmu_desc *d,
			      const struct archpmu_event *ev, unsigned int n, u64 absent, u64 pool,
			      unsigned int first, u32 *counters);

#endif /* ARCHPMU_MUX_PLAN_H */
