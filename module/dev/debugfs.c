// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs, for the benchmark (bench/) only; not an ABI:
 *   /sys/kernel/debug/archpmu/cross_calls        cross-calls made so far
 *   /sys/kernel/debug/archpmu/naive_cross_calls  1: one cross-call per MSR
 *       access, as the msr driver's wrmsr_on_cpu() would do (root only)
 *   /sys/kernel/debug/archpmu/fail_cpu_online/   fault injection on the CPU-
 *       online path (kernels with CONFIG_FAULT_INJECTION_DEBUG_FS; tests)
 */
#include <linux/debugfs.h>
#include <linux/fs.h>

#include "../pmu/pmu.h"
#include "dev.h"

static struct dentry *archpmu_debugfs_dir;

static int cross_calls_get(void *data, u64 *val)
{
	*val = atomic64_read(&archpmu_cross_calls);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(cross_calls_fops, cross_calls_get, NULL, "%llu\n");

void archpmu_debugfs_init(void)
{
	archpmu_debugfs_dir = debugfs_create_dir("archpmu", NULL);
	debugfs_create_file_unsafe("cross_calls", 0400, archpmu_debugfs_dir, NULL,
				   &cross_calls_fops);
	debugfs_create_bool("naive_cross_calls", 0600, archpmu_debugfs_dir,
			    &archpmu_naive_cross_calls);
	archpmu_sysfs_debugfs_init(archpmu_debugfs_dir);
}

void archpmu_debugfs_exit(void)
{
	debugfs_remove_recursive(archpmu_debugfs_dir);
}
