/* SPDX-License-Identifier: GPL-2.0 */
/* The PMU layer: enumeration of every CPU's PMU (enum.c) and its context. */
#ifndef ARCHPMU_PMU_PMU_H
#define ARCHPMU_PMU_PMU_H

#include "backend.h"
#include "batch.h"
#include "cpu_ctx.h"

int archpmu_enum_init(void);
void archpmu_enum_exit(void);
/*
 * A copy of @cpu's description and, if @ops, its version's ops: -ENXIO out
 * of range, -ENODEV not enumerated.
 */
int archpmu_enum_get(unsigned int cpu, struct archpmu_pmu_desc *desc,
		     const struct archpmu_pmu_ops **ops);
unsigned int archpmu_enum_count(void);
void archpmu_enum_print_summary(void);
const char *archpmu_event_name(unsigned int event);
const char *archpmu_core_type_name(u32 core_type);
void archpmu_read_cpuid_set(struct archpmu_cpuid_set *c);

#endif /* ARCHPMU_PMU_PMU_H */
