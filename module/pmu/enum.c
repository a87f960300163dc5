// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU enumeration. A cpuhp online callback runs on every logical CPU
 * (and on every CPU that comes online later), reads that CPU's CPUID leaves
 * and IA32_PERF_CAPABILITIES through the backend, and keeps the decoded
 * description in the CPU's PMU context (cpu_ctx.h): hybrid parts describe
 * different PMUs on different cores. The sysfs files and the sessions have
 * cpuhp states of their own. Dynamic states run in slot order, and a slot
 * freed by another module may put a later registration before an earlier
 * one, so no callback depends on another's having run: the sessions keep
 * their own copy of the description, and a CPU's description does not change
 * while it is offline.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/cpumask.h>
#include <linux/irqflags.h>
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/slab.h>

#include "pmu.h"

static enum cpuhp_state enum_hp_state;

static const char *const event_names[] = {
#define EVENT_NAME(bit, name, ev, umask)	name,
	ARCHPMU_ARCH_EVENT_TABLE(EVENT_NAME)
#undef EVENT_NAME
};

static_assert(ARRAY_SIZE(event_names) == ARCHPMU_NR_ARCH_EVENTS);

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

/* Read the PMU's CPUID leaves on this CPU (interrupts disabled). */
void archpmu_read_cpuid_set(struct archpmu_cpuid_set *c)
{
	const struct archpmu_backend *be = archpmu_backend;
	struct archpmu_cpuid_regs leaf0;
	u32 max, i;

	memset(c, 0, sizeof(*c));
	be->cpuid(0, 0, &leaf0);
	max = leaf0.eax;
	if (max >= 0x1)
		be->cpuid(0x1, 0, &c->leaf01);
	if (max >= 0x7) {
		be->cpuid(0x7, 0, &c->leaf07_0);
		if (c->leaf07_0.eax >= 1)
			be->cpuid(0x7, 1, &c->leaf07_1);
	}
	if (max >= 0xa)
		be->cpuid(0xa, 0, &c->leaf0a);
	if (max >= 0x1a)
		be->cpuid(0x1a, 0, &c->leaf1a);
	if (max >= 0x23 && (c->leaf07_1.eax & CPUID07_1_EAX_LEAF23))
		for (i = 0; i < ARCHPMU_LEAF23_SUBLEAVES; i++)
			be->cpuid(0x23, i, &c->leaf23[i]);
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
	    archpmu_rdmsr_local(ARCHPMU_MSR_PERF_CAPABILITIES, &caps))
		caps = 0;
	local_irq_restore(flags);
	archpmu_desc_set_perf_caps(desc, caps);
}

/* Runs on @cpu as it comes online (the cpuhp thread, bound to it). */
static int archpmu_cpu_online(unsigned int cpu)
{
	struct archpmu_cpu_ctx *ctx = per_cpu_ptr(&archpmu_cpu_ctx, cpu);
	struct archpmu_pmu_desc desc;

	enumerate_this_cpu(&desc);
	mutex_lock(&archpmu_enum_lock);
	ctx->desc = desc;
	ctx->ops = archpmu_pmu_ops_for(&desc);
	ctx->enumerated = true;
	mutex_unlock(&archpmu_enum_lock);
	if (archpmu_backend->cpu_online)
		archpmu_backend->cpu_online();
	return 0;
}

static int archpmu_cpu_offline(unsigned int cpu)
{
	struct archpmu_cpu_ctx *ctx = per_cpu_ptr(&archpmu_cpu_ctx, cpu);

	if (archpmu_backend->cpu_offline)
		archpmu_backend->cpu_offline();
	mutex_lock(&archpmu_enum_lock);
	ctx->enumerated = false;
	mutex_unlock(&archpmu_enum_lock);
	return 0;
}

int archpmu_enum_get(unsigned int cpu, struct archpmu_pmu_desc *desc,
		     const struct archpmu_pmu_ops **ops)
{
	int ret = -ENODEV;

	if (cpu >= nr_cpu_ids)
		return -ENXIO;
	mutex_lock(&archpmu_enum_lock);
	if (per_cpu(archpmu_cpu_ctx, cpu).enumerated) {
		*desc = per_cpu(archpmu_cpu_ctx, cpu).desc;
		if (ops)
			*ops = per_cpu(archpmu_cpu_ctx, cpu).ops;
		ret = 0;
	}
	mutex_unlock(&archpmu_enum_lock);
	return ret;
}

unsigned int archpmu_enum_count(void)
{
	unsigned int cpu, n = 0;

	mutex_lock(&archpmu_enum_lock);
	for_each_possible_cpu(cpu)
		n += per_cpu(archpmu_cpu_ctx, cpu).enumerated;
	mutex_unlock(&archpmu_enum_lock);
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
	mutex_lock(&archpmu_enum_lock);
	for_each_possible_cpu(cpu)
		if (per_cpu(archpmu_cpu_ctx, cpu).enumerated)
			cpumask_set_cpu(cpu, todo);
	for_each_cpu(cpu, todo) {
		const struct archpmu_pmu_desc *d = &per_cpu(archpmu_cpu_ctx, cpu).desc;

		cpumask_clear(group);
		for_each_cpu(other, todo)
			if (archpmu_desc_equal(d, &per_cpu(archpmu_cpu_ctx, other).desc))
				cpumask_set_cpu(other, group);
		print_group(d, group);
		cpumask_andnot(todo, todo, group);
	}
	mutex_unlock(&archpmu_enum_lock);
	free_cpumask_var(group);
out_free_todo:
	free_cpumask_var(todo);
}

int archpmu_enum_init(void)
{
	int ret;

	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "archpmu/enum:online",
				archpmu_cpu_online, archpmu_cpu_offline);
	if (ret < 0) {
		pr_err("cannot register the CPU hotplug callbacks: %d\n", ret);
		return ret;
	}
	enum_hp_state = ret;
	return 0;
}

void archpmu_enum_exit(void)
{
	cpuhp_remove_state(enum_hp_state);
}
