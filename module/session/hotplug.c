// SPDX-License-Identifier: GPL-2.0
/*
 * Sessions across CPU hotplug and suspend. The sessions' cpuhp state is
 * registered after enumeration's (pmu/enum.c), so a CPU is enumerated before
 * its sessions resume and its sessions let go before it is forgotten.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/suspend.h>

#include "../notify/notify.h"
#include "session.h"

static enum cpuhp_state session_hp_state;

/* Runs on @cpu as it goes down: keep its counts, leave its PMU as found. */
static int session_cpu_offline(unsigned int cpu)
{
	struct archpmu_session *s;
	struct archpmu_claim *c;

	mutex_lock(&archpmu_own_lock);
	list_for_each_entry(s, &archpmu_sessions, node) {
		c = archpmu_claims_on_cpu(&s->cl, cpu);
		if (!c || !c->programmed)
			continue;
		archpmu_count_claim_down(&s->count, c);
		archpmu_claim_restore(&s->cl, c);
		archpmu_notify_cpu(&s->cl, cpu, false, 0);
	}
	mutex_unlock(&archpmu_own_lock);
	return 0;
}

/* Runs on @cpu as it comes up: put the sessions' counters back. */
static int session_cpu_online(unsigned int cpu)
{
	struct archpmu_session *s;
	struct archpmu_claim *c;
	int err;

	mutex_lock(&archpmu_own_lock);
	list_for_each_entry(s, &archpmu_sessions, node) {
		c = archpmu_claims_on_cpu(&s->cl, cpu);
		if (!c || c->programmed)
			continue;
		err = archpmu_claim_save(&s->cl, c) ?:
		      archpmu_claim_program(&s->cl, c, s->count.running);
		if (!err)
			archpmu_count_claim_up(&s->count, c);
		archpmu_notify_cpu(&s->cl, cpu, true, err);
	}
	mutex_unlock(&archpmu_own_lock);
	return 0;
}

/*
 * Suspend loses the PMU state: fold before, reprogram after. (Non-boot CPUs
 * also go through the hotplug callbacks above.)
 */
static int session_pm_notify(struct notifier_block *nb, unsigned long action, void *data)
{
	struct archpmu_session *s;
	unsigned int i;

	if (action != PM_SUSPEND_PREPARE && action != PM_POST_SUSPEND &&
	    action != PM_HIBERNATION_PREPARE && action != PM_POST_HIBERNATION)
		return NOTIFY_DONE;
	cpus_read_lock();
	mutex_lock(&archpmu_own_lock);
	list_for_each_entry(s, &archpmu_sessions, node) {
		bool before = action == PM_SUSPEND_PREPARE || action == PM_HIBERNATION_PREPARE;

		for (i = 0; i < s->cl.nr_cpus; i++) {
			struct archpmu_claim *c = &s->cl.cpus[i];

			if (!c->programmed)
				continue;
			if (before)
				archpmu_count_claim_fold(&s->count, c);
			else
				archpmu_claim_program(&s->cl, c, s->count.running);
		}
		/* Folds in between would read what suspend left in the PMU. */
		WRITE_ONCE(s->cl.suspended, before);
		/*
		 * A task session's gates stay shut until the counters are back;
		 * tasks are thawed before PM_POST_*, so those already running
		 * get their gates opened here.
		 */
		for (i = 0; before && s->cl.scope && i < s->cl.nr_cpus; i++)
			s->cl.scope->off(&s->cl, &s->cl.cpus[i]);
		if (!before && s->cl.scope)
			s->cl.scope->sync(&s->cl);
	}
	mutex_unlock(&archpmu_own_lock);
	cpus_read_unlock();
	return NOTIFY_OK;
}

static struct notifier_block session_pm_nb = {
	.notifier_call = session_pm_notify,
};

int archpmu_session_hotplug_init(void)
{
	int ret;

	ret = register_pm_notifier(&session_pm_nb);
	if (ret)
		return ret;
	/* No session exists yet: the callbacks have nothing to do now. */
	ret = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, "archpmu/session:online",
					session_cpu_online, session_cpu_offline);
	if (ret < 0) {
		pr_err("cannot register the sessions' CPU hotplug callbacks: %d\n", ret);
		unregister_pm_notifier(&session_pm_nb);
		return ret;
	}
	session_hp_state = ret;
	return 0;
}

void archpmu_session_hotplug_exit(void)
{
	cpuhp_remove_state_nocalls(session_hp_state);
	unregister_pm_notifier(&session_pm_nb);
}
