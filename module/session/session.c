// SPDX-License-Identifier: GPL-2.0
/*
 * The lifecycle of a counting session (uapi/archpmu.h, ARCHPMU_IOC_COUNT_*).
 *
 * COUNT_OPEN validates every event against every CPU's enumeration,
 * allocates counters per CPU and reserves the GP counters against perf
 * (own/plan.c), then on each CPU reads what the PMU holds, refusing counters
 * another agent uses, and programs the counters stopped (own/claim.c): all
 * or nothing. The session then becomes a file of its own (session_fd.c);
 * its release stops the counters and puts back what the PMU held before.
 *
 * Locking: the session's lock (its file's commands), then cpus_read_lock(),
 * then archpmu_own_lock, then (sampling) the ring allowance's lock. User
 * memory is never touched under cpus_read_lock() or archpmu_own_lock: a
 * page that faults slowly (userfaultfd, a network file) would stall every
 * other session and all CPU hotplug. Inputs are copied in before the locks
 * are taken, results copied out after they are dropped.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/file.h>
#include <linux/ktime.h>
#include <linux/nospec.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "../compat.h"
#include "../notify/notify.h"
#include "session.h"

LIST_HEAD(archpmu_sessions);

/* Taken under archpmu_own_lock, so archpmu_sessions is in order of id. */
static atomic64_t session_ids = ATOMIC64_INIT(0);

/*
 * An unload is asked for (sysfs unloading): no session opens, so that the
 * module's users fall to none as the sessions that watch for it close.
 * Written under archpmu_own_lock, where COUNT_OPEN commits: once the write
 * returns, no session opens.
 */
static bool unloading;

void archpmu_session_set_unloading(bool on)
{
	mutex_lock(&archpmu_own_lock);
	WRITE_ONCE(unloading, on);
	mutex_unlock(&archpmu_own_lock);
}

bool archpmu_session_unloading(void)
{
	return READ_ONCE(unloading);
}

static void session_free(struct archpmu_session *s)
{
	if (!s)
		return;
	archpmu_count_teardown(&s->count);
	archpmu_mux_teardown(&s->mux);
	archpmu_sample_teardown(&s->sample);
	archpmu_task_free(s->task);
	archpmu_claims_free(&s->cl);
	kvfree(s->cl.cpus);
	put_pid(s->holder.tgid);
	kfree(s);
}

/* Put back every CPU's PMU and give up the counters; under the locks. */
static void session_release_claims(struct archpmu_session *s)
{
	lockdep_assert_held(&archpmu_own_lock);
	archpmu_claims_restore(&s->cl);
	archpmu_own_forget(&s->cl);
}

void archpmu_session_destroy(struct archpmu_session *s)
{
	/* No context switch reaches the claims once this returns. */
	archpmu_task_detach(s->task);
	cpus_read_lock();
	mutex_lock(&archpmu_own_lock);
	s->count.running = false;
	archpmu_mux_stop(&s->mux);
	list_del(&s->node);
	session_release_claims(s);
	mutex_unlock(&archpmu_own_lock);
	cpus_read_unlock();
	/*
	 * Every CPU's live view stopped naming the session's events inside the
	 * restore cross-calls above, so nothing in NMI can reach them, or the
	 * session's rings, now. What sampling has not told yet is told first.
	 */
	archpmu_sample_notes_stop(&s->sample);
	archpmu_notify_session(&s->cl, ARCHPMU_GENL_EVENT_SESSION_CLOSE, false);
	session_free(s);
}

/* The session's CPUs, ascending: @cpus (already copied in) or every online CPU. */
static int session_cpus(struct archpmu_session *s, const u32 *cpus, u32 nr_cpus,
			struct archpmu_count_open *out)
{
	unsigned int i, n = 0;
	cpumask_var_t mask;
	int ret = 0;

	if (!zalloc_cpumask_var(&mask, GFP_KERNEL))
		return -ENOMEM;
	if (!nr_cpus)
		cpumask_copy(mask, cpu_online_mask);
	for (i = 0; i < nr_cpus; i++) {
		u32 cpu = cpus[i];

		out->bad_cpu = cpu;
		if (cpu >= nr_cpu_ids) {
			ret = -ENXIO;
			goto out;
		}
		cpu = array_index_nospec(cpu, nr_cpu_ids);
		if (cpumask_test_and_set_cpu(cpu, mask)) {
			ret = -EINVAL;
			goto out;
		}
		if (!cpu_online(cpu)) {
			ret = -ENODEV;
			goto out;
		}
	}
	out->bad_cpu = ~0U;
	s->cl.cpus = kvcalloc(cpumask_weight(mask), sizeof(*s->cl.cpus), GFP_KERNEL);
	if (!s->cl.cpus) {
		ret = -ENOMEM;
		goto out;
	}
	for_each_cpu(i, mask)
		s->cl.cpus[n++].cpu = i;
	s->cl.nr_cpus = n;
	ret = archpmu_claims_init(&s->cl);
out:
	free_cpumask_var(mask);
	return ret;
}

/* A task session needs IA32_PERF_GLOBAL_CTRL (v2+) on each of its CPUs. */
static int session_task_cpus(struct archpmu_session *s, struct archpmu_count_open *out)
{
	unsigned int i;

	for (i = 0; i < s->cl.nr_cpus; i++) {
		struct archpmu_claim *c = &s->cl.cpus[i];
		struct archpmu_pmu_desc d;

		/* One not enumerated is refused by the plan. */
		if (!archpmu_enum_get(c->cpu, &d, NULL) && d.version < 2) {
			out->bad_cpu = c->cpu;
			return -EOPNOTSUPP;
		}
	}
	return archpmu_task_bind(s->task, &s->cl);
}

/* Check and program @s on every CPU, under the locks (started with ARCHPMU_COUNT_OPEN_START). */
static int session_claim(struct archpmu_session *s, struct archpmu_count_open *cmd)
{
	bool start = cmd->flags & ARCHPMU_COUNT_OPEN_START;
	int ret;

	ret = archpmu_claims_take(&s->cl, start, cmd);
	if (ret)
		return ret;
	if (s->task)
		archpmu_task_attach(s->task);
	if (start)
		archpmu_count_started(&s->count, ktime_get_ns(), false);
	return 0;
}

static struct archpmu_session *session_alloc(u32 nr_events)
{
	struct archpmu_session *s = kzalloc(sizeof(*s), GFP_KERNEL);

	if (!s)
		return NULL;
	INIT_LIST_HEAD(&s->node);
	mutex_init(&s->lock);
	s->holder.uid = current_uid();
	s->holder.pid = task_tgid_nr(current);
	s->holder.tgid = get_task_pid(current, PIDTYPE_TGID);
	get_task_comm(s->holder.comm, current);
	s->cl.holder = &s->holder;
	s->cl.ev = s->ev;
	s->cl.nr_events = nr_events;
	init_waitqueue_head(&s->sample.wq);
	return s;
}

/*
 * Create, check and program a session; on any error nothing of it is left.
 * @cmd's out fields say what was refused.
 */
static int session_create(struct archpmu_count_open *cmd, struct archpmu_session **out)
{
	struct archpmu_event __user *uev = u64_to_user_ptr(cmd->events);
	struct archpmu_session *s;
	bool sampling, multiplex;
	u32 *cpus = NULL;
	int ret;

	cmd->bad_event = ~0U;
	cmd->bad_cpu = ~0U;
	cmd->busy_holder = ARCHPMU_HOLDER_UNKNOWN;
	cmd->busy_pid = 0;
	if (archpmu_privilege() == ARCHPMU_PRIVILEGE_NONE)
		return -EPERM;
	if ((cmd->flags & ~(ARCHPMU_COUNT_OPEN_FD | ARCHPMU_COUNT_OPEN_START |
			    ARCHPMU_COUNT_OPEN_TASK | ARCHPMU_COUNT_OPEN_MULTIPLEX)) ||
	    cmd->__reserved0 ||
	    cmd->__reserved[0] || cmd->__reserved[1] || !cmd->nr_events)
		return -EINVAL;
	if (cmd->nr_events > ARCHPMU_MAX_EVENTS || cmd->nr_cpus > nr_cpu_ids)
		return -E2BIG;

	s = session_alloc(cmd->nr_events);
	if (!s)
		return -ENOMEM;
	/* Every user input is in before the locks (see the top of this file). */
	if (copy_from_user(s->ev, uev, s->cl.nr_events * sizeof(*s->ev))) {
		ret = -EFAULT;
		goto err_free;
	}
	ret = archpmu_check_groups(s->ev, s->cl.nr_events, &cmd->bad_event);
	if (ret)
		goto err_free;
	ret = archpmu_sample_copy_in(cmd, s->specs, &sampling);
	if (ret)
		goto err_free;
	ret = archpmu_check_metrics(s->ev, s->cl.nr_events, sampling, &cmd->bad_event);
	if (ret)
		goto err_free;
	ret = archpmu_check_core_types(s->ev, s->cl.nr_events, &cmd->bad_event);
	if (ret)
		goto err_free;
	ret = archpmu_session_permitted(cmd, s->ev, &cmd->bad_event);
	if (ret)
		goto err_free;
	multiplex = cmd->flags & ARCHPMU_COUNT_OPEN_MULTIPLEX;
	if (multiplex && sampling) {
		ret = -EOPNOTSUPP;
		goto err_free;
	}
	if (cmd->nr_cpus) {
		cpus = vmemdup_user(u64_to_user_ptr(cmd->cpus),
				    array_size(cmd->nr_cpus, sizeof(*cpus)));
		if (IS_ERR(cpus)) {
			ret = PTR_ERR(cpus);
			cpus = NULL;
			goto err_free;
		}
	}
	/* Last before the locks: it holds the target's exec_update_lock. */
	s->task = archpmu_task_create(cmd, sampling ?
				      archpmu_sample_carry_size(cmd->nr_events) : 0);
	if (IS_ERR(s->task)) {
		ret = PTR_ERR(s->task);
		s->task = NULL;
		goto err_free;
	}

	cpus_read_lock();
	mutex_lock(&archpmu_own_lock);
	if (unloading) {
		pr_info_ratelimited("a session of pid %d (%s) refused: the module is being unloaded (write 0 to /sys/class/misc/archpmu/unloading to go on)\n",
				    task_tgid_nr(current), current->comm);
		ret = -ENODEV;
		goto err_unlock;
	}
	ret = session_cpus(s, cpus, cmd->nr_cpus, cmd);
	if (ret)
		goto err_unlock;
	if (multiplex) {
		ret = archpmu_mux_setup(&s->mux, &s->cl);
		if (ret)
			goto err_unlock;
	}
	if (s->task) {
		ret = session_task_cpus(s, cmd);
		if (ret)
			goto err_unlock;
	}
	ret = archpmu_own_plan(&s->cl, cmd);
	if (ret)
		goto err_unlock;
	ret = archpmu_count_setup(&s->count, &s->cl);
	if (ret)
		goto err_release;
	if (sampling) {
		ret = archpmu_sample_setup(&s->sample, &s->cl, s->specs, cmd);
		if (ret)
			goto err_release;
	}
	ret = session_claim(s, cmd);
	if (ret)
		goto err_release;
	archpmu_own_commit(&s->cl);
	cmd->nr_cpus_opened = s->cl.nr_cpus;
	/* In order of id, under the lock: GET_SESSIONS resumes by id (dev/netlink_dump.c). */
	s->holder.id = atomic64_inc_return(&session_ids);
	list_add_tail(&s->node, &archpmu_sessions);
	mutex_unlock(&archpmu_own_lock);
	cpus_read_unlock();
	kvfree(cpus);
	archpmu_notify_session(&s->cl, ARCHPMU_GENL_EVENT_SESSION_OPEN, s->count.running);
	if (sampling)
		archpmu_sample_notes_start(&s->sample);
	*out = s;
	return 0;

err_release:
	session_release_claims(s);
err_unlock:
	mutex_unlock(&archpmu_own_lock);
	cpus_read_unlock();
	archpmu_task_detach(s->task);
	if (ret == -EBUSY && s->cl.refusal.kind != ARCHPMU_REFUSED_NONE)
		archpmu_notify_refused(&s->cl);
err_free:
	kvfree(cpus);
	session_free(s);
	return ret;
}

/*
 * The session becomes the caller's only once everything the caller is told
 * has been written back: a failure there (EFAULT) destroys it, at once, like
 * any other refusal. The descriptor is installed last, so nothing after the
 * install can fail.
 */
long archpmu_session_open(struct archpmu_count_open *cmd, void __user *ubuf,
			  u32 user_size)
{
	struct archpmu_event __user *uev = u64_to_user_ptr(cmd->events);
	struct archpmu_session *s = NULL;
	struct file *file = NULL;
	int fd = -1;
	unsigned int e;
	long ret;

	ret = session_create(cmd, &s);
	if (!ret) {
		fd = get_unused_fd_flags(O_CLOEXEC);
		if (fd < 0)
			ret = fd;
	}
	if (!ret) {
		file = anon_inode_getfile("[archpmu-session]", &archpmu_session_fops, s,
					  O_RDWR);
		if (IS_ERR(file)) {
			ret = PTR_ERR(file);
			file = NULL;
		}
	}
	for (e = 0; !ret && e < s->cl.nr_events; e++)
		if (put_user(s->cl.cpus[0].hw[e].counter, &uev[e].counter))
			ret = -EFAULT;
	if (ret)
		cmd->nr_cpus_opened = 0;
	/* The out fields say which event and CPU, even on a refusal. */
	if (copy_to_user(ubuf, cmd, min_t(size_t, user_size, sizeof(*cmd))))
		ret = -EFAULT;
	if (ret) {
		if (file) {
			/* Destroyed here, not at the deferred final fput(). */
			file->private_data = NULL;
			fput(file);
		}
		if (s)
			archpmu_session_destroy(s);
		if (fd >= 0)
			put_unused_fd(fd);
		return ret;
	}
	fd_install(fd, file);
	return fd;
}
