/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The two backends of the access layer: the CPU's own PMU (hw.c) and the
 * software model (model.c). Everything above them is shared.
 */
#ifndef ARCHPMU_PMU_BACKEND_H
#define ARCHPMU_PMU_BACKEND_H

#include <linux/atomic.h>
#include <linux/types.h>

struct pt_regs;

#include "arch_pmu.h"

/*
 * Each operation acts on the CPU it runs on and is called with interrupts
 * disabled; a #GP is returned as -EIO. msr_read and msr_write are NMI-safe:
 * no locks, no allocation, no printk.
 */
struct archpmu_backend {
	const char *name;
	u32 id;				/* ARCHPMU_BACKEND_* */
	void (*cpuid)(u32 leaf, u32 subleaf, struct archpmu_cpuid_regs *r);
	int (*msr_read)(u32 msr, u64 *val);
	int (*msr_write)(u32 msr, u64 val);
	/* Model only: count @count occurrences of @code at CPL 0 or 3. */
	void (*inject)(u32 code, u64 count, bool user);
	/*
	 * The PMI, in NMI context: the context the overflow interrupted
	 * (model: the code its tick interrupted; NULL: @nmi_regs), and what
	 * the interrupt controller needs after each PMI and when sampling
	 * begins on the CPU (hw: LVTPC in NMI mode, unmasked; NULL: nothing).
	 */
	struct pt_regs *(*pmi_regs)(struct pt_regs *nmi_regs);
	void (*pmi_unmask)(void);
	/*
	 * Model only, in NMI context: whether this NMI may be one the model
	 * sent to this CPU that no handler has seen yet (consumed here): its
	 * overflow may already have been handled, by an NMI that came first.
	 */
	bool (*pmi_take)(void);
	/* Model only: the CPU came online / goes offline (runs on it). */
	void (*cpu_online)(void);
	void (*cpu_offline)(void);
};

extern const struct archpmu_backend archpmu_hw_backend;
extern const struct archpmu_backend archpmu_model_backend;
extern const struct archpmu_backend *archpmu_backend;

/* hw.c: whether the boot CPU has an architectural PMU; if not, @why says why. */
int archpmu_hw_probe(char *why, size_t len);

/* model.c */
int archpmu_model_init(void);
/*
 * Test-only (debugfs fail_model_wrmsr_nth, model backend only): when set to
 * n, the n-th model WRMSR from then on, on any CPU, raises #GP (-EIO), as a
 * hypervisor that refuses an MSR would.
 */
extern atomic_t archpmu_model_wrmsr_fail_nth;

#endif /* ARCHPMU_PMU_BACKEND_H */
