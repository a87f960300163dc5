/* SPDX-License-Identifier: GPL-2.0 */
/* The user interfaces: /dev/archpmu, sysfs and debugfs. */
#ifndef ARCHPMU_DEV_DEV_H
#define ARCHPMU_DEV_DEV_H

#include "../ucmd.h"

struct dentry;

/* chardev.c */
u64 archpmu_capabilities(void);
int archpmu_chardev_init(void);
void archpmu_chardev_exit(void);
/* A CPU number from user space, checked and clamped against speculation. */
int archpmu_user_cpu(u32 *cpu);

/* model_ioctl.c: the test-only model commands (CONFIG_ARCHPMU_TEST) */
int archpmu_ioc_model_msr(struct archpmu_ucmd *ucmd);
int archpmu_ioc_model_inject(struct archpmu_ucmd *ucmd);

/* regs.c */
int archpmu_ioc_regs(struct archpmu_ucmd *ucmd);
struct archpmu_pmu_desc;
/*
 * Every architectural PMU register @cpu has (at most ARCHPMU_REGS_MAX), read
 * on it; *@nr the registers read, @d its enumeration. Under cpus_read_lock().
 */
int archpmu_regs_read_cpu(unsigned int cpu, struct archpmu_reg *regs, unsigned int *nr,
			  struct archpmu_pmu_desc *d);

/* netlink.c: the generic netlink family */
int __init archpmu_netlink_init(void);
void archpmu_netlink_exit(void);

/* sysfs.c */
int archpmu_sysfs_init(void);
void archpmu_sysfs_exit(void);
void archpmu_sysfs_debugfs_init(struct dentry *dir);
extern const struct attribute_group *archpmu_dev_groups[];

/* debugfs.c */
void archpmu_debugfs_init(void);
void archpmu_debugfs_exit(void);

#endif /* ARCHPMU_DEV_DEV_H */
