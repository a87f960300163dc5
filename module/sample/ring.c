// SPDX-License-Identifier: GPL-2.0
/*
 * Sample rings; ring.h says who writes them. The barriers are perf's
 * (kernel/events/ring_buffer.c, perf_output_put_handle): the reservation's
 * control dependency on data_tail orders the reader's tail store before
 * our data stores (A matches D); smp_wmb() orders the data before data_head
 * (B matches C, the reader's read barrier).
 */
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "ring.h"

static void ring_wakeup(struct irq_work *work)
{
	struct archpmu_ring *r = container_of(work, struct archpmu_ring, wakeup);

	wake_up_all(r->wq);
}

static void ring_pages_free(struct archpmu_ring *r, unsigned long nr)
{
	while (nr--)
		__free_page(r->pages[nr]);
	kvfree(r->pages);
	r->pages = NULL;
}

/*
 * Pages charged to the opener's memory cgroup, and never worth an OOM kill:
 * short of memory, the open is refused (ENOMEM) instead.
 */
#define RING_GFP	(GFP_KERNEL_ACCOUNT | __GFP_ZERO | __GFP_NORETRY | __GFP_NOWARN)

int archpmu_ring_alloc(struct archpmu_ring *r, unsigned int cpu, u32 pages,
		       u32 wakeup_bytes, wait_queue_head_t *wq)
{
	unsigned long i, nr = 1 + (unsigned long)pages;

	r->size = (u64)pages * PAGE_SIZE;
	r->map_size = PAGE_SIZE + r->size;
	r->pages = kvmalloc_array(nr, sizeof(*r->pages), RING_GFP & ~__GFP_ZERO);
	if (!r->pages)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		r->pages[i] = alloc_page(RING_GFP);
		if (!r->pages[i]) {
			ring_pages_free(r, i);
			return -ENOMEM;
		}
	}
	r->page = vmap(r->pages, nr, VM_MAP, PAGE_KERNEL);
	if (!r->page) {
		ring_pages_free(r, nr);
		return -ENOMEM;
	}
	r->data = (u8 *)r->page + PAGE_SIZE;
	r->wakeup_bytes = wakeup_bytes ? min_t(u64, wakeup_bytes, r->size) : r->size / 4;
	local_set(&r->nest, 0);
	local64_set(&r->head, 0);
	local64_set(&r->lost, 0);
	r->wakeup_head = 0;
	r->wq = wq;
	init_irq_work(&r->wakeup, ring_wakeup);
	r->page->version = 1;
	r->page->cpu = cpu;
	r->page->data_offset = PAGE_SIZE;
	r->page->data_size = r->size;
	return 0;
}

int archpmu_ring_map(struct archpmu_ring *r, struct vm_area_struct *vma)
{
	return vm_map_pages_zero(vma, r->pages, r->map_size >> PAGE_SHIFT);
}

void archpmu_ring_free(struct archpmu_ring *r)
{
	if (!r->page)
		return;
	irq_work_sync(&r->wakeup);
	vunmap(r->page);
	r->page = NULL;
	ring_pages_free(r, r->map_size >> PAGE_SHIFT);
}

bool archpmu_ring_begin(struct archpmu_ring_handle *h, struct archpmu_ring *r, u32 size)
{
	u64 tail, offset, head;

	h->ring = r;
	local_inc(&r->nest);
	do {
		tail = READ_ONCE(r->page->data_tail);
		offset = local64_read(&r->head);
		head = offset + size;
		if (unlikely(head - tail > r->size)) {
			archpmu_ring_end(h);
			return false;
		}
	} while (local64_cmpxchg(&r->head, offset, head) != offset);
	h->offset = offset;
	return true;
}

void archpmu_ring_put(struct archpmu_ring_handle *h, const void *src, u32 len)
{
	struct archpmu_ring *r = h->ring;
	u64 at = h->offset & (r->size - 1);
	u32 first = min_t(u64, len, r->size - at);

	memcpy(r->data + at, src, first);
	if (len > first)
		memcpy(r->data, (const u8 *)src + first, len - first);
	h->offset += len;
}

/* Zero bytes @from to @to of what the handle is writing. */
static void ring_zero(struct archpmu_ring_handle *h, u32 from, u32 to)
{
	struct archpmu_ring *r = h->ring;

	while (from < to) {
		u64 at = (h->offset + from) & (r->size - 1);
		u32 piece = min_t(u64, to - from, r->size - at);

		memset(r->data + at, 0, piece);
		from += piece;
	}
}

u32 archpmu_ring_put_user(struct archpmu_ring_handle *h, const void __user *src, u32 len)
{
	struct archpmu_ring *r = h->ring;
	u32 done = 0;

	while (done < len) {
		u64 at = (h->offset + done) & (r->size - 1);
		u32 piece = min_t(u64, len - done, r->size - at);
		u32 missed = copy_from_user_nmi(r->data + at, (const u8 __user *)src + done, piece);

		if (missed) {
			/* What follows an unreadable byte is not read either. */
			done += piece - missed;
			ring_zero(h, done, len);
			break;
		}
		done += piece;
	}
	h->offset += len;
	return done;
}

void archpmu_ring_end(struct archpmu_ring_handle *h)
{
	struct archpmu_ring *r = h->ring;
	u64 head;

again:
	/* Read head only after our nest count is up (perf_output_put_handle). */
	barrier();
	head = local64_read(&r->head);
	/* A nested writer leaves the publishing to the one it interrupted. */
	if (local_read(&r->nest) > 1) {
		local_dec(&r->nest);
		return;
	}
	smp_wmb();	/* B, matches C */
	WRITE_ONCE(r->page->data_head, head);
	/* Published before the nest count drops: a later NMI publishes a newer head. */
	barrier();
	local_set(&r->nest, 0);
	barrier();
	/* A writer that nested after the read above published nothing. */
	if (unlikely(head != local64_read(&r->head))) {
		local_inc(&r->nest);
		goto again;
	}
	if (head - r->wakeup_head >= r->wakeup_bytes) {
		r->wakeup_head = head;
		irq_work_queue(&r->wakeup);
	}
}

u64 archpmu_ring_ready(const struct archpmu_ring *r)
{
	return READ_ONCE(r->page->data_head) - READ_ONCE(r->page->data_tail);
}
