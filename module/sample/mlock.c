// SPDX-License-Identifier: GPL-2.0
/*
 * What sampling rings may pin, charged as perf charges its rings
 * (kernel/events/core.c, perf_mmap): each user has an allowance of
 * ring_mlock_kb per online CPU (perf's perf_event_mlock_kb, 516 by
 * default); pages beyond it are charged to the user's locked_vm, which
 * RLIMIT_MEMLOCK bounds unless the opener has CAP_IPC_LOCK. The charge is
 * taken before the rings are allocated and given back when they are freed.
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
		 "Sampling ring memory each user may pin per online CPU beyond RLIMIT_MEMLOCK, in KiB (default 516, perf's perf_event_mlock_kb)");

/* Pages each user has charged to the allowance; an entry per user with rings. */
struct allowance_use {
	struct list_head node;
	struct user_struct *user;
	unsigned long pages;
};

static LIST_HEAD(allowance_users);
static DEFINE_MUTEX(allowance_lock);

static struct allowance_use *use_of(struct user_struct *user)
{
	struct allowance_use *u;

	list_for_each_entry(u, &allowance_users, node)
		if (u->user == user)
			return u;
	return NULL;
}

static unsigned long allowance_pages(void)
{
	return ((unsigned long)READ_ONCE(ring_mlock_kb) >> (PAGE_SHIFT - 10)) *
	       num_online_cpus();
}

/* The part of @pages over RLIMIT_MEMLOCK, charged to @user->locked_vm. */
static int charge_locked(struct user_struct *user, unsigned long pages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	unsigned long cur = atomic_long_read(&user->locked_vm);

	do {
		if (cur + pages > limit && !capable(CAP_IPC_LOCK))
			return -ENOMEM;
	} while (!atomic_long_try_cmpxchg(&user->locked_vm, &cur, cur + pages));
	return 0;
}

int archpmu_ring_charge(struct archpmu_ring_charge *ch, unsigned long pages)
{
	struct user_struct *user = get_current_user();
	struct allowance_use *u, *fresh;
	unsigned long room, mine;
	int ret;

	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL);
	if (!fresh) {
		free_uid(user);
		return -ENOMEM;
	}
	mutex_lock(&allowance_lock);
	u = use_of(user);
	if (!u) {
		u = fresh;
		fresh = NULL;
		u->user = user;
		list_add(&u->node, &allowance_users);
	}
	room = allowance_pages();
	room = u->pages < room ? room - u->pages : 0;
	mine = min(pages, room);
	ret = charge_locked(user, pages - mine);
	if (ret) {
		pr_info_ratelimited("%s[%d]: sampling rings of %lu KiB refused: over the locked-memory limits (ring_mlock_kb=%u per CPU for uid %u, %lu KiB of it free; then RLIMIT_MEMLOCK %lu KiB, 'ulimit -l'; CAP_IPC_LOCK lifts it)\n",
				    current->comm, task_pid_nr(current), pages << (PAGE_SHIFT - 10),
				    READ_ONCE(ring_mlock_kb),
				    from_kuid(&init_user_ns, current_uid()),
				    room << (PAGE_SHIFT - 10), rlimit(RLIMIT_MEMLOCK) >> 10);
		if (!u->pages) {
			list_del(&u->node);
			fresh = u;
		}
		mutex_unlock(&allowance_lock);
		kfree(fresh);
		free_uid(user);
		return ret;
	}
	u->pages += mine;
	if (!u->pages) {	/* an allowance of 0: all of it on locked_vm */
		list_del(&u->node);
		fresh = u;
	}
	mutex_unlock(&allowance_lock);
	kfree(fresh);
	ch->user = user;
	ch->allowance = mine;
	ch->locked = pages - mine;
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
		if (!u->pages) {
			list_del(&u->node);
			gone = u;
		}
	}
	mutex_unlock(&allowance_lock);
	kfree(gone);
	free_uid(ch->user);
	ch->user = NULL;
}
