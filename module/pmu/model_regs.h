/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The register file of one modelled logical CPU and its RDMSR/WRMSR
 * semantics (docs/pmu.md §3). Portable: the unit tests drive it directly.
 */
#ifndef ARCHPMU_MODEL_REGS_H
#define ARCHPMU_MODEL_REGS_H

#include "arch_pmu.h"

/*
 * What real systems do beyond the SDM, for the tests to show (the model_quirks
 * module parameter, a mask of these):
 *   INUSE_GP  IA32_PERF_GLOBAL_INUSE raises #GP, as under a hypervisor that
 *             reports PMU v4 but does not emulate it.
 *   FREEZE_ON_PMI  DEBUGCTL.FREEZE_PERFMON_ON_PMI, as firmware or an older
 *             kernel may leave it: an overflow that raises a PMI clears
 *             GLOBAL_CTRL (v2-3) or sets GLOBAL_STATUS.CTR_Frz, which stops
 *             every counter until it is acked (v4+).
 *   FOREIGN_ACK  another NMI handler that runs first (perf's, registered
 *             earlier) acks every GLOBAL_STATUS bit of the PMI's overflows
 *             before archpmu's handler reads it.
 */
#define ARCHPMU_MODEL_QUIRK_INUSE_GP		0x1ULL
#define ARCHPMU_MODEL_QUIRK_FREEZE_ON_PMI	0x2ULL
#define ARCHPMU_MODEL_QUIRK_FOREIGN_ACK		0x4ULL
#define ARCHPMU_MODEL_QUIRKS			0x7ULL	/* every quirk */

/* IA32_PERF_METRICS' fields: level 1 (4), then level 2 (4). */
#define ARCHPMU_MODEL_TD_FIELDS	8

struct archpmu_model_regs {
	const struct archpmu_pmu_desc *desc;	/* the layout being modelled */
	u64 quirks;				/* ARCHPMU_MODEL_QUIRK_* */
	u64 evtsel[ARCHPMU_NR_GP];
	u64 pmc[ARCHPMU_NR_GP];
	u64 fixed[ARCHPMU_NR_FIXED];
	u64 fixed_ctrl;
	u64 global_ctrl;
	u64 global_status;
	/*
	 * IA32_PERF_METRICS as the slots of each of its categories since it
	 * was written (model_metrics.c), in 1/255 slots.
	 */
	u64 td[ARCHPMU_MODEL_TD_FIELDS];
	/*
	 * Overflows that request a PMI (INT, or the fixed counter's PMI bit),
	 * busy-mask bits: the backend delivers the interrupt and clears them.
	 */
	u64 pmi_pending;
	/*
	 * Writes to a counter while it counted (SDM 18.2.1.1: clear EN before
	 * writing IA32_PMCx). Undefined on hardware; the model takes the value
	 * and counts the write, for the tests.
	 */
	u64 live_writes;
};

/* Power-on state: everything 0, GLOBAL_CTRL enables the GP counters. */
void archpmu_model_regs_reset(struct archpmu_model_regs *r,
			      const struct archpmu_pmu_desc *desc, u64 quirks);

/* Both return 0, or -EIO where the CPU would raise #GP. */
int archpmu_model_rdmsr(const struct archpmu_model_regs *r, u32 msr, u64 *val);
int archpmu_model_wrmsr(struct archpmu_model_regs *r, u32 msr, u64 val);

/* model.c: every CPU's live_writes so far. */
u64 archpmu_model_live_writes(void);

/* IA32_PERF_GLOBAL_INUSE as the register file stands. */
u64 archpmu_model_inuse(const struct archpmu_model_regs *r);

/*
 * Counting. Enabled counters (EN or the fixed ring bits, GLOBAL_CTRL on v2+,
 * not frozen on v4+, matching USR/OS) advance; a wrap at the width sets the
 * counter's GLOBAL_STATUS bit (v2+), and its pmi_pending bit when the
 * counter requests a PMI (on v1 too).
 *
 * archpmu_model_inject: @count occurrences of @code (event | umask << 8) in
 * one cycle at CPL 3 (@user) or 0. CMASK counts the cycle once if the
 * occurrences reach it (EQ: equal it; INV: the opposite); edge counts one
 * assertion.
 *
 * archpmu_model_advance: @ns of execution at CPL 3 (@user) or 0, at the
 * documented per-event rates (archpmu_model_rate), scaled by @percent.
 */
void archpmu_model_inject(struct archpmu_model_regs *r, u32 code, u64 count,
			  bool user);
void archpmu_model_advance(struct archpmu_model_regs *r, u64 ns, bool user,
			   u32 percent);
/*
 * archpmu_model_advance up to the first overflow that requests a PMI, so
 * that the PMI comes when it would on hardware and the handler's reload
 * takes effect for the rest of @ns: returns the nanoseconds not yet run.
 */
u64 archpmu_model_advance_to_pmi(struct archpmu_model_regs *r, u64 ns, bool user,
				 u32 percent);
/*
 * IA32_PERF_METRICS (model_metrics.c): read, write, and what an injection of
 * @code or @ns of execution adds while fixed counter 3 and the metrics count.
 */
u64 archpmu_model_metrics_read(const struct archpmu_model_regs *r);
void archpmu_model_metrics_write(struct archpmu_model_regs *r, u64 val);
void archpmu_model_metrics_inject(struct archpmu_model_regs *r, u32 code, u64 count);
void archpmu_model_metrics_advance(struct archpmu_model_regs *r, u64 ns, u32 percent);

/* Events per microsecond of event @code in the model; 0 if it never occurs. */
u64 archpmu_model_rate(u32 code);
/* The model's core clock, cycles per microsecond. */
#define ARCHPMU_MODEL_CYCLES_PER_US	3000

#endif /* ARCHPMU_MODEL_REGS_H */
