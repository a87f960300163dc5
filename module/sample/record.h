/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The records a ring carries, perf's own (uapi/archpmu.h lists them),
 * written on the ring's CPU in NMI, in the sampling tick, as a task
 * session's gate closes (task_gate.c) or in a START, STOP or CPU-down batch
 * (pmi.c's restart); the last two with interrupts off.
 */
#ifndef ARCHPMU_SAMPLE_RECORD_H
#define ARCHPMU_SAMPLE_RECORD_H

#include "sample.h"

struct pt_regs;

/* A sample of @hw's overflow; false if the ring was full (counted as lost). */
bool archpmu_record_sample(const struct archpmu_cpu_ctx *ctx, struct archpmu_hw_event *hw,
			   struct pt_regs *regs, u64 period, u64 now);
/* A LOST record for the samples dropped so far, if there are any and room. */
void archpmu_record_lost(struct archpmu_ring *r, u64 now);
/* A THROTTLE (@throttle) or UNTHROTTLE record for @hw. */
void archpmu_record_throttle(struct archpmu_hw_event *hw, bool throttle, u64 now);

#endif /* ARCHPMU_SAMPLE_RECORD_H */
