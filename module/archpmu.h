/* SPDX-License-Identifier: GPL-2.0 */
/* archpmu: declarations shared by the module's files. */
#ifndef ARCHPMU_H
#define ARCHPMU_H

#include <linux/types.h>
#include "arch_pmu.h"

/*
 * The MSR/CPUID access layer. Each operation acts on the CPU it runs on and
 * is called with interrupts disabled; a #GP is returned as -EIO.
 */
struct archpmu_backend {
	const char *name;
	u32 id;				/* ARCHPMU_BACKEND_* */
	void (*cpuid)(u32 leaf, u32 subleaf, struct archpmu_cpuid_regs *r);
	int (*msr_read)(u32 msr, u64 *val);
	int (*msr_write)(u32 msr, u64 val);
};

extern const struct archpmu_backend archpmu_hw_backend;
extern const struct archpmu_backend archpmu_model_backend;
extern const struct archpmu_backend *archpmu_backend;

/* hw.c */
int archpmu_hw_probe(char *why, size_t len);

/* model.c */
int archpmu_model_init(void);

/* access.c: all MSR accesses of one operation on one CPU in one cross-call. */
struct archpmu_msr_op {
	u32 msr;
	bool write;
	u64 val;
};

struct archpmu_batch {
	struct archpmu_msr_op *ops;
	unsigned int nr;
	unsigned int done;	/* ops completed before an error */
	int err;
};

int archpmu_batch_run(unsigned int cpu, struct archpmu_batch *b);
void archpmu_read_cpuid_set(struct archpmu_cpuid_set *c);

/* enum.c */
int archpmu_enum_init(void);
void archpmu_enum_exit(void);
int archpmu_enum_get(unsigned int cpu, struct archpmu_pmu_desc *desc);
unsigned int archpmu_enum_count(void);
void archpmu_enum_print_summary(void);
const char *archpmu_event_name(unsigned int event);
const char *archpmu_core_type_name(u32 core_type);

/* sysfs.c */
int archpmu_sysfs_cpu_add(unsigned int cpu);
void archpmu_sysfs_cpu_remove(unsigned int cpu);
extern const struct attribute_group *archpmu_dev_groups[];

/* chardev.c */
u64 archpmu_capabilities(void);
int archpmu_chardev_init(void);
void archpmu_chardev_exit(void);

#endif /* ARCHPMU_H */
