/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A sample ring: one CPU's records of one session, mapped into user space
 * with perf's protocol (uapi/archpmu.h, struct archpmu_ring_page). The
 * producers are the PMI handler (NMI), the sampling tick (hard interrupt),
 * a task session's gate and a START, STOP or CPU-down batch (interrupts
 * off) on the ring's CPU only; all but the first can be interrupted by the
 * NMI, so space is reserved with a cmpxchg and only the outermost writer
 * publishes data_head, as kernel/events/ring_buffer.c does.
 */
#ifndef ARCHPMU_SAMPLE_RING_H
#define ARCHPMU_SAMPLE_RING_H

#include <asm/local.h>
#include <asm/local64.h>
#include <linux/irq_work.h>
#include <linux/mm_types.h>
#include <linux/types.h>
#include <linux/wait.h>

#include "../../uapi/archpmu.h"

struct archpmu_ring {
	struct archpmu_ring_page *page;	/* the control page, then data, mapped from pages[] */
	struct page **pages;		/* map_size / PAGE_SIZE of them, what mmap inserts */
	u8 *data;
	u64 size;			/* data bytes, a power of 2 */
	size_t map_size;		/* control page + data, what mmap maps */
	u64 wakeup_bytes;
	local_t nest;			/* writers on the CPU right now */
	local64_t head;			/* reserved up to here */
	local64_t lost;			/* dropped samples not yet in a LOST record */
	u64 lost_id;			/* the event of the last dropped sample */
	/* The page's counts, kept here too: user space can write the page. */
	u64 throttled;
	u64 unthrottled;
	u64 dropped;
	u64 wakeup_head;		/* data_head at the last wakeup */
	struct irq_work wakeup;		/* wakes the readers outside NMI */
	wait_queue_head_t *wq;
};

/* A record being written: where it goes in the ring. */
struct archpmu_ring_handle {
	struct archpmu_ring *ring;
	u64 offset;
};

int archpmu_ring_alloc(struct archpmu_ring *r, unsigned int cpu, u32 pages,
		       u32 wakeup_bytes, wait_queue_head_t *wq);
/* Insert the ring's pages into @vma, which is map_size long (in mmap). */
int archpmu_ring_map(struct archpmu_ring *r, struct vm_area_struct *vma);
/* After the producers are gone: waits for a queued wakeup, then frees. */
void archpmu_ring_free(struct archpmu_ring *r);

/* On the ring's CPU (NMI or interrupts off). false: no room, counted as lost. */
bool archpmu_ring_begin(struct archpmu_ring_handle *h, struct archpmu_ring *r,
			u32 size);
void archpmu_ring_put(struct archpmu_ring_handle *h, const void *src, u32 len);
/*
 * @len bytes of the current task's user memory at @src, without faulting
 * (copy_from_user_nmi()): those that could be read, the rest zero. Returns
 * how many could be read.
 */
u32 archpmu_ring_put_user(struct archpmu_ring_handle *h, const void __user *src, u32 len);
void archpmu_ring_end(struct archpmu_ring_handle *h);

/* Bytes ready for the reader. */
u64 archpmu_ring_ready(const struct archpmu_ring *r);

#endif /* ARCHPMU_SAMPLE_RING_H */
