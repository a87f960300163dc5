// SPDX-License-Identifier: GPL-2.0
/*
 * Following a task session's tasks. The scheduler's tracepoints, reached
 * through for_each_kernel_tracepoint() (a module cannot name them), are
 * probed from the first task session until the module unloads (they return
 * at once while no task session exists):
 *
 *  - sched_switch, on the CPU, under its runqueue lock with interrupts
 *    disabled: the outgoing task's sessions close their gate on this CPU,
 *    the incoming one's open it (gate.c). Preempt notifiers would attach
 *    only to current; the switch probe follows any task, so a session can be
 *    opened on another process or on a child that has not run yet.
 *  - sched_process_fork, in the parent with preemption disabled: with
 *    ARCHPMU_TASK_INHERIT the child joins its parent's sessions, before it
 *    first runs.
 *
 * The probes allocate nothing and take only the raw spinlock below. A child
 * takes an entry from its session's pool; the pool is refilled, and the
 * entries of tasks that have exited are reaped, by a work item the probes
 * kick through an irq_work (waking a worker under a runqueue lock could
 * deadlock). A task's entry holds a reference to it until it is reaped after
 * a grace period, so the hash never names a freed task.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hashtable.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/coredump.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#include "../compat.h"
#include "task.h"

#define POOL_LEN	64
#define POOL_LOW	(POOL_LEN / 2)
#define POOL_MAX	ARCHPMU_TASK_POOL_MAX

/* Guards the hash's changes, every session's list, pool and closing flag. */
static DEFINE_RAW_SPINLOCK(targets_lock);
static DEFINE_HASHTABLE(targets, 10);

/* Test-only (debugfs task_pool_max): 0 leaves every child unfollowed. */
unsigned int archpmu_task_pool_max = POOL_MAX;

static struct tracepoint *tp_switch, *tp_fork, *tp_exec;
static DEFINE_MUTEX(probes_mutex);
static unsigned int probes_users;	/* task sessions; the probes skip all work at 0 */
static bool probes_registered;

struct archpmu_task_target *archpmu_task_target_new(const struct archpmu_task *t, gfp_t gfp)
{
	struct archpmu_task_target *e;

	/* Zeroed: a task new to the session (struct archpmu_sampling_hooks). */
	return kzalloc(size_add(struct_size(e, carry, 0), t->carry_size), gfp);
}

void archpmu_task_target_put(struct archpmu_task_target *e)
{
	if (e->task)
		put_task_struct(e->task);
	kfree(e);
}

int archpmu_task_fill_pool(struct archpmu_task *t, unsigned int len)
{
	struct archpmu_task_target *e;
	unsigned long flags;

	len = min(len, READ_ONCE(archpmu_task_pool_max));
	for (;;) {
		raw_spin_lock_irqsave(&targets_lock, flags);
		if (t->closing || t->pool_len >= len) {
			raw_spin_unlock_irqrestore(&targets_lock, flags);
			return 0;
		}
		raw_spin_unlock_irqrestore(&targets_lock, flags);
		e = archpmu_task_target_new(t, GFP_KERNEL);
		if (!e)
			return -ENOMEM;
		raw_spin_lock_irqsave(&targets_lock, flags);
		list_add(&e->snode, &t->pool);
		t->pool_len++;
		raw_spin_unlock_irqrestore(&targets_lock, flags);
	}
}

static void *carry_of(struct archpmu_task_target *e)
{
	return e->owner->carry_size ? e->carry : NULL;
}

/*
 * @next is one of @t's tasks too: @t's counters go on across the switch, as
 * perf leaves a context alone for an equivalent one. Not when it samples: each
 * task carries its own period.
 */
static bool same_session(const struct archpmu_task *t, struct task_struct *next)
{
	struct archpmu_task_target *e;

	if (t->carry_size)
		return false;
	hash_for_each_possible_rcu_notrace(targets, e, hnode, (unsigned long)next)
		if (e->task == next && e->owner == t && !READ_ONCE(e->dead))
			return true;
	return false;
}

static void probe_switch(void *data, bool preempt, struct task_struct *prev,
			 struct task_struct *next, unsigned int prev_state)
{
	unsigned int cpu = smp_processor_id();
	struct archpmu_task_target *e;
	struct archpmu_claims *cl;
	struct archpmu_claim *c;

	if (!READ_ONCE(probes_users))
		return;
	hash_for_each_possible_rcu_notrace(targets, e, hnode, (unsigned long)prev) {
		if (e->task != prev)
			continue;
		cl = e->owner->cl;
		c = archpmu_claims_on_cpu(cl, cpu);
		/* Left open, it is open for @next below (or a gate sync closes it). */
		if (c && !same_session(e->owner, next))
			archpmu_task_gate_local(cl, c, false, carry_of(e));
		if (prev_state & TASK_DEAD) {
			WRITE_ONCE(e->dead, true);
			irq_work_queue(&e->owner->kick);
		}
	}
	hash_for_each_possible_rcu_notrace(targets, e, hnode, (unsigned long)next) {
		if (e->task != next || READ_ONCE(e->dead))
			continue;
		cl = e->owner->cl;
		if (!archpmu_task_running(e->owner) || READ_ONCE(cl->suspended))
			continue;
		c = archpmu_claims_on_cpu(cl, cpu);
		if (c && READ_ONCE(c->programmed))
			archpmu_task_gate_local(cl, c, true, carry_of(e));
	}
}

/* Under the lock: @child joins @t, from the pool. */
static void follow_child(struct archpmu_task *t, struct task_struct *child)
{
	struct archpmu_task_target *e;

	if (t->closing)
		return;
	e = list_first_entry_or_null(&t->pool, struct archpmu_task_target, snode);
	if (!e) {
		WRITE_ONCE(t->missed, t->missed + 1);
		return;
	}
	t->forks++;
	list_move(&e->snode, &t->targets);
	t->pool_len--;
	get_task_struct(child);
	e->task = child;
	e->owner = t;
	e->dead = false;
	memset(e->carry, 0, t->carry_size);
	hash_add_rcu(targets, &e->hnode, (unsigned long)child);
	if (t->pool_len < POOL_LOW)
		irq_work_queue(&t->kick);
}

static void probe_fork(void *data, struct task_struct *parent, struct task_struct *child)
{
	struct archpmu_task_target *e;
	unsigned long flags;

	if (!READ_ONCE(probes_users))
		return;
	hash_for_each_possible_rcu_notrace(targets, e, hnode, (unsigned long)parent) {
		/* One that left (a set-id exec) is not followed into its children. */
		if (e->task != parent || READ_ONCE(e->dead) ||
		    !(e->owner->flags & ARCHPMU_TASK_INHERIT))
			continue;
		raw_spin_lock_irqsave(&targets_lock, flags);
		follow_child(e->owner, child);
		raw_spin_unlock_irqrestore(&targets_lock, flags);
	}
}

/*
 * In the task that execs, on its CPU. An armed session (enable-on-exec)
 * starts here. A task that execs an image it may not be read in (set-id, or
 * otherwise not dumpable) leaves its sessions, as perf's events leave it:
 * the rule that let the caller count it no longer holds. Interrupts are off
 * from the state change to the gate, so a STOP's gate round comes after.
 */
static void probe_exec(void *data, struct task_struct *p, pid_t old_pid,
		       struct linux_binprm *bprm)
{
	unsigned int cpu = smp_processor_id();
	struct archpmu_task_target *e;
	struct archpmu_claims *cl;
	struct archpmu_claim *c;
	bool leave;

	if (!READ_ONCE(probes_users) || !p->mm)
		return;
	leave = !archpmu_task_dumpable(p, NULL);
	hash_for_each_possible_rcu_notrace(targets, e, hnode, (unsigned long)p) {
		if (e->task != p || READ_ONCE(e->dead))
			continue;
		cl = e->owner->cl;
		local_irq_disable();
		c = archpmu_claims_on_cpu(cl, cpu);
		if (leave) {
			WRITE_ONCE(e->dead, true);
			if (c)
				archpmu_task_gate_local(cl, c, false, carry_of(e));
		} else if (cmpxchg(&e->owner->state, ARCHPMU_TASK_ARMED,
				   ARCHPMU_TASK_RUNNING) == ARCHPMU_TASK_ARMED) {
			WRITE_ONCE(e->owner->exec_seen, true);
			if (c && READ_ONCE(c->programmed) && !READ_ONCE(cl->suspended))
				archpmu_task_gate_local(cl, c, true, carry_of(e));
		}
		local_irq_enable();
		if (leave)
			irq_work_queue(&e->owner->kick);
	}
}

bool archpmu_task_here(const struct archpmu_task *t, void **carry)
{
	struct archpmu_task_target *e;

	hash_for_each_possible_rcu_notrace(targets, e, hnode, (unsigned long)current) {
		if (e->task == current && e->owner == t && !READ_ONCE(e->dead)) {
			*carry = carry_of(e);
			return true;
		}
	}
	*carry = NULL;
	return false;
}

void archpmu_task_attach(struct archpmu_task *t)
{
	struct archpmu_task_target *e;
	unsigned long flags;
	bool dead = false;

	raw_spin_lock_irqsave(&targets_lock, flags);
	list_for_each_entry(e, &t->targets, snode)
		hash_add_rcu(targets, &e->hnode, (unsigned long)e->task);
	/* One that exited before it was on the hash had its last switch unseen. */
	list_for_each_entry(e, &t->targets, snode) {
		if (e->task->exit_state) {
			e->dead = true;
			dead = true;
		}
	}
	raw_spin_unlock_irqrestore(&targets_lock, flags);
	/* On the hash: an exec from now on meets the exec probe. */
	archpmu_task_exec_unlock(t);
	if (dead)
		schedule_work(&t->tend);
}

/* Reap the dead (after a grace period, no probe sees them) and refill the pool. */
static void tend_fn(struct work_struct *work)
{
	struct archpmu_task *t = container_of(work, struct archpmu_task, tend);
	struct archpmu_task_target *e, *tmp;
	unsigned long flags;
	LIST_HEAD(reaped);

	raw_spin_lock_irqsave(&targets_lock, flags);
	/* Detach has taken every entry off the hash: deleting one again would fault. */
	if (t->closing) {
		raw_spin_unlock_irqrestore(&targets_lock, flags);
		return;
	}
	list_for_each_entry_safe(e, tmp, &t->targets, snode) {
		if (!READ_ONCE(e->dead))
			continue;
		hash_del_rcu(&e->hnode);
		list_move(&e->snode, &reaped);
	}
	raw_spin_unlock_irqrestore(&targets_lock, flags);
	if (!list_empty(&reaped)) {
		synchronize_rcu();
		list_for_each_entry_safe(e, tmp, &reaped, snode) {
			put_task_struct(e->task);
			e->task = NULL;
			raw_spin_lock_irqsave(&targets_lock, flags);
			list_move(&e->snode, &t->pool);
			t->pool_len++;
			raw_spin_unlock_irqrestore(&targets_lock, flags);
		}
	}
	/* What was forked since the last fill, twice over: a fork storm grows the pool. */
	if (t->flags & ARCHPMU_TASK_INHERIT) {
		unsigned int forks;

		raw_spin_lock_irqsave(&targets_lock, flags);
		forks = t->forks;
		t->forks = 0;
		raw_spin_unlock_irqrestore(&targets_lock, flags);
		archpmu_task_fill_pool(t, max_t(unsigned int, POOL_LEN,
						min_t(unsigned int, 2 * forks, POOL_MAX)));
	}
}

static void kick_fn(struct irq_work *w)
{
	struct archpmu_task *t = container_of(w, struct archpmu_task, kick);

	schedule_work(&t->tend);
}

void archpmu_task_scope_init(struct archpmu_task *t)
{
	INIT_LIST_HEAD(&t->targets);
	INIT_LIST_HEAD(&t->pool);
	t->kick = IRQ_WORK_INIT_HARD(kick_fn);
	INIT_WORK(&t->tend, tend_fn);
}

int archpmu_task_pool_init(struct archpmu_task *t)
{
	return archpmu_task_fill_pool(t, POOL_LEN);
}

void archpmu_task_detach(struct archpmu_task *t)
{
	struct archpmu_task_target *e;
	unsigned long flags;

	if (!t)
		return;
	raw_spin_lock_irqsave(&targets_lock, flags);
	t->closing = true;
	list_for_each_entry(e, &t->targets, snode)
		if (!hlist_unhashed(&e->hnode))
			hash_del_rcu(&e->hnode);
	raw_spin_unlock_irqrestore(&targets_lock, flags);
	/* No probe still runs with an entry of ours, nor queues the tending. */
	synchronize_rcu();
	irq_work_sync(&t->kick);
	cancel_work_sync(&t->tend);
}

void archpmu_task_free(struct archpmu_task *t)
{
	struct archpmu_task_target *e, *tmp;

	if (!t)
		return;
	archpmu_task_exec_unlock(t);
	list_for_each_entry_safe(e, tmp, &t->targets, snode)
		archpmu_task_target_put(e);
	list_for_each_entry_safe(e, tmp, &t->pool, snode)
		archpmu_task_target_put(e);
	kvfree(t->cpus);
	kfree(t);
	archpmu_task_probes_put();
}

/*
 * The probes are registered with the first task session and stay until the
 * module unloads: each registration live-patches the scheduler's hottest
 * code (under QEMU/TCG a patch racing the other CPUs' context switches was
 * seen to hang them), so it happens once, not at every session.
 */
int archpmu_task_probes_get(void)
{
	int ret = 0;

	mutex_lock(&probes_mutex);
	if (!probes_registered) {
		ret = tracepoint_probe_register(tp_switch, probe_switch, NULL);
		if (ret)
			goto out;
		ret = tracepoint_probe_register(tp_fork, probe_fork, NULL);
		if (ret)
			goto err_switch;
		ret = tracepoint_probe_register(tp_exec, probe_exec, NULL);
		if (ret)
			goto err_fork;
		probes_registered = true;
	}
	WRITE_ONCE(probes_users, probes_users + 1);
	goto out;

err_fork:
	tracepoint_probe_unregister(tp_fork, probe_fork, NULL);
err_switch:
	tracepoint_probe_unregister(tp_switch, probe_switch, NULL);
	tracepoint_synchronize_unregister();
out:
	mutex_unlock(&probes_mutex);
	return ret;
}

void archpmu_task_probes_put(void)
{
	mutex_lock(&probes_mutex);
	WRITE_ONCE(probes_users, probes_users - 1);
	mutex_unlock(&probes_mutex);
}

static void find_tracepoint(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_switch"))
		tp_switch = tp;
	else if (!strcmp(tp->name, "sched_process_fork"))
		tp_fork = tp;
	else if (!strcmp(tp->name, "sched_process_exec"))
		tp_exec = tp;
}

void archpmu_task_init(void)
{
	for_each_kernel_tracepoint(find_tracepoint, NULL);
	if (!tp_switch || !tp_fork || !tp_exec) {
		pr_warn("the scheduler's tracepoints are missing: no task sessions\n");
		tp_switch = NULL;
	}
}

void archpmu_task_exit(void)
{
	WARN_ON(probes_users);
	if (!probes_registered)
		return;
	tracepoint_probe_unregister(tp_exec, probe_exec, NULL);
	tracepoint_probe_unregister(tp_fork, probe_fork, NULL);
	tracepoint_probe_unregister(tp_switch, probe_switch, NULL);
	/* The module text the probes run must outlive their last call. */
	tracepoint_synchronize_unregister();
	probes_registered = false;
}

bool archpmu_task_supported(void)
{
	return tp_switch;
}
