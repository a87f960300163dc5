/* SPDX-License-Identifier: GPL-2.0 */
/* archpmu: declarations shared by the module's files. */
#ifndef ARCHPMU_H
#define ARCHPMU_H

#include <linux/atomic.h>
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
	/* Model only: count @count occurrences of @code at CPL 0 or 3. */
	void (*inject)(u32 code, u64 count, bool user);
	/* Model only: the CPU came online / goes offline (runs on it). */
	void (*cpu_online)(void);
	void (*cpu_offline)(void);
};

extern const struct archpmu_backend archpmu_hw_backend;
extern const struct archpmu_backend archpmu_model_backend;
extern const struct archpmu_backend *archpmu_backend;

/* hw.c */
int archpmu_hw_probe(char *why, size_t len);

/* model.c */
int archpmu_model_init(void);

/* access.c: all MSR accesses of one operation on one CPU in one cross-call. */
enum archpmu_msr_kind {
	ARCHPMU_MSR_READ,	/* val = MSR */
	ARCHPMU_MSR_WRITE,	/* MSR = val */
	ARCHPMU_MSR_MODIFY,	/* old = MSR; MSR = (old & ~mask) | (val & mask) */
	ARCHPMU_MSR_ACK,	/* old = GLOBAL_STATUS; OVF_CTRL = old & mask, if any */
};

struct archpmu_msr_op {
	u32 msr;
	u32 kind;		/* enum archpmu_msr_kind */
	u64 val;
	u64 mask;
	u64 old;
};

#define ARCHPMU_BATCH_MAX	64

struct archpmu_batch_buf {
	struct archpmu_msr_op ops[ARCHPMU_BATCH_MAX];
	unsigned int nr;
};

void archpmu_batch_add(struct archpmu_batch_buf *buf, u32 kind, u32 msr,
		       u64 val, u64 mask);
int archpmu_batch_buf_run(unsigned int cpu, struct archpmu_batch_buf *buf);
/* The same, but every op runs even after one fails (to unwind and restore). */
int archpmu_batch_buf_run_all(unsigned int cpu, struct archpmu_batch_buf *buf);

struct archpmu_batch {
	struct archpmu_msr_op *ops;
	unsigned int nr;
	unsigned int done;	/* ops completed before an error */
	int err;		/* the first error */
	bool best_effort;	/* go on after an error */
};

int archpmu_batch_run(unsigned int cpu, struct archpmu_batch *b);
extern atomic64_t archpmu_cross_calls;
extern bool archpmu_naive_cross_calls;
void archpmu_read_cpuid_set(struct archpmu_cpuid_set *c);

/* enum.c */
struct dentry;
int archpmu_enum_init(void);
void archpmu_enum_debugfs_init(struct dentry *dir);
void archpmu_enum_exit(void);
int archpmu_enum_get(unsigned int cpu, struct archpmu_pmu_desc *desc);
unsigned int archpmu_enum_count(void);
void archpmu_enum_print_summary(void);
const char *archpmu_event_name(unsigned int event);
const char *archpmu_core_type_name(u32 core_type);

/* perf_share.c */
int archpmu_reserve_gp(u64 gp, u32 *failed);
void archpmu_release_gp(u64 gp);

/* counting.c */
struct archpmu_file;
int archpmu_count_init(void);
void archpmu_count_exit(void);
struct archpmu_file *archpmu_file_alloc(void);
void archpmu_file_release(struct archpmu_file *f);
long archpmu_count_ioctl(struct archpmu_file *f, unsigned int cmd, void *cmd_buf,
			 void __user *ubuf, u32 user_size);
void archpmu_count_cpu_online(unsigned int cpu);
void archpmu_count_cpu_offline(unsigned int cpu);

/* debugfs.c */
void archpmu_debugfs_init(void);
void archpmu_debugfs_exit(void);

/* sysfs.c */
int archpmu_sysfs_cpu_add(unsigned int cpu);
void archpmu_sysfs_cpu_remove(unsigned int cpu);
extern const struct attribute_group *archpmu_dev_groups[];

/* chardev.c */
u64 archpmu_capabilities(void);
int archpmu_chardev_init(void);
void archpmu_chardev_exit(void);

#endif /* ARCHPMU_H */
