// SPDX-License-Identifier: GPL-2.0
/*
 * The tasks of a task session and the caller's right to count them.
 *
 * The kernel's ptrace_may_access() is not exported, so the rule is the
 * module's own, documented in uapi/archpmu.h, after __ptrace_may_access()
 * in PTRACE_MODE_READ_REALCREDS mode (what perf_event_open() asks): the
 * caller's own thread group; or the caller's real uid and gid equal to each
 * of the task's uids and gids, with a dumpable task; or CAP_SYS_PTRACE in the
 * task's user namespace. No security module is asked.
 */
#include <linux/cred.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/sched/coredump.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/rwsem.h>
#include <linux/slab.h>
#include <linux/user_namespace.h>

#include "../compat.h"
#include "task.h"

unsigned int archpmu_task_open_delay_ms;

static bool may_read(struct task_struct *task)
{
	const struct cred *cred = current_cred(), *tcred;
	struct user_namespace *mm_ns = NULL;
	bool ok, dumpable = true;

	if (same_thread_group(task, current))
		return true;
	tcred = get_task_cred(task);
	ok = uid_eq(cred->uid, tcred->euid) && uid_eq(cred->uid, tcred->suid) &&
	     uid_eq(cred->uid, tcred->uid) && gid_eq(cred->gid, tcred->egid) &&
	     gid_eq(cred->gid, tcred->sgid) && gid_eq(cred->gid, tcred->gid);
	if (!ok)
		ok = ns_capable(tcred->user_ns, CAP_SYS_PTRACE);
	put_cred(tcred);
	if (!ok)
		return false;
	task_lock(task);
	if (task->mm)
		dumpable = archpmu_task_dumpable(task, &mm_ns);
	task_unlock(task);
	if (dumpable)
		return true;
	ok = ns_capable(mm_ns, CAP_SYS_PTRACE);
	put_user_ns(mm_ns);
	return ok;
}

/* The thread @tid in the caller's PID namespace (0: the caller), referenced. */
static struct task_struct *find_thread(u32 tid)
{
	struct task_struct *p;
	struct pid *pid;

	if (!tid) {
		get_task_struct(current);
		return current;
	}
	if (tid > PID_MAX_LIMIT)
		return NULL;
	pid = find_get_pid(tid);
	p = get_pid_task(pid, PIDTYPE_PID);
	put_pid(pid);
	return p;
}

/* @p, or with ARCHPMU_TASK_PROCESS every thread of its process, as entries. */
static int add_targets(struct archpmu_task *t, struct task_struct *p)
{
	struct archpmu_task_target *e, *tmp;
	struct task_struct *thread;
	unsigned int n, i = 0;
	LIST_HEAD(spare);

	n = t->flags & ARCHPMU_TASK_PROCESS ? get_nr_threads(p) + 16 : 1;
	for (i = 0; i < n; i++) {
		e = archpmu_task_target_new(t, GFP_KERNEL);
		if (!e)
			goto err;
		e->owner = t;
		list_add(&e->snode, &spare);
	}
	rcu_read_lock();
	if (!(t->flags & ARCHPMU_TASK_PROCESS)) {
		e = list_first_entry(&spare, struct archpmu_task_target, snode);
		get_task_struct(p);
		e->task = p;
		list_move(&e->snode, &t->targets);
	} else {
		/* Threads created meanwhile beyond the spare ones are left out, as perf's. */
		for_each_thread(p, thread) {
			e = list_first_entry_or_null(&spare, struct archpmu_task_target, snode);
			if (!e)
				break;
			if (thread->exit_state || (thread->flags & PF_EXITING))
				continue;
			get_task_struct(thread);
			e->task = thread;
			list_move(&e->snode, &t->targets);
		}
	}
	rcu_read_unlock();
err:
	list_for_each_entry_safe(e, tmp, &spare, snode)
		archpmu_task_target_put(e);
	if (list_empty(&t->targets))
		return i < n ? -ENOMEM : -ESRCH;	/* every thread exited meanwhile */
	return 0;
}

/* With ARCHPMU_TASK_PROCESS each thread is checked: threads may differ in credentials. */
static bool may_read_targets(struct archpmu_task *t)
{
	struct archpmu_task_target *e;

	list_for_each_entry(e, &t->targets, snode)
		if (!may_read(e->task))
			return false;
	return true;
}

/* Alive: the thread, or with ARCHPMU_TASK_PROCESS any thread of its process. */
static bool alive(struct task_struct *p, u32 flags)
{
	if (p->flags & PF_KTHREAD)
		return false;
	if (flags & ARCHPMU_TASK_PROCESS)
		return !(READ_ONCE(p->signal->flags) & SIGNAL_GROUP_EXIT) &&
		       atomic_read(&p->signal->live) > 0;
	return !(p->flags & PF_EXITING);
}

struct archpmu_task *archpmu_task_create(const struct archpmu_count_open *cmd, size_t carry_size)
{
	struct task_struct *p = NULL;
	struct archpmu_task *t;
	int ret;

	if (!(cmd->flags & ARCHPMU_COUNT_OPEN_TASK)) {
		if (cmd->task_pid || cmd->task_flags)
			return ERR_PTR(-EINVAL);
		return NULL;
	}
	if (cmd->task_flags & ~(ARCHPMU_TASK_INHERIT | ARCHPMU_TASK_PROCESS |
				ARCHPMU_TASK_ENABLE_ON_EXEC))
		return ERR_PTR(-EINVAL);
	if (!archpmu_task_supported())
		return ERR_PTR(-EOPNOTSUPP);
	p = find_thread(cmd->task_pid);
	if (!p)
		return ERR_PTR(-ESRCH);
	/*
	 * As perf_event_open: from the permission check until its threads are
	 * where the exec probe sees them (archpmu_task_attach), the target
	 * cannot exec, and so cannot change its credentials or dumpability.
	 */
	ret = down_read_interruptible(&p->signal->exec_update_lock);
	if (ret)
		goto err_put;
	ret = -ESRCH;
	if (!alive(p, cmd->task_flags))
		goto err_unlock;
	ret = -EACCES;
	if (!may_read(p))
		goto err_unlock;
	ret = -ENOMEM;
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		goto err_unlock;
	archpmu_task_scope_init(t);
	t->flags = cmd->task_flags;
	t->carry_size = carry_size;
	ret = archpmu_task_probes_get();
	if (ret) {
		kfree(t);
		goto err_unlock;
	}
	t->exec_locked = p;	/* archpmu_task_free() unlocks from here on */
	ret = add_targets(t, p);
	if (!ret && !may_read_targets(t))
		ret = -EACCES;
	/* Tests widen the window an exec of the target could race into. */
	if (!ret && READ_ONCE(archpmu_task_open_delay_ms))
		msleep(READ_ONCE(archpmu_task_open_delay_ms));
	if (!ret && (t->flags & ARCHPMU_TASK_INHERIT))
		ret = archpmu_task_pool_init(t);
	if (!(t->flags & (ARCHPMU_TASK_INHERIT | ARCHPMU_TASK_PROCESS)))
		t->only = p;
	if (ret) {
		archpmu_task_free(t);
		return ERR_PTR(ret);
	}
	return t;

err_unlock:
	up_read(&p->signal->exec_update_lock);
err_put:
	put_task_struct(p);
	return ERR_PTR(ret);
}

bool archpmu_task_is_only_current(const struct archpmu_task *t)
{
	return t && t->only == current;
}

void archpmu_task_exec_unlock(struct archpmu_task *t)
{
	struct task_struct *p = t->exec_locked;

	if (!p)
		return;
	t->exec_locked = NULL;
	up_read(&p->signal->exec_update_lock);
	put_task_struct(p);
}
