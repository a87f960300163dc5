// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs, for the benchmark (bench/) only; not an ABI:
 *   /sys/kernel/debug/archpmu/cross_calls        CPUs reached by cross-calls
 *   /sys/kernel/debug/archpmu/cross_call_rounds  rounds of them: a parallel
 *       round over N CPUs counts N cross-calls and one round
 *   /sys/kernel/debug/archpmu/remote_cross_calls  of the cross-calls, those
 *       to a CPU other than the caller's
 *   /sys/kernel/debug/archpmu/fold_rounds        of those, the periodic folds
 *       of started sessions (so that tests can count an operation's own)
 *   /sys/kernel/debug/archpmu/cross_call_mode    how an operation reaches its
 *       CPUs (root only): 0 parallel, one round for all CPUs (the default);
 *       1 serial, one cross-call per CPU after another; 2 naive, one
 *       cross-call per MSR access, as the msr driver's wrmsr_on_cpu() would do
 *   /sys/kernel/debug/archpmu/pmi_handled, pmi_ns  PMIs the handler took as
 *       its own, on every CPU, and the nanoseconds it spent in them
 *   /sys/kernel/debug/archpmu/sample_ticks  a line per possible CPU: the CPU
 *       and the sampling ticks that ran there (tests)
 *   /sys/kernel/debug/archpmu/fail_model_wrmsr_nth  model backend only: n
 *       makes the n-th model WRMSR from now on raise #GP (tests)
 *   /sys/kernel/debug/archpmu/task_pool_max  model backend only: the most
 *       entries a task session keeps for the children it follows (4096; 0
 *       follows none: tests)
 *   /sys/kernel/debug/archpmu/task_open_delay_ms  model backend only: how long
 *       a task session's COUNT_OPEN waits after its permission check (0-1000;
 *       tests: an exec of the target lands in the open)
 *   /sys/kernel/debug/archpmu/model_drop_next_pmi  model backend only: write a
 *       CPU: its next PMI finds LVTPC masked and is lost (tests);
 *       model_pmis_dropped: the PMIs lost so far
 *   /sys/kernel/debug/archpmu/model_pmi_delay_us  model backend only: what
 *       each PMI the handler takes costs it more, busy (0-1000; tests of
 *       sample_cpu_percent)
 *   /sys/kernel/debug/archpmu/model_live_writes  model backend only: writes
 *       to a counter while it counted, which the SDM forbids (tests: 0)
 *   /sys/kernel/debug/archpmu/fail_cpu_online/   fault injection on the CPU-
 *       online path (kernels with CONFIG_FAULT_INJECTION_DEBUG_FS; tests)
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/seq_file.h>

#include "../count/count.h"
#include "../sample/sample.h"
#include "../task/task.h"
#include "../pmu/model_pmi.h"
#include "../pmu/model_regs.h"
#include "../pmu/pmu.h"
#include "dev.h"

static struct dentry *archpmu_debugfs_dir;

static int cross_calls_get(void *data, u64 *val)
{
	*val = atomic64_read(&archpmu_cross_calls);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(cross_calls_fops, cross_calls_get, NULL, "%llu\n");

static int cross_call_rounds_get(void *data, u64 *val)
{
	*val = atomic64_read(&archpmu_cross_call_rounds);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(cross_call_rounds_fops, cross_call_rounds_get, NULL, "%llu\n");

static int remote_cross_calls_get(void *data, u64 *val)
{
	*val = atomic64_read(&archpmu_remote_cross_calls);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(remote_cross_calls_fops, remote_cross_calls_get, NULL, "%llu\n");

static int fold_rounds_get(void *data, u64 *val)
{
	*val = atomic64_read(&archpmu_fold_rounds);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(fold_rounds_fops, fold_rounds_get, NULL, "%llu\n");

static int pmi_handled_get(void *data, u64 *val)
{
	u64 ns;

	archpmu_pmi_stats(val, &ns);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(pmi_handled_fops, pmi_handled_get, NULL, "%llu\n");

static int pmi_ns_get(void *data, u64 *val)
{
	u64 handled;

	archpmu_pmi_stats(&handled, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(pmi_ns_fops, pmi_ns_get, NULL, "%llu\n");

static int sample_ticks_show(struct seq_file *m, void *unused)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		seq_printf(m, "%u %llu\n", cpu, archpmu_sample_ticks_run(cpu));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sample_ticks);

static int fail_nth_get(void *data, u64 *val)
{
	*val = max(atomic_read(&archpmu_model_wrmsr_fail_nth), 0);
	return 0;
}

static int fail_nth_set(void *data, u64 val)
{
	if (val > INT_MAX)
		return -EINVAL;
	atomic_set(&archpmu_model_wrmsr_fail_nth, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(fail_nth_fops, fail_nth_get, fail_nth_set, "%llu\n");

static int cross_call_mode_get(void *data, u64 *val)
{
	*val = READ_ONCE(archpmu_cross_call_mode);
	return 0;
}

static int cross_call_mode_set(void *data, u64 val)
{
	if (val > ARCHPMU_CROSS_CALL_NAIVE)
		return -EINVAL;
	WRITE_ONCE(archpmu_cross_call_mode, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(cross_call_mode_fops, cross_call_mode_get, cross_call_mode_set,
			 "%llu\n");

static int task_pool_max_get(void *data, u64 *val)
{
	*val = READ_ONCE(archpmu_task_pool_max);
	return 0;
}

static int task_pool_max_set(void *data, u64 val)
{
	if (val > ARCHPMU_TASK_POOL_MAX)
		return -EINVAL;
	WRITE_ONCE(archpmu_task_pool_max, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(task_pool_max_fops, task_pool_max_get, task_pool_max_set, "%llu\n");

static int drop_next_pmi_set(void *data, u64 val)
{
	if (val >= nr_cpu_ids || !cpu_possible(val))
		return -EINVAL;
	archpmu_model_drop_next_pmi(val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(drop_next_pmi_fops, NULL, drop_next_pmi_set, "%llu\n");

static int pmi_delay_get(void *data, u64 *val)
{
	*val = archpmu_model_pmi_delay_us();
	return 0;
}

static int pmi_delay_set(void *data, u64 val)
{
	if (val > ARCHPMU_MODEL_PMI_DELAY_MAX_US)
		return -EINVAL;
	archpmu_model_set_pmi_delay_us(val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(pmi_delay_fops, pmi_delay_get, pmi_delay_set, "%llu\n");

static int pmis_dropped_get(void *data, u64 *val)
{
	*val = archpmu_model_pmis_dropped();
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(pmis_dropped_fops, pmis_dropped_get, NULL, "%llu\n");

static int live_writes_get(void *data, u64 *val)
{
	*val = archpmu_model_live_writes();
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(live_writes_fops, live_writes_get, NULL, "%llu\n");

static int task_open_delay_get(void *data, u64 *val)
{
	*val = READ_ONCE(archpmu_task_open_delay_ms);
	return 0;
}

static int task_open_delay_set(void *data, u64 val)
{
	if (val > ARCHPMU_TASK_OPEN_DELAY_MAX)
		return -EINVAL;
	WRITE_ONCE(archpmu_task_open_delay_ms, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(task_open_delay_fops, task_open_delay_get, task_open_delay_set,
			 "%llu\n");

void archpmu_debugfs_init(void)
{
	archpmu_debugfs_dir = debugfs_create_dir("archpmu", NULL);
	debugfs_create_file_unsafe("cross_calls", 0400, archpmu_debugfs_dir, NULL,
				   &cross_calls_fops);
	debugfs_create_file_unsafe("cross_call_rounds", 0400, archpmu_debugfs_dir, NULL,
				   &cross_call_rounds_fops);
	debugfs_create_file_unsafe("remote_cross_calls", 0400, archpmu_debugfs_dir, NULL,
				   &remote_cross_calls_fops);
	debugfs_create_file_unsafe("cross_call_mode", 0600, archpmu_debugfs_dir, NULL,
				   &cross_call_mode_fops);
	debugfs_create_file_unsafe("fold_rounds", 0400, archpmu_debugfs_dir, NULL,
				   &fold_rounds_fops);
	debugfs_create_file_unsafe("pmi_handled", 0400, archpmu_debugfs_dir, NULL,
				   &pmi_handled_fops);
	debugfs_create_file_unsafe("pmi_ns", 0400, archpmu_debugfs_dir, NULL, &pmi_ns_fops);
	debugfs_create_file("sample_ticks", 0400, archpmu_debugfs_dir, NULL, &sample_ticks_fops);
	if (archpmu_backend->id == ARCHPMU_BACKEND_MODEL) {
		debugfs_create_file_unsafe("fail_model_wrmsr_nth", 0600, archpmu_debugfs_dir,
					   NULL, &fail_nth_fops);
		debugfs_create_file_unsafe("task_pool_max", 0600, archpmu_debugfs_dir, NULL,
					   &task_pool_max_fops);
		debugfs_create_file_unsafe("task_open_delay_ms", 0600, archpmu_debugfs_dir,
					   NULL, &task_open_delay_fops);
		debugfs_create_file_unsafe("model_drop_next_pmi", 0200, archpmu_debugfs_dir,
					   NULL, &drop_next_pmi_fops);
		debugfs_create_file_unsafe("model_pmis_dropped", 0400, archpmu_debugfs_dir,
					   NULL, &pmis_dropped_fops);
		debugfs_create_file_unsafe("model_pmi_delay_us", 0600, archpmu_debugfs_dir,
					   NULL, &pmi_delay_fops);
		debugfs_create_file_unsafe("model_live_writes", 0400, archpmu_debugfs_dir,
					   NULL, &live_writes_fops);
	}
	archpmu_sysfs_debugfs_init(archpmu_debugfs_dir);
}

void archpmu_debugfs_exit(void)
{
	debugfs_remove_recursive(archpmu_debugfs_dir);
}
