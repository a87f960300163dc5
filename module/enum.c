// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU enumeration. A cpuhp online callback runs on every logical CPU
 * (and on every CPU that comes online later), reads that CPU's CPUID leaves
 * and IA32_PERF_CAPABILITIES through the backend, and keeps the decoded
 * description: hybrid parts describe different PMUs on different cores.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/debugfs.h>
#include <linux/fault-inject.h>
#include <linux/cpumask.h>
#include <linux/irqflags.h>
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/slab.h>

#include "archpmu.h"

struct archpmu_cpu {
	bool online;
	struct archpmu_pmu_desc desc;
};

/* Indexed by CPU number, nr_cpu_ids entries; protected by enum_lock. */
static struct archpmu_cpu *enum_cpus;
static DEFINE_MUTEX(enum_lock);
static enum cpuhp_state enum_hp_state;

static const char *const event_names[ARCHPMU_NR_ARCH_EVENTS] = {
	[ARCHPMU_EVENT_CYCLES] = "cycles",
	[ARCHPMU_EVENT_INSTRUCTIONS] = "instructions",
	[ARCHPMU_EVENT_REF_CYCLES] = "ref-cycles",
	[ARCHPMU_EVENT_LLC_REFERENCES] = "cache-references",
	[ARCHPMU_EVENT_LLC_MISSES] = "cache-misses",
	[ARCHPMU_EVENT_BRANCHES] = "branches",
	[ARCHPMU_EVENT_BRANCH_MISSES] = "branch-misses",
	[ARCHPMU_EVENT_TOPDOWN_SLOTS] = "slots",
	[ARCHPMU_EVENT_TOPDOWN_BE_BOUND] = "topdown-be-bound",
	[ARCHPMU_EVENT_TOPDOWN_BAD_SPEC] = "topdown-bad-spec",
	[ARCHPMU_EVENT_TOPDOWN_FE_BOUND] = "topdown-fe-bound",
	[ARCHPMU_EVENT_TOPDOWN_RETIRING] = "topdown-retiring",
	[ARCHPMU_EVENT_LBR_INSERTS] = "lbr-inserts",
};

const char *archpmu_event_name(unsigned int event)
{
	return event < ARCHPMU_NR_ARCH_EVENTS ? event_names[event] : NULL;
}

const char *archpmu_core_type_name(u32 core_type)
{
	switch (core_type) {
	case ARCHPMU_CORE_TYPE_CORE:
		return "core";
	case ARCHPMU_CORE_TYPE_ATOM:
		return "atom";
	case ARCHPMU_CORE_TYPE_NONE:
		return "none";
	}
	return "unknown";
}

static void enumerate_this_cpu(struct archpmu_pmu_desc *desc)
{
	struct archpmu_cpuid_set set;
	unsigned long flags;
	u64 caps = 0;

	local_irq_save(flags);
	archpmu_read_cpuid_set(&set);
	archpmu_decode_cpuid(&set, desc);
	if ((desc->flags & ARCHPMU_PMU_PDCM) &&
	    archpmu_backend->msr_read(ARCHPMU_MSR_PERF_CAPABILITIES, &caps))
		caps = 0;
	local_irq_restore(flags);
	archpmu_desc_set_perf_caps(desc, caps);
}

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
/*
 * debugfs archpmu/fail_cpu_online: the kernel's fault-injection attributes
 * for the one allocating step of bringing a CPU online. fail-nth cannot
 * reach it: the callbacks run in the cpuhp/N thread, not the caller's.
 */
static DECLARE_FAULT_ATTR(fail_cpu_online);

void archpmu_enum_debugfs_init(struct dentry *dir)
{
	fault_create_debugfs_attr("fail_cpu_online", dir, &fail_cpu_online);
}

static int sysfs_cpu_add(unsigned int cpu)
{
	if (should_fail(&fail_cpu_online, 1))
		return -ENOMEM;
	return archpmu_sysfs_cpu_add(cpu);
}
#else
void archpmu_enum_debugfs_init(struct dentry *dir)
{
}

static int sysfs_cpu_add(unsigned int cpu)
{
	return archpmu_sysfs_cpu_add(cpu);
}
#endif

static int archpmu_cpu_online(unsigned int cpu)
{
	struct archpmu_pmu_desc desc;
	int ret;

	enumerate_this_cpu(&desc);
	/*
	 * The only step that can fail comes first: on a failure the hotplug
	 * core does not call archpmu_cpu_offline(), so nothing may be left.
	 */
	ret = sysfs_cpu_add(cpu);
	if (ret)
		return ret;
	mutex_lock(&enum_lock);
	enum_cpus[cpu].desc = desc;
	enum_cpus[cpu].online = true;
	mutex_unlock(&enum_lock);
	if (archpmu_backend->cpu_online)
		archpmu_backend->cpu_online();
	archpmu_count_cpu_online(cpu);
	return 0;
}

static int archpmu_cpu_offline(unsigned int cpu)
{
	archpmu_sysfs_cpu_remove(cpu);
	archpmu_count_cpu_offline(cpu);
	if (archpmu_backend->cpu_offline)
		archpmu_backend->cpu_offline();
	mutex_lock(&enum_lock);
	enum_cpus[cpu].online = false;
	mutex_unlock(&enum_lock);
	return 0;
}

int archpmu_enum_get(unsigned int cpu, struct archpmu_pmu_desc *desc)
{
	int ret = -ENODEV;

	if (cpu >= nr_cpu_ids)
		return -ENXIO;
	mutex_lock(&enum_lock);
	if (enum_cpus[cpu].online) {
		*desc = enum_cpus[cpu].desc;
		ret = 0;
	}
	mutex_unlock(&enum_lock);
	return ret;
}

unsigned int archpmu_enum_count(void)
{
	unsigned int cpu, n = 0;

	mutex_lock(&enum_lock);
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		n += enum_cpus[cpu].online;
	mutex_unlock(&enum_lock);
	return n;
}

static void print_group(const struct archpmu_pmu_desc *d, const struct cpumask *cpus)
{
	unsigned long fixed = d->fixed_mask;

	if (!d->version) {
		pr_info("CPUs %*pbl: no architectural PMU (CPUID.0AH version 0)\n",
			cpumask_pr_args(cpus));
		return;
	}
	pr_info("CPUs %*pbl: PMU v%u, %u GP x %u bit, fixed {%*pbl} x %u bit, events %#llx%s%s%s\n",
		cpumask_pr_args(cpus), d->version, d->nr_gp, d->gp_width,
		(int)ARCHPMU_MAX_FIXED_COUNTERS, &fixed, d->fixed_width,
		d->events_mask,
		d->flags & ARCHPMU_PMU_HYBRID ? ", core type " : "",
		d->flags & ARCHPMU_PMU_HYBRID ? archpmu_core_type_name(d->core_type) : "",
		d->flags & ARCHPMU_PMU_FULL_WIDTH_WRITE ? ", full-width writes" : "");
}

/* One line per distinct PMU description, with the CPUs that have it. */
void archpmu_enum_print_summary(void)
{
	cpumask_var_t todo, group;
	unsigned int cpu, other;

	if (!zalloc_cpumask_var(&todo, GFP_KERNEL))
		return;
	if (!zalloc_cpumask_var(&group, GFP_KERNEL))
		goto out_free_todo;
	mutex_lock(&enum_lock);
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		if (enum_cpus[cpu].online)
			cpumask_set_cpu(cpu, todo);
	for_each_cpu(cpu, todo) {
		cpumask_clear(group);
		for_each_cpu(other, todo)
			if (archpmu_desc_equal(&enum_cpus[cpu].desc,
					       &enum_cpus[other].desc))
				cpumask_set_cpu(other, group);
		print_group(&enum_cpus[cpu].desc, group);
		cpumask_andnot(todo, todo, group);
	}
	mutex_unlock(&enum_lock);
	free_cpumask_var(group);
out_free_todo:
	free_cpumask_var(todo);
}

int archpmu_enum_init(void)
{
	int ret;

	enum_cpus = kcalloc(nr_cpu_ids, sizeof(*enum_cpus), GFP_KERNEL);
	if (!enum_cpus)
		return -ENOMEM;
	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "archpmu:online",
				archpmu_cpu_online, archpmu_cpu_offline);
	if (ret < 0) {
		pr_err("cannot register the CPU hotplug callbacks: %d\n", ret);
		kfree(enum_cpus);
		enum_cpus = NULL;
		return ret;
	}
	enum_hp_state = ret;
	return 0;
}

void archpmu_enum_exit(void)
{
	cpuhp_remove_state(enum_hp_state);
	kfree(enum_cpus);
	enum_cpus = NULL;
}
