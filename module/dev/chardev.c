// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/archpmu: the device-level commands (INFO, CPU_INFO, COUNT_OPEN and
 * the test-only model commands) in a table indexed by _IOC_NR (ucmd.h).
 * A session is a file of its own (session/session_fd.c): the device file
 * holds no state.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/nospec.h>

#include "../session/session.h"
#include "../../uapi/archpmu_test.h"
#include "dev.h"

u64 archpmu_capabilities(void)
{
	u64 caps = ARCHPMU_CAP_INFO | ARCHPMU_CAP_CPU_INFO | ARCHPMU_CAP_COUNT |
		   ARCHPMU_CAP_SESSION_FD | ARCHPMU_CAP_OPEN_START | ARCHPMU_CAP_SAMPLE |
		   ARCHPMU_CAP_REGS | ARCHPMU_CAP_NETLINK | ARCHPMU_CAP_MULTIPLEX |
		   ARCHPMU_CAP_COUNTER_MASK | ARCHPMU_CAP_UNPRIVILEGED | ARCHPMU_CAP_CALLCHAIN |
		   ARCHPMU_CAP_USER_STACK | ARCHPMU_CAP_PERF_METRICS | ARCHPMU_CAP_CORE_TYPE |
		   ARCHPMU_CAP_CORE_TYPE_SAMPLE | ARCHPMU_CAP_READ_SUM;

	if (IS_ENABLED(CONFIG_ARCHPMU_TEST) && archpmu_backend->id == ARCHPMU_BACKEND_MODEL)
		caps |= ARCHPMU_CAP_MODEL_MSR | ARCHPMU_CAP_MODEL_INJECT;
	if (archpmu_task_supported())
		caps |= ARCHPMU_CAP_TASK | ARCHPMU_CAP_ENABLE_ON_EXEC | ARCHPMU_CAP_TASK_SAMPLE;
	return caps & ~archpmu_hidden_caps();
}

static bool all_zero(const void *p, size_t len)
{
	return !memchr_inv(p, 0, len);
}

int archpmu_user_cpu(u32 *cpu)
{
	if (*cpu >= nr_cpu_ids)
		return -ENXIO;
	*cpu = array_index_nospec(*cpu, nr_cpu_ids);
	return 0;
}

static int archpmu_ioc_info(struct archpmu_ucmd *ucmd)
{
	struct archpmu_info *cmd = ucmd->cmd;

	if (cmd->flags || !all_zero(cmd->__reserved, sizeof(cmd->__reserved)))
		return -EINVAL;
	cmd->abi_version = ARCHPMU_ABI_VERSION;
	cmd->backend = archpmu_backend->id;
	cmd->capabilities = archpmu_capabilities();
	cmd->nr_cpu_ids = nr_cpu_ids;
	cmd->nr_cpus_online = num_online_cpus();
	cmd->nr_cpus_enumerated = archpmu_enum_count();
	cmd->max_gp_counters = ARCHPMU_NR_GP;
	cmd->max_fixed_counters = ARCHPMU_NR_FIXED;
	cmd->privilege = archpmu_privilege();
	return archpmu_ucmd_respond(ucmd, sizeof(*cmd));
}

static int archpmu_ioc_cpu_info(struct archpmu_ucmd *ucmd)
{
	struct archpmu_cpu_info *cmd = ucmd->cmd;
	struct archpmu_pmu_desc d;
	int ret;

	if (cmd->flags || cmd->__reserved0 ||
	    !all_zero(cmd->__reserved, sizeof(cmd->__reserved)))
		return -EINVAL;
	ret = archpmu_user_cpu(&cmd->cpu);
	if (ret)
		return ret;
	ret = archpmu_enum_get(cmd->cpu, &d, NULL);
	if (ret)
		return ret;
	cmd->version = d.version;
	cmd->pmu_flags = d.flags;
	cmd->core_type = d.core_type;
	cmd->native_model_id = d.native_model_id;
	cmd->nr_gp = d.nr_gp;
	cmd->gp_width = d.gp_width;
	cmd->nr_fixed = d.nr_fixed;
	cmd->fixed_width = d.fixed_width;
	cmd->events_len = d.events_len;
	cmd->gp_mask = d.gp_mask;
	cmd->fixed_mask = d.fixed_mask;
	cmd->events_mask = d.events_mask;
	cmd->perf_capabilities = d.perf_capabilities;
	memcpy(cmd->cpuid_0a, d.cpuid_0a, sizeof(cmd->cpuid_0a));
	cmd->cpuid_01_eax = d.cpuid_01_eax;
	return archpmu_ucmd_respond(ucmd, sizeof(*cmd));
}

/* A session is a file of its own: its commands go to that file, not to this one. */
static int archpmu_ioc_count_open(struct archpmu_ucmd *ucmd)
{
	return archpmu_session_open(ucmd->cmd, ucmd->ubuffer, ucmd->user_size);
}

static const struct archpmu_ioctl_op archpmu_ioctl_ops[] = {
	ARCHPMU_IOCTL_OP(INFO, archpmu_ioc_info, struct archpmu_info, __reserved),
	ARCHPMU_IOCTL_OP(CPU_INFO, archpmu_ioc_cpu_info, struct archpmu_cpu_info,
			 __reserved),
#ifdef CONFIG_ARCHPMU_TEST
	ARCHPMU_IOCTL_OP(MODEL_MSR, archpmu_ioc_model_msr, struct archpmu_model_msr,
			 value),
	ARCHPMU_IOCTL_OP(MODEL_INJECT, archpmu_ioc_model_inject,
			 struct archpmu_model_inject, count),
#endif
	ARCHPMU_IOCTL_OP(REGS, archpmu_ioc_regs, struct archpmu_regs_read, timestamp_ns),
	ARCHPMU_IOCTL_OP(COUNT_OPEN, archpmu_ioc_count_open,
			 struct archpmu_count_open, __reserved),
};

static long archpmu_fops_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	return archpmu_ucmd_dispatch(archpmu_ioctl_ops, ARRAY_SIZE(archpmu_ioctl_ops), NULL,
				     cmd, arg);
}

static const struct file_operations archpmu_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = archpmu_fops_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice archpmu_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "archpmu",
	.fops = &archpmu_fops,
	.groups = archpmu_dev_groups,
	.mode = 0600,
};

int archpmu_chardev_init(void)
{
	int ret = misc_register(&archpmu_misc);

	if (ret)
		pr_err("cannot register /dev/archpmu: %d\n", ret);
	return ret;
}

void archpmu_chardev_exit(void)
{
	misc_deregister(&archpmu_misc);
}
