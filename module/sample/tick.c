// SPDX-License-Identifier: GPL-2.0
/*
 * The sampling tick: a pinned hrtimer every ARCHPMU_SAMPLE_TICK_NS on each
 * CPU with a sampling session, whose pass (pmi.c) re-estimates frequency
 * events, ends throttles, writes pending LOST records and handles a lost
 * PMI. It runs while something samples on its CPU: where only task sessions
 * sample, it stops at the first pass that finds none of their tasks there
 * (their counters hidden, it has nothing to do), so that an idle CPU is not
 * woken for them, as perf's task events tick only in their task's context;
 * the gate starts it again (archpmu_sample_tick_resume()). Where a CPU
 * session samples, it never stops. It has its own cpuhp state.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/hrtimer.h>
#include <linux/mutex.h>

#include "../compat.h"
#include "sample.h"

/*
 * tick_lock, with the CPU hotplug lock read-held around it, guards these
 * (the tick reads tick_keepers without it: a stale value costs a tick, or
 * is followed by tick_start()).
 */
static DEFINE_MUTEX(tick_lock);
static DEFINE_PER_CPU(unsigned int, tick_users);	/* sampling sessions on this CPU */
static DEFINE_PER_CPU(unsigned int, tick_keepers);	/* of them, CPU sessions */
static struct cpumask tick_changes;	/* CPUs whose tick starts or stops */
static DEFINE_PER_CPU(struct hrtimer, sample_ticks);
/*
 * From tick_start() to tick_stop() or the CPU's going offline: it ticks while
 * it samples, and a gate may start it again.
 */
static DEFINE_PER_CPU(bool, tick_on);
/* For tests (dev/debugfs.c): the ticks that ran on each CPU. */
static DEFINE_PER_CPU(u64, ticks_run);
static enum cpuhp_state tick_hp_state;

u64 archpmu_sample_ticks_run(unsigned int cpu)
{
	return READ_ONCE(per_cpu(ticks_run, cpu));
}

static enum hrtimer_restart sample_tick(struct hrtimer *timer)
{
	__this_cpu_inc(ticks_run);
	if (!archpmu_pmi_tick_local() && !READ_ONCE(*this_cpu_ptr(&tick_keepers)))
		return HRTIMER_NORESTART;
	hrtimer_forward_now(timer, ns_to_ktime(ARCHPMU_SAMPLE_TICK_NS));
	return HRTIMER_RESTART;
}

/*
 * On the CPU, interrupts off: sampling may begin here (a first session, or
 * the first CPU session where a task session's tick may have stopped).
 */
static void tick_start(void *unused)
{
	archpmu_pmi_begin_local();
	__this_cpu_write(tick_on, true);
	hrtimer_start(this_cpu_ptr(&sample_ticks), ns_to_ktime(ARCHPMU_SAMPLE_TICK_NS),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

/* On the CPU, interrupts off: the tick cannot be running here. */
static void tick_stop(void *unused)
{
	__this_cpu_write(tick_on, false);
	hrtimer_try_to_cancel(this_cpu_ptr(&sample_ticks));
}

void archpmu_sample_tick_resume(void)
{
	struct hrtimer *tick = this_cpu_ptr(&sample_ticks);

	lockdep_assert_irqs_disabled();
	/* Not once the CPU's tick has stopped for good (its last session, or offline). */
	if (!__this_cpu_read(tick_on) || hrtimer_is_queued(tick))
		return;
	/*
	 * On the beat it kept before it stopped: a task that runs less than a
	 * tick at a time (3 ms on, 3 off) still meets ticks while it runs, as
	 * it did when the tick never stopped; restarted a whole tick later
	 * each time, it would meet none, and its frequency events would keep
	 * their first guess.
	 */
	hrtimer_forward_now(tick, ns_to_ktime(ARCHPMU_SAMPLE_TICK_NS));
	hrtimer_start_expires(tick, HRTIMER_MODE_ABS_PINNED_HARD);
}

/*
 * Count @cl's CPUs in (@add) or out. Left in tick_changes: on add, the CPUs
 * whose first session came, or whose first CPU session (whose tick does not
 * stop: task sessions' may have); on remove, those whose last session went.
 */
static void count_tick_users(const struct archpmu_claims *cl, bool add)
{
	unsigned int i, cpu, keepers;
	bool change;

	lockdep_assert_held(&tick_lock);
	cpumask_clear(&tick_changes);
	for (i = 0; i < cl->nr_cpus; i++) {
		cpu = cl->cpus[i].cpu;
		change = add ? !per_cpu(tick_users, cpu)++ : !--per_cpu(tick_users, cpu);
		if (!cl->scope) {
			keepers = per_cpu(tick_keepers, cpu);
			change |= add && !keepers;
			WRITE_ONCE(per_cpu(tick_keepers, cpu), add ? keepers + 1 : keepers - 1);
		}
		if (change)
			cpumask_set_cpu(cpu, &tick_changes);
	}
}

void archpmu_tick_get(const struct archpmu_claims *cl)
{
	mutex_lock(&tick_lock);
	count_tick_users(cl, true);
	/* An offline CPU starts its tick when it comes online (tick_cpu_online). */
	on_each_cpu_mask(&tick_changes, tick_start, NULL, true);
	mutex_unlock(&tick_lock);
}

void archpmu_tick_put(const struct archpmu_claims *cl)
{
	mutex_lock(&tick_lock);
	count_tick_users(cl, false);
	on_each_cpu_mask(&tick_changes, tick_stop, NULL, true);
	mutex_unlock(&tick_lock);
}

/* Under the hotplug lock, so apart from get and put. */
static int tick_cpu_online(unsigned int cpu)
{
	if (per_cpu(tick_users, cpu)) {
		local_irq_disable();
		tick_start(NULL);
		local_irq_enable();
	}
	return 0;
}

static int tick_cpu_offline(unsigned int cpu)
{
	/* No gate opening here from now on starts it again. */
	local_irq_disable();
	__this_cpu_write(tick_on, false);
	local_irq_enable();
	hrtimer_cancel(this_cpu_ptr(&sample_ticks));
	return 0;
}

int archpmu_tick_init(void)
{
	unsigned int cpu;
	int ret;

	for_each_possible_cpu(cpu)
		hrtimer_setup(per_cpu_ptr(&sample_ticks, cpu), sample_tick, CLOCK_MONOTONIC,
			      HRTIMER_MODE_REL_PINNED_HARD);
	ret = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, "archpmu/sample:online",
					tick_cpu_online, tick_cpu_offline);
	if (ret < 0)
		return ret;
	tick_hp_state = ret;
	return 0;
}

void archpmu_tick_exit(void)
{
	cpuhp_remove_state_nocalls(tick_hp_state);
}
