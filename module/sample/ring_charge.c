// SPDX-License-Identifier: GPL-2.0
/*
 * What sampling rings may pin. perf bounds its rings with a per-user
 * allowance of perf_event_mlock_kb per online CPU and RLIMIT_MEMLOCK beyond
 * it (kernel/events/core.c, perf_mmap); archpmu does the same with an
 * allowance of its own, ring_mlock_kb, and charges what goes beyond it to
 * the user's locked_vm as io_uring does (io_uring/rsrc.c), since a session
 * outlives the process that opened it. A caller with CAP_IPC_LOCK is not
 * bounded, nor charged beyond the allowance. On kernels where perf counts
 * its own allowance in locked_vm too (6.12, for one), perf's rings of the
 * same user take from the RLIMIT_MEMLOCK room, as io_uring's do.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/list.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/slab.h>

#include "sample.h"

static uint ring_mlock_kb = 516;
module_param(ring_mlock_kb, uint, 0644);
MODULE_PARM_DESC(ring_mlock_kb,
		 "Sampling ring memory each user may pin per online CPU before RLIMIT_MEMLOCK applies, in KiB (default 516, as perf's perf_event_mlock_kb)");

/* Pages each user has on the allowance; an entry while it has any. */
struct allowance_use {
	struct list_head node;
	struct user_struct *user;	/* a charge holding pages here holds a reference */
	unsigned long pages;
};

/* Taken under cpus_read_lock() and archpmu_own_lock, and nothing under it. */
static DEFINE_MUTEX(allowance_lock);
static LIST_HEAD(allowance_users);

static struct allowance_use *use_of(struct user_struct *user)
{
	struct allowance_use *u;

	list_for_each_entry(u, &allowance_users, node)
		if (u->user == user)
			return u;
	return NULL;
}

/* Take @u off the list once it holds no pages; it is then the caller's to free. */
static struct allowance_use *unlist_if_empty(struct allowance_use *u)
{
	if (u->pages)
		return NULL;
	list_del(&u->node);
	return u;
}

static unsigned long allowance_pages(void)
{
	return ((unsigned long)READ_ONCE(ring_mlock_kb) >> (PAGE_SHIFT - 10)) *
	       num_online_cpus();
}

/* @pages more on @user->locked_vm, within RLIMIT_MEMLOCK. */
static int charge_locked_vm(struct user_struct *user, unsigned long pages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	unsigned long cur = atomic_long_read(&user->locked_vm);

	do {
		if (cur + pages > limit)
			return -ENOMEM;
	} while (!atomic_long_try_cmpxchg(&user->locked_vm, &cur, cur + pages));
	return 0;
}

int archpmu_ring_charge(struct archpmu_ring_charge *ch, unsigned long pages)
{
	struct user_struct *user = get_current_user();
	bool unbounded = capable(CAP_IPC_LOCK);
	struct allowance_use *u, *spare;
	unsigned long room, mine;
	int ret = 0;

	spare = kzalloc(sizeof(*spare), GFP_KERNEL);
	if (!spare) {
		free_uid(user);
		return -ENOMEM;
	}
	mutex_lock(&allowance_lock);
	u = use_of(user);
	if (!u) {
		swap(u, spare);
		u->user = user;
		list_add(&u->node, &allowance_users);
	}
	room = allowance_pages();
	room = u->pages < room ? room - u->pages : 0;
	mine = min(pages, room);
	if (pages > mine && !unbounded)
		ret = charge_locked_vm(user, pages - mine);
	if (!ret)
		u->pages += mine;
	else
		pr_info_ratelimited("%s[%d]: sampling rings of %lu KiB refused: over the locked-memory limits (ring_mlock_kb=%u per CPU for uid %u, %lu KiB of it left; then RLIMIT_MEMLOCK %lu KiB, 'ulimit -l'; CAP_IPC_LOCK lifts it)\n",
				    current->comm, task_pid_nr(current), pages << (PAGE_SHIFT - 10),
				    READ_ONCE(ring_mlock_kb),
				    from_kuid(&init_user_ns, current_uid()),
				    room << (PAGE_SHIFT - 10), rlimit(RLIMIT_MEMLOCK) >> 10);
	/* A new entry (spare went into it) that got no pages leaves again. */
	if (!spare)
		spare = unlist_if_empty(u);
	mutex_unlock(&allowance_lock);
	kfree(spare);
	if (ret) {
		free_uid(user);
		return ret;
	}
	ch->user = user;
	ch->allowance = mine;
	ch->locked = unbounded ? 0 : pages - mine;
	return 0;
}

void archpmu_ring_uncharge(struct archpmu_ring_charge *ch)
{
	struct allowance_use *u, *gone = NULL;

	if (!ch->user)
		return;
	atomic_long_sub(ch->locked, &ch->user->locked_vm);
	mutex_lock(&allowance_lock);
	u = use_of(ch->user);
	if (u) {
		u->pages -= min(u->pages, ch->allowance);
		gone = unlist_if_empty(u);
	}
	mutex_unlock(&allowance_lock);
	kfree(gone);
	free_uid(ch->user);
	ch->user = NULL;
}
