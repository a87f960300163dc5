/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Counting rules: which events a CPU's PMU accepts, and which counter each
 * event gets. Portable: the unit tests drive it directly.
 */
#ifndef ARCHPMU_ALLOC_H
#define ARCHPMU_ALLOC_H

#include "../pmu/arch_pmu.h"

/* 0, or the -errno that refuses @ev on a CPU described by @d. */
int archpmu_check_event(const struct archpmu_pmu_desc *d,
			const struct archpmu_event *ev);

/*
 * Assign a counter to each of @n events on a CPU described by @d, avoiding
 * the counters in @busy (held by others); the events in @absent (bit e) get
 * none (ARCHPMU_NO_COUNTER). Fills counters[]; returns 0, or the -errno
 * with *bad the index of the event that did not fit.
 */
int archpmu_allocate(const struct archpmu_pmu_desc *d,
		     const struct archpmu_event *ev, unsigned int n, u64 absent,
		     u64 busy, u32 *counters, unsigned int *bad);

/*
 * Does a CPU described by @d lack @ev altogether (a hybrid part's other core
 * type): an architectural event it marks unavailable, or a fixed counter's
 * own event without that counter?
 */
bool archpmu_event_absent(const struct archpmu_pmu_desc *d, const struct archpmu_event *ev);

/* The counters (busy-mask bits) event @ev could be placed on, on a free PMU. */
u64 archpmu_candidate_counters(const struct archpmu_pmu_desc *d,
			       const struct archpmu_event *ev);

/*
 * archpmu_check_event() for each of @n events on a CPU described by @d; with
 * @absent_ok, events the CPU lacks (archpmu_event_absent()) are set in
 * *@absent instead of refused, and so are, always, events for another core
 * type (archpmu_event_elsewhere()). 0, or the -errno with *@bad the event.
 */
int archpmu_check_events(const struct archpmu_pmu_desc *d,
			 const struct archpmu_event *ev, unsigned int n,
			 bool absent_ok, u64 *absent, unsigned int *bad);

/* @ev counts on another core type than @d's (uapi: ARCHPMU_EVENT_CORE_TYPE). */
static inline bool archpmu_event_elsewhere(const struct archpmu_pmu_desc *d,
					   const struct archpmu_event *ev)
{
	u32 type = (ev->flags & ARCHPMU_EVENT_CORE_TYPE) >> ARCHPMU_EVENT_CORE_TYPE_SHIFT;

	return type && type != d->core_type;
}

/*
 * Events for one core type (uapi), checked as a whole before any CPU's: a
 * group's events have its leader's type.
 */
int archpmu_check_core_types(const struct archpmu_event *ev, unsigned int n, unsigned int *bad);

/*
 * Top-down metric events (uapi): ride on the slots event's fixed counter 3.
 * A session's metric events are checked as a whole by
 * archpmu_check_metrics(), before any CPU's events.
 */
int archpmu_check_metrics(const struct archpmu_event *ev, unsigned int n, bool sampling,
			  unsigned int *bad);

/* The PERF_METRICS field a top-down metric event adds up, or -1. */
static inline int archpmu_metric_field(u64 config)
{
	u32 umask = archpmu_event_code(config) >> 8;

	if (config & ARCHPMU_EVTSEL_EVENT || umask < ARCHPMU_METRIC_UMASK ||
	    umask >= ARCHPMU_METRIC_UMASK + ARCHPMU_NR_METRICS)
		return -1;
	return umask - ARCHPMU_METRIC_UMASK;
}

static inline bool archpmu_counter_is_metric(u32 counter)
{
	return counter != ARCHPMU_NO_COUNTER && (counter & ARCHPMU_COUNTER_METRICS);
}

/*
 * The counter's bit in a busy mask and in IA32_PERF_GLOBAL_CTRL: a metric
 * event's is PERF_METRICS' enable, bit 48.
 */
static inline u64 archpmu_counter_bit(u32 counter)
{
	u32 idx = counter & 0xff;

	if (archpmu_counter_is_metric(counter))
		return ARCHPMU_GLOBAL_PERF_METRICS;
	if (counter & ARCHPMU_COUNTER_FIXED)
		return idx < ARCHPMU_NR_FIXED ? BIT_ULL(ARCHPMU_BUSY_FIXED_SHIFT + idx) : 0;
	return counter < ARCHPMU_NR_GP ? BIT_ULL(counter) : 0;
}

#endif /* ARCHPMU_ALLOC_H */
