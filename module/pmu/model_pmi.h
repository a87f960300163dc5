/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The model's PMI (model_pmi.c): its steps, the NMI it sends once a step
 * that overflowed a counter ends, and its local APIC's LVTPC, which masks
 * itself on each PMI and drops PMIs while masked, as a real one does.
 */
#ifndef ARCHPMU_PMU_MODEL_PMI_H
#define ARCHPMU_PMU_MODEL_PMI_H

#include <linux/types.h>

#include "model_regs.h"

struct pt_regs;

/*
 * The model's registers change only in whole steps, on their CPU with
 * interrupts disabled: begin() is false for an NMI handler that meets a step
 * in progress (it is sent again when the step ends); end() sends the PMIs the
 * step raised, telling the handler it interrupted @regs (NULL: its own).
 */
bool archpmu_model_step_begin(void);
void archpmu_model_step_end(struct archpmu_model_regs *r, struct pt_regs *regs);

/* Backend ops (backend.h). */
struct pt_regs *archpmu_model_pmi_regs(struct pt_regs *nmi_regs);
bool archpmu_model_pmi_take(void);
void archpmu_model_pmi_unmask(void);

/*
 * Test-only (dev/debugfs.c): @cpu's next PMI finds LVTPC masked, as one left
 * masked by another NMI handler would (whatever unmasks it meanwhile); the
 * PMIs dropped so far.
 */
void archpmu_model_drop_next_pmi(unsigned int cpu);
u64 archpmu_model_pmis_dropped(void);

/*
 * Test-only (dev/debugfs.c): every PMI the handler takes costs it @us more
 * (its pmi_regs busy-waits), as on a machine whose PMU is slow to reach.
 */
#define ARCHPMU_MODEL_PMI_DELAY_MAX_US	1000
u32 archpmu_model_pmi_delay_us(void);
void archpmu_model_set_pmi_delay_us(u32 us);

#endif /* ARCHPMU_PMU_MODEL_PMI_H */
