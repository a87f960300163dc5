// SPDX-License-Identifier: GPL-2.0
/*
 * The model backend: a software model of the Intel architectural PMU, for
 * machines without one (CI's AMD VMs, QEMU/TCG guests). It answers CPUID
 * from its configuration and keeps a per-CPU register file with the SDM's
 * RDMSR/WRMSR semantics (model_regs.c). It never touches a real MSR.
 *
 * Configuration (module parameters, all read-only once loaded):
 *   model_cpuid=LEAF.SUB=EAX:EBX:ECX:EDX,...  raw CPUID leaves (hex) so the
 *       model impersonates a real CPU exactly (leaves 01, 07.0, 07.1, 0a,
 *       1a, 23.0-23.5; absent leaves read 0). Overrides the layout
 *       parameters below.
 *   model_cpuid_hybrid=...  the same for the CPUs in model_hybrid_cpus.
 *   model_version, model_gp, model_gp_width, model_fixed, model_fixed_mask,
 *   model_fixed_width, model_events_len, model_events_unavail,
 *   model_anythread_deprecated: a layout from which CPUID is synthesised.
 *   model_hybrid_cpus=LIST: these CPUs are E-cores (1AH type 20H), the
 *       others P-cores (40H); model_hybrid_gp and model_hybrid_fixed_mask
 *       give the E-core layout where it differs.
 *   model_full_width, model_perf_caps: IA32_PERF_CAPABILITIES (PDCM is set
 *       in synthesised CPUID when either is non-zero); model_hybrid_perf_caps
 *       gives the E-cores' where it differs (a real hybrid part has
 *       PERF_METRICS on its P-cores only).
 *   model_quirks: what real systems do beyond the SDM (model_regs.h).
 *   model_rate_percent: enabled counters advance every millisecond at the
 *       rates of archpmu_model_rate() times this percentage, the tick going
 *       to USR or OS by the mode of the interrupted context; 0 stops time
 *       counting, so only ARCHPMU_IOC_MODEL_INJECT moves the counters.
 *
 * The PMI and LVTPC: model_pmi.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/hrtimer.h>
#include <linux/irqflags.h>
#include <linux/ktime.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <asm/irq_regs.h>
#include <asm/ptrace.h>

#include "../compat.h"
#include "backend.h"
#include "model_param.h"
#include "model_pmi.h"
#include "model_regs.h"

static char *model_cpuid;
module_param(model_cpuid, charp, 0444);
MODULE_PARM_DESC(model_cpuid, "Raw CPUID leaves LEAF.SUB=EAX:EBX:ECX:EDX,... (hex) the model answers");
static char *model_cpuid_hybrid;
module_param(model_cpuid_hybrid, charp, 0444);
MODULE_PARM_DESC(model_cpuid_hybrid, "Raw CPUID leaves of the CPUs in model_hybrid_cpus");
static char *model_hybrid_cpus;
module_param(model_hybrid_cpus, charp, 0444);
MODULE_PARM_DESC(model_hybrid_cpus, "CPU list of the second core type (E-cores); makes the model hybrid");

#define MODEL_MAX_RATE_PERCENT	1000

static uint model_version = 4;
static struct archpmu_model_num_param model_version_param = {
	.val = &model_version, .lo = 1, .hi = 6,
};
module_param_cb(model_version, &archpmu_model_num_ops, &model_version_param, 0444);
MODULE_PARM_DESC(model_version, "Architectural PMU version, 1-6 (default 4)");
static uint model_gp = 4;
static struct archpmu_model_num_param model_gp_param = {
	.val = &model_gp, .lo = 1, .hi = ARCHPMU_NR_GP,
};
module_param_cb(model_gp, &archpmu_model_num_ops, &model_gp_param, 0444);
MODULE_PARM_DESC(model_gp, "General-purpose counters, 1-16, more than 8 on v6 (default 4)");
static uint model_gp_width = 48;
static struct archpmu_model_num_param model_gp_width_param = {
	.val = &model_gp_width, .lo = 8, .hi = 64,
};
module_param_cb(model_gp_width, &archpmu_model_num_ops, &model_gp_width_param, 0444);
MODULE_PARM_DESC(model_gp_width, "GP counter width in bits, 8-64 (default 48)");
static uint model_fixed = 3;
static struct archpmu_model_num_param model_fixed_param = {
	.val = &model_fixed, .lo = 0, .hi = ARCHPMU_NR_FIXED,
};
module_param_cb(model_fixed, &archpmu_model_num_ops, &model_fixed_param, 0444);
MODULE_PARM_DESC(model_fixed, "Contiguous fixed counters, CPUID.0AH:EDX[4:0], 0-7 (default 3)");
static uint model_fixed_mask;
static struct archpmu_model_num_param model_fixed_mask_param = {
	.val = &model_fixed_mask, .lo = 0, .hi = BIT(ARCHPMU_NR_FIXED) - 1,
};
module_param_cb(model_fixed_mask, &archpmu_model_num_ops, &model_fixed_mask_param, 0444);
MODULE_PARM_DESC(model_fixed_mask, "v5+: fixed-counter bitmap CPUID.0AH:ECX, bits 0-6 (default 0)");
static uint model_fixed_width = 48;
static struct archpmu_model_num_param model_fixed_width_param = {
	.val = &model_fixed_width, .lo = 8, .hi = 64,
};
module_param_cb(model_fixed_width, &archpmu_model_num_ops, &model_fixed_width_param, 0444);
MODULE_PARM_DESC(model_fixed_width, "Fixed counter width in bits, 8-64 (default 48)");
static uint model_events_len = 7;
static struct archpmu_model_num_param model_events_len_param = {
	.val = &model_events_len, .lo = 0, .hi = ARCHPMU_NR_ARCH_EVENTS,
};
module_param_cb(model_events_len, &archpmu_model_num_ops, &model_events_len_param, 0444);
MODULE_PARM_DESC(model_events_len, "Length of the event vector CPUID.0AH:EAX[31:24], 0-13 (default 7)");
static uint model_events_unavail;
static struct archpmu_model_num_param model_events_unavail_param = {
	.val = &model_events_unavail, .lo = 0, .hi = U32_MAX,
};
module_param_cb(model_events_unavail, &archpmu_model_num_ops, &model_events_unavail_param, 0444);
MODULE_PARM_DESC(model_events_unavail, "CPUID.0AH:EBX, bit n = event n unavailable (default 0)");
static bool model_anythread_deprecated;
module_param(model_anythread_deprecated, bool, 0444);
MODULE_PARM_DESC(model_anythread_deprecated, "CPUID.0AH:EDX[15] (default 0)");
static uint model_hybrid_gp;
static struct archpmu_model_num_param model_hybrid_gp_param = {
	.val = &model_hybrid_gp, .lo = 0, .hi = ARCHPMU_NR_GP,
};
module_param_cb(model_hybrid_gp, &archpmu_model_num_ops, &model_hybrid_gp_param, 0444);
MODULE_PARM_DESC(model_hybrid_gp, "E-core GP counters (default: model_gp)");
static uint model_hybrid_fixed_mask;
static struct archpmu_model_num_param model_hybrid_fixed_mask_param = {
	.val = &model_hybrid_fixed_mask, .lo = 0, .hi = BIT(ARCHPMU_NR_FIXED) - 1,
};
module_param_cb(model_hybrid_fixed_mask, &archpmu_model_num_ops, &model_hybrid_fixed_mask_param,
		0444);
MODULE_PARM_DESC(model_hybrid_fixed_mask, "E-core fixed-counter bitmap (default: as the P-core)");
static bool model_full_width;
module_param(model_full_width, bool, 0444);
MODULE_PARM_DESC(model_full_width, "Full-width counter writes, PERF_CAPABILITIES[13] (default 0)");
static u64 model_perf_caps;
static struct archpmu_model_num_param model_perf_caps_param = {
	.val = &model_perf_caps, .is_u64 = true, .lo = 0, .hi = U64_MAX,
};
module_param_cb(model_perf_caps, &archpmu_model_num_ops, &model_perf_caps_param, 0444);
MODULE_PARM_DESC(model_perf_caps, "Raw IA32_PERF_CAPABILITIES (default 0)");
static u64 model_hybrid_perf_caps;
static bool model_hybrid_perf_caps_given;
static struct archpmu_model_num_param model_hybrid_perf_caps_param = {
	.val = &model_hybrid_perf_caps, .is_u64 = true, .lo = 0, .hi = U64_MAX,
	.given = &model_hybrid_perf_caps_given,
};
module_param_cb(model_hybrid_perf_caps, &archpmu_model_num_ops, &model_hybrid_perf_caps_param,
		0444);
MODULE_PARM_DESC(model_hybrid_perf_caps, "E-core IA32_PERF_CAPABILITIES (default: model_perf_caps)");
static uint model_rate_percent = 100;
static struct archpmu_model_num_param model_rate_percent_param = {
	.val = &model_rate_percent, .lo = 0, .hi = MODEL_MAX_RATE_PERCENT,
};
module_param_cb(model_rate_percent, &archpmu_model_num_ops, &model_rate_percent_param, 0444);
MODULE_PARM_DESC(model_rate_percent, "Counting speed in percent of the documented rates; 0: only injected events count (default 100)");

#define MODEL_TYPES		2
#define MODEL_MAX_LEAF		0x23
#define MODEL_SIGNATURE		0x000506e3	/* family 6, a Skylake */

struct model_core_type {
	struct archpmu_cpuid_set cpuid;
	struct archpmu_pmu_desc desc;
};

#define MODEL_TICK_NS		NSEC_PER_MSEC

struct model_tick {
	struct hrtimer timer;
	u64 last_ns;
	bool last_user;		/* the mode the last tick interrupted */
};

static struct model_core_type model_types[MODEL_TYPES];
static struct cpumask model_hybrid_mask;
static DEFINE_PER_CPU(struct archpmu_model_regs, model_regs);
static DEFINE_PER_CPU(struct model_tick, model_ticks);

/* PMIs one model tick raises at most (a period of 1 would raise millions). */
#define MODEL_MAX_PMIS_PER_TICK	1000
static unsigned int model_type_of(unsigned int cpu)
{
	return cpumask_test_cpu(cpu, &model_hybrid_mask) ? 1 : 0;
}

static struct archpmu_cpuid_regs *raw_leaf(struct archpmu_cpuid_set *c,
					   u32 leaf, u32 sub)
{
	switch (leaf) {
	case 0x01:
		return sub ? NULL : &c->leaf01;
	case 0x07:
		return sub == 0 ? &c->leaf07_0 : sub == 1 ? &c->leaf07_1 : NULL;
	case 0x0a:
		return sub ? NULL : &c->leaf0a;
	case 0x1a:
		return sub ? NULL : &c->leaf1a;
	case 0x23:
		return sub < ARCHPMU_LEAF23_SUBLEAVES ? &c->leaf23[sub] : NULL;
	}
	return NULL;
}

static int parse_raw_cpuid(const char *param, const char *text,
			   struct archpmu_cpuid_set *c)
{
	char *copy, *cursor, *item;
	int ret = 0;

	copy = kstrdup(text, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	memset(c, 0, sizeof(*c));
	cursor = copy;
	while ((item = strsep(&cursor, ",")) != NULL) {
		struct archpmu_cpuid_regs *r, v;
		u32 leaf, sub;
		char tail;

		if (!*item)
			continue;
		if (sscanf(item, "%x.%x=%x:%x:%x:%x%c", &leaf, &sub, &v.eax,
			   &v.ebx, &v.ecx, &v.edx, &tail) != 6) {
			pr_err("%s: '%s' is not LEAF.SUB=EAX:EBX:ECX:EDX in hex\n",
			       param, item);
			ret = -EINVAL;
			break;
		}
		r = raw_leaf(c, leaf, sub);
		if (!r) {
			pr_err("%s: leaf %x.%x is not modelled (use 01, 07.0, 07.1, 0a, 1a, 23.0-23.5)\n",
			       param, leaf, sub);
			ret = -EINVAL;
			break;
		}
		*r = v;
	}
	kfree(copy);
	return ret;
}

/* What the per-parameter ranges cannot say. */
static int check_layout_params(void)
{
	if (model_fixed_mask && model_version < 5) {
		pr_err("model_fixed_mask needs model_version 5 or later (CPUID.0AH:ECX is reserved before v5)\n");
		return -EINVAL;
	}
	if (max(model_gp, model_hybrid_gp) > ARCHPMU_LEGACY_GP && model_version < 6) {
		pr_err("more than %u GP counters need model_version 6 (before v6 only IA32_PMC0-7 exist)\n",
		       ARCHPMU_LEGACY_GP);
		return -EINVAL;
	}
	return 0;
}

/* CPUID of a synthesised layout with @gp GP counters and @fixed_mask. */
static void synthesise_cpuid(struct archpmu_cpuid_set *c, uint gp,
			     u32 fixed_mask, bool hybrid, u32 core_type)
{
	u32 events = ~model_events_unavail & (BIT(model_events_len) - 1);
	u32 fixed_count = model_fixed;

	memset(c, 0, sizeof(*c));
	c->leaf01.eax = MODEL_SIGNATURE;
	if (model_full_width || model_perf_caps || model_hybrid_perf_caps)
		c->leaf01.ecx |= CPUID01_ECX_PDCM;
	c->leaf0a.eax = model_version | gp << 8 | model_gp_width << 16 |
			model_events_len << 24;
	c->leaf0a.ebx = model_events_unavail;
	if (model_version >= 2)
		c->leaf0a.edx = fixed_count | model_fixed_width << 5;
	if (model_version >= 5)
		c->leaf0a.ecx = fixed_mask;
	if (model_anythread_deprecated)
		c->leaf0a.edx |= BIT(15);
	if (hybrid) {
		c->leaf07_0.edx |= CPUID07_EDX_HYBRID;
		c->leaf1a.eax = core_type << 24;
	}
	if (model_version >= 6) {
		/* v6 parts describe their counters in leaf 23H. */
		c->leaf07_0.eax = 1;
		c->leaf07_1.eax = CPUID07_1_EAX_LEAF23;
		c->leaf23[0].eax = BIT(0) | BIT(1) | BIT(3);
		c->leaf23[1].eax = BIT(gp) - 1;
		c->leaf23[1].ebx = fixed_mask | (BIT(fixed_count) - 1);
		c->leaf23[3].eax = events;
	}
}

static int model_configure(void)
{
	bool hybrid = model_hybrid_cpus && *model_hybrid_cpus;
	u64 caps[MODEL_TYPES] = { model_perf_caps, model_hybrid_perf_caps_given ?
				   model_hybrid_perf_caps : model_perf_caps };
	unsigned int t;
	int ret;

	cpumask_clear(&model_hybrid_mask);
	if (hybrid) {
		ret = cpulist_parse(model_hybrid_cpus, &model_hybrid_mask);
		if (!ret && cpumask_empty(&model_hybrid_mask))
			ret = -EINVAL;
		if (ret == -ERANGE ||
		    (!ret && cpumask_last(&model_hybrid_mask) >= nr_cpu_ids)) {
			pr_err("model_hybrid_cpus=%s names a CPU out of range (allowed: 0-%u)\n",
			       model_hybrid_cpus, nr_cpu_ids - 1);
			return -EINVAL;
		}
		if (ret) {
			pr_err("model_hybrid_cpus='%s' is not a CPU list (allowed: CPUs 0-%u, e.g. 2-3 or 1,3)\n",
			       model_hybrid_cpus, nr_cpu_ids - 1);
			return -EINVAL;
		}
	}
	if (model_cpuid_hybrid && !hybrid) {
		pr_err("model_cpuid_hybrid needs model_hybrid_cpus to say which CPUs use it\n");
		return -EINVAL;
	}

	if (model_cpuid) {
		ret = parse_raw_cpuid("model_cpuid", model_cpuid, &model_types[0].cpuid);
		if (ret)
			return ret;
		model_types[1].cpuid = model_types[0].cpuid;
		if (model_cpuid_hybrid) {
			ret = parse_raw_cpuid("model_cpuid_hybrid", model_cpuid_hybrid,
					      &model_types[1].cpuid);
			if (ret)
				return ret;
		}
	} else {
		u32 hybrid_fixed = model_hybrid_fixed_mask ?: model_fixed_mask;

		ret = check_layout_params();
		if (ret)
			return ret;
		synthesise_cpuid(&model_types[0].cpuid, model_gp, model_fixed_mask,
				 hybrid, ARCHPMU_CORE_TYPE_CORE);
		synthesise_cpuid(&model_types[1].cpuid, model_hybrid_gp ?: model_gp,
				 hybrid_fixed, hybrid, ARCHPMU_CORE_TYPE_ATOM);
	}

	if (model_hybrid_perf_caps_given && !hybrid) {
		pr_err("model_hybrid_perf_caps needs model_hybrid_cpus to say which CPUs use it\n");
		return -EINVAL;
	}
	for (t = 0; t < MODEL_TYPES; t++) {
		struct archpmu_pmu_desc *d = &model_types[t].desc;

		if (model_full_width)
			caps[t] |= ARCHPMU_PERF_CAP_FW_WRITE;
		archpmu_decode_cpuid(&model_types[t].cpuid, d);
		archpmu_desc_set_perf_caps(d, d->flags & ARCHPMU_PMU_PDCM ? caps[t] : 0);
	}
	return 0;
}

int archpmu_model_init(void)
{
	unsigned int cpu;
	int ret;

	ret = model_configure();
	if (ret)
		return ret;
	for_each_possible_cpu(cpu)
		archpmu_model_regs_reset(per_cpu_ptr(&model_regs, cpu),
					 &model_types[model_type_of(cpu)].desc,
					 archpmu_model_quirks);
	return 0;
}

/* Every millisecond: the time since the last tick, in the interrupted mode. */
static enum hrtimer_restart model_tick_fn(struct hrtimer *timer)
{
	struct model_tick *t = container_of(timer, struct model_tick, timer);
	struct archpmu_model_regs *r = this_cpu_ptr(&model_regs);
	struct pt_regs *regs = get_irq_regs();
	bool user = regs && user_mode(regs);
	u64 now = ktime_get_ns();
	u64 left = now - t->last_ns;
	unsigned int i;

	/*
	 * Up to each overflow that raises a PMI, which the handler takes
	 * before the counting goes on: a short period gives as many PMIs as
	 * it would on hardware (the throttle stops the counter), bounded.
	 */
	for (i = 0; left && i < MODEL_MAX_PMIS_PER_TICK; i++) {
		archpmu_model_step_begin();
		left = archpmu_model_advance_to_pmi(r, left, user, model_rate_percent);
		archpmu_model_step_end(r, regs);
	}
	if (left) {
		archpmu_model_step_begin();
		archpmu_model_advance(r, left, user, model_rate_percent);
		archpmu_model_step_end(r, regs);
	}
	t->last_ns = now;
	t->last_user = user;
	hrtimer_forward_now(timer, ns_to_ktime(MODEL_TICK_NS));
	return HRTIMER_RESTART;
}

static void model_cpu_online_op(void)
{
	struct model_tick *t = this_cpu_ptr(&model_ticks);

	if (!model_rate_percent)
		return;
	hrtimer_setup(&t->timer, model_tick_fn, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
	t->last_ns = ktime_get_ns();
	hrtimer_start(&t->timer, ns_to_ktime(MODEL_TICK_NS), HRTIMER_MODE_REL_PINNED_HARD);
}

static void model_cpu_offline_op(void)
{
	if (model_rate_percent)
		hrtimer_cancel(&this_cpu_ptr(&model_ticks)->timer);
}

static void model_inject_op(u32 code, u64 count, bool user)
{
	struct archpmu_model_regs *r = this_cpu_ptr(&model_regs);

	lockdep_assert_irqs_disabled();
	archpmu_model_step_begin();
	archpmu_model_inject(r, code, count, user);
	archpmu_model_step_end(r, NULL);
}

static void model_cpuid_op(u32 leaf, u32 subleaf, struct archpmu_cpuid_regs *r)
{
	struct archpmu_cpuid_set *c =
		&model_types[model_type_of(smp_processor_id())].cpuid;
	struct archpmu_cpuid_regs *src;

	memset(r, 0, sizeof(*r));
	if (leaf == 0) {
		r->eax = MODEL_MAX_LEAF;
		memcpy(&r->ebx, "Genu", 4);
		memcpy(&r->edx, "ineI", 4);
		memcpy(&r->ecx, "ntel", 4);
		return;
	}
	src = raw_leaf(c, leaf, subleaf);
	if (src)
		*r = *src;
}

static int model_rdmsr_op(u32 msr, u64 *val)
{
	struct archpmu_model_regs *r = this_cpu_ptr(&model_regs);
	int ret;

	lockdep_assert_irqs_disabled();
	if (!archpmu_model_step_begin())
		return -EBUSY;
	ret = archpmu_model_rdmsr(r, msr, val);
	archpmu_model_step_end(r, NULL);
	return ret;
}

/*
 * Before IA32_PERF_GLOBAL_CTRL starts or stops counters (a task session's
 * context switch, say): the time since the last tick counts in the state it
 * ran in, in the mode that tick saw. Else the next tick would give its whole
 * millisecond to whatever was enabled at that instant, and a task switched
 * in often would be counted for time it did not run. Not in NMI: the PMI
 * handler's writes land inside a tick's step.
 */
static void model_count_until_now(struct archpmu_model_regs *r)
{
	struct model_tick *t = this_cpu_ptr(&model_ticks);
	u64 now;

	if (!model_rate_percent || in_nmi() || !t->last_ns)
		return;
	now = ktime_get_ns();
	if (now > t->last_ns)
		archpmu_model_advance(r, now - t->last_ns, t->last_user, model_rate_percent);
	t->last_ns = now;
}

atomic_t archpmu_model_wrmsr_fail_nth = ATOMIC_INIT(0);

static int model_wrmsr_op(u32 msr, u64 val)
{
	struct archpmu_model_regs *r = this_cpu_ptr(&model_regs);
	int ret;

	lockdep_assert_irqs_disabled();
	/* The write that takes the countdown from 1 to 0 raises #GP. */
	if (atomic_dec_if_positive(&archpmu_model_wrmsr_fail_nth) == 0)
		return -EIO;
	if (!archpmu_model_step_begin())
		return -EBUSY;
	if (msr == ARCHPMU_MSR_GLOBAL_CTRL)
		model_count_until_now(r);
	ret = archpmu_model_wrmsr(r, msr, val);
	archpmu_model_step_end(r, NULL);
	return ret;
}

u64 archpmu_model_live_writes(void)
{
	u64 sum = 0;
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(&model_regs, cpu)->live_writes);
	return sum;
}

const struct archpmu_backend archpmu_model_backend = {
	.name = "model",
	.id = ARCHPMU_BACKEND_MODEL,
	.cpuid = model_cpuid_op,
	.msr_read = model_rdmsr_op,
	.msr_write = model_wrmsr_op,
	.inject = model_inject_op,
	.pmi_regs = archpmu_model_pmi_regs,
	.pmi_take = archpmu_model_pmi_take,
	.pmi_unmask = archpmu_model_pmi_unmask,
	.cpu_online = model_cpu_online_op,
	.cpu_offline = model_cpu_offline_op,
};
