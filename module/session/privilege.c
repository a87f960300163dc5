// SPDX-License-Identifier: GPL-2.0
/*
 * Who may open which session. CAP_PERFMON (or CAP_SYS_ADMIN) may open any.
 * For everyone else who can open the device (udev/99-archpmu.rules gives it
 * to the archpmu group), the module parameter unprivileged decides, as perf's
 * kernel.perf_event_paranoid does for perf_event_open():
 *   off       nothing (the default: Debian's perf_event_paranoid 3)
 *   own-user  task sessions, counting and sampling, of tasks the caller may
 *             read (the task scope's ptrace-read rule, task/access.c), every
 *             event at CPL > 0 only and without AnyThread (which counts the
 *             sibling hardware thread, another user's perhaps): perf's
 *             paranoid 2. Rings are charged as perf's (ring_charge.c).
 *   all       everything, as CAP_PERFMON (perf's -1)
 * Not the default: unlike a perf event, a session holds its counters on
 * every CPU for its whole life and keeps perf off the PMU (own/perf_share.c),
 * so whoever may open one may keep others, root included, from counting.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/moduleparam.h>
#include <linux/string.h>

#include "session.h"

static const char *const policies[] = {
	[ARCHPMU_PRIVILEGE_NONE] = "off",
	[ARCHPMU_PRIVILEGE_OWN_USER] = "own-user",
	[ARCHPMU_PRIVILEGE_ALL] = "all",
};

static uint unprivileged = ARCHPMU_PRIVILEGE_NONE;

static int policy_set(const char *text, const struct kernel_param *kp)
{
	int i = sysfs_match_string(policies, text);

	if (i < 0) {
		pr_err("unprivileged=%.*s: allowed off, own-user, all\n",
		       (int)strcspn(text, "\n"), text);
		return -EINVAL;
	}
	WRITE_ONCE(unprivileged, i);
	return 0;
}

static int policy_get(char *buf, const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%s\n", policies[READ_ONCE(unprivileged)]);
}

static const struct kernel_param_ops policy_ops = {
	.set = policy_set,
	.get = policy_get,
};

module_param_cb(unprivileged, &policy_ops, &unprivileged, 0644);
MODULE_PARM_DESC(unprivileged,
		 "What callers without CAP_PERFMON may open: off (the default), own-user (counting and sampling their own tasks in user mode) or all");

u32 archpmu_privilege(void)
{
	return perfmon_capable() ? ARCHPMU_PRIVILEGE_ALL : READ_ONCE(unprivileged);
}

int archpmu_session_permitted(const struct archpmu_count_open *cmd,
			      const struct archpmu_event *ev, u32 *bad_event)
{
	const u64 mode = ARCHPMU_EVTSEL_USR | ARCHPMU_EVTSEL_OS | ARCHPMU_EVTSEL_ANY;
	unsigned int e;

	switch (archpmu_privilege()) {
	case ARCHPMU_PRIVILEGE_ALL:
		return 0;
	case ARCHPMU_PRIVILEGE_OWN_USER:
		break;
	default:
		return -EPERM;
	}
	if (!(cmd->flags & ARCHPMU_COUNT_OPEN_TASK))
		return -EPERM;
	/* Neither USR nor OS is both. */
	for (e = 0; e < cmd->nr_events; e++) {
		if ((ev[e].config & mode) != ARCHPMU_EVTSEL_USR) {
			*bad_event = e;
			return -EPERM;
		}
	}
	return 0;
}
