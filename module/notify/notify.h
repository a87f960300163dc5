/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one seam for what a user should hear about (after
 * drivers/thermal/thermal_netlink.h): each archpmu_notify_*() prints the
 * dmesg line and hands the same note to the sink, the netlink family
 * (dev/netlink.c), so the two never disagree. Process context only: what
 * the PMI raises is noted by a work item (sample/), never from NMI.
 */
#ifndef ARCHPMU_NOTIFY_NOTIFY_H
#define ARCHPMU_NOTIFY_NOTIFY_H

#include <linux/types.h>

#include "../../uapi/archpmu_netlink.h"
#include "../own/own.h"

/* One event, as the sink sees it; cmd says which fields mean something. */
struct archpmu_note {
	u8 cmd;				/* ARCHPMU_GENL_EVENT_* */
	const struct archpmu_claims *cl;	/* the session (NULL: UNLOAD) */
	bool running;			/* SESSION_OPEN */
	const struct archpmu_refusal *refusal;	/* REFUSED */
	u32 cpu;
	int err;			/* CPU_ONLINE: 0 or why not resumed */
	u32 counter;			/* FOREIGN_USE */
	u32 msr;
	u64 seen;
	u64 expected;
	u64 count;			/* THROTTLE, UNTHROTTLE, LOST */
	u64 total;
};

typedef void (*archpmu_note_sink)(const struct archpmu_note *note);

/* Set once the sink can send, cleared (NULL) before it goes away. */
void archpmu_notify_set_sink(archpmu_note_sink sink);

/* A session opened (@running: started), closed, started or stopped. */
void archpmu_notify_session(const struct archpmu_claims *cl, u8 cmd, bool running);
/* A COUNT_OPEN of @cl refused with -EBUSY, as cl->refusal says. */
void archpmu_notify_refused(const struct archpmu_claims *cl);
/* Another agent rewrote @counter's control register @msr. */
void archpmu_notify_foreign(const struct archpmu_claims *cl, u32 cpu, u32 counter, u32 msr,
			    u64 seen, u64 expected);
/* @cpu of @cl went offline, or came back (@err: could not be resumed). */
void archpmu_notify_cpu(const struct archpmu_claims *cl, u32 cpu, bool online, int err);
/* THROTTLE, UNTHROTTLE or LOST on @cpu: @count more, @total in all. */
void archpmu_notify_sampling(const struct archpmu_claims *cl, u8 cmd, u32 cpu, u64 count,
			     u64 total);
void archpmu_notify_unload(void);

#endif /* ARCHPMU_NOTIFY_NOTIFY_H */
