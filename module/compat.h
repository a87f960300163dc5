/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every kernel-version shim archpmu needs, in one place. The module is built
 * and tested on Debian 12's 6.1, Debian's 6.12 and the newest kernel Debian
 * ships (docs/install.md, "Kernels"); each shim names the release that changed the API.
 */
#ifndef ARCHPMU_COMPAT_H
#define ARCHPMU_COMPAT_H

#include <linux/capability.h>
#include <linux/hrtimer.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/coredump.h>
#include <linux/user_namespace.h>
#include <linux/mm.h>
#include <linux/version.h>
#include <net/genetlink.h>
#include <asm/apic.h>
#include <asm/hardirq.h>
#include <asm/msr.h>
#include <asm/processor.h>
#if __has_include(<asm/cpuid/api.h>)
/* 6.15 moved cpuid_count() and its kin out of <asm/processor.h>. */
#include <asm/cpuid/api.h>
#endif

#ifndef CAP_PERFMON
/* CAP_PERFMON arrived in 5.8; before it perf used CAP_SYS_ADMIN alone. */
static inline bool perfmon_capable(void)
{
	return capable(CAP_SYS_ADMIN);
}
#endif

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
/* 6.3 made vm_flags read-only behind vm_flags_set() (per-VMA locking). */
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}
#endif

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 16, 0)
/* 6.16 renamed the 64-bit MSR accessors: rdmsrl_safe() is rdmsrq_safe(). */
#define rdmsrq_safe rdmsrl_safe
#define wrmsrq_safe wrmsrl_safe
#endif

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 13, 0)
/* 6.13 replaced hrtimer_init() and a later .function store by hrtimer_setup(). */
static inline void hrtimer_setup(struct hrtimer *timer,
				 enum hrtimer_restart (*function)(struct hrtimer *),
				 clockid_t clock_id, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock_id, mode);
	timer->function = function;
}
#endif

/*
 * NMIs this CPU has taken. x86's per-CPU irq_stat became an array indexed by
 * IRQ_COUNT_* in 7.x; inc_perf_irq_stat() came with the array, and is a macro
 * to test for, where the enum is not.
 */
static inline unsigned int archpmu_nmi_count(void)
{
#ifdef inc_perf_irq_stat
	return this_cpu_read(irq_stat.counts[IRQ_COUNT_NMI]);
#else
	return this_cpu_read(irq_stat.__nmi_count);
#endif
}

/*
 * Whether @task's image (it has an mm) may be read by a caller with the
 * task's own credentials, as ptrace's "dumpable" rule says; if not, *@ns (when
 * given) gets a reference to the user namespace whose CAP_SYS_PTRACE still
 * may. Call with task_lock(@task) held, or on current.
 */
#if __has_include(<linux/sched/exec_state.h>)
#include <linux/sched/exec_state.h>

/* 7.x (7.2 has it) moved dumpability and its namespace to the exec state. */
static inline bool archpmu_task_dumpable(struct task_struct *task, struct user_namespace **ns)
{
	struct task_exec_state *es;
	bool dumpable;

	rcu_read_lock();
	es = rcu_dereference(task->exec_state);
	dumpable = es->dumpable == TASK_DUMPABLE_OWNER;
	if (!dumpable && ns)
		*ns = get_user_ns(es->user_ns);
	rcu_read_unlock();
	return dumpable;
}
#else
static inline bool archpmu_task_dumpable(struct task_struct *task, struct user_namespace **ns)
{
	struct mm_struct *mm = task->mm;

	if (get_dumpable(mm) == SUID_DUMP_USER)
		return true;
	if (ns)
		*ns = get_user_ns(mm->user_ns);
	return false;
}
#endif

/* The attributes a generic netlink dump's .start was handed. */
static inline struct nlattr **archpmu_genl_dump_attrs(struct netlink_callback *cb)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 2, 0)
	return genl_dumpit_info(cb)->attrs;
#else
	/* 6.2 moved them into a genl_info of the dump's own. */
	return genl_dumpit_info(cb)->info.attrs;
#endif
}

/*
 * A write of a local APIC register. Since 6.6 apic_write() is a static call
 * whose key modules cannot reach; the driver's own method, through the
 * exported (GPL) apic, is what apic_write() called before and still calls.
 */
static inline void archpmu_apic_write(u32 reg, u32 val)
{
	apic->write(reg, val);
}

/*
 * Whether this kernel's perf drives a v6 PMU at 1900H (6.11's "Support
 * Perfmon MSRs aliasing" added these names and moved intel_pmu_init's
 * counter bases there): its reservations then fall outside the bitmaps
 * archpmu shares with it (own/perf_share.c), and reserve nothing.
 */
#ifdef MSR_IA32_PMC_V6_GP0_CTR
#define ARCHPMU_PERF_V6_ADDRESSES	true
#else
#define ARCHPMU_PERF_V6_ADDRESSES	false
#endif

#endif /* ARCHPMU_COMPAT_H */
