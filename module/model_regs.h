/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The register file of one modelled logical CPU and its RDMSR/WRMSR
 * semantics (pmu-spec.md §3). Portable: the unit tests drive it directly.
 */
#ifndef ARCHPMU_MODEL_REGS_H
#define ARCHPMU_MODEL_REGS_H

#include "arch_pmu.h"

struct archpmu_model_regs {
	const struct archpmu_pmu_desc *desc;	/* the layout being modelled */
	u64 evtsel[ARCHPMU_LEGACY_GP];
	u64 pmc[ARCHPMU_LEGACY_GP];
	u64 fixed[ARCHPMU_LEGACY_FIXED];
	u64 fixed_ctrl;
	u64 global_ctrl;
	u64 global_status;
	u64 perf_metrics;
};

/* Power-on state: everything 0, GLOBAL_CTRL enables the GP counters. */
void archpmu_model_regs_reset(struct archpmu_model_regs *r,
			      const struct archpmu_pmu_desc *desc);

/* Both return 0, or -EIO where the CPU would raise #GP. */
int archpmu_model_rdmsr(const struct archpmu_model_regs *r, u32 msr, u64 *val);
int archpmu_model_wrmsr(struct archpmu_model_regs *r, u32 msr, u64 val);

/* IA32_PERF_GLOBAL_INUSE as the register file stands. */
u64 archpmu_model_inuse(const struct archpmu_model_regs *r);

#endif /* ARCHPMU_MODEL_REGS_H */
