// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/archpmu and its ioctl dispatcher. Each command has a size-prefixed
 * struct (uapi/archpmu.h); the dispatcher checks the size against the
 * command's first layout and copies it in with copy_struct_from_user, so
 * structs can grow without new command numbers.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/nospec.h>
#include <linux/uaccess.h>

#include "archpmu.h"
#include "compat.h"

union archpmu_ucmd_buffer {
	struct archpmu_info info;
	struct archpmu_cpu_info cpu_info;
	struct archpmu_model_msr model_msr;
	struct archpmu_model_inject model_inject;
	struct archpmu_count_open count_open;
	struct archpmu_count_ctl count_ctl;
	struct archpmu_count_read count_read;
};

struct archpmu_ucmd {
	struct archpmu_file *file;
	unsigned int ioctl;
	void __user *ubuffer;
	u32 user_size;
	void *cmd;
};

struct archpmu_ioctl_op {
	unsigned int size;
	unsigned int min_size;
	unsigned int ioctl_num;
	int (*execute)(struct archpmu_ucmd *ucmd);
};

u64 archpmu_capabilities(void)
{
	u64 caps = ARCHPMU_CAP_INFO | ARCHPMU_CAP_CPU_INFO | ARCHPMU_CAP_COUNT;

	if (archpmu_backend->id == ARCHPMU_BACKEND_MODEL)
		caps |= ARCHPMU_CAP_MODEL_MSR | ARCHPMU_CAP_MODEL_INJECT;
	return caps;
}

static int archpmu_respond(struct archpmu_ucmd *ucmd, size_t cmd_len)
{
	if (copy_to_user(ucmd->ubuffer, ucmd->cmd,
			 min_t(size_t, ucmd->user_size, cmd_len)))
		return -EFAULT;
	return 0;
}

static bool all_zero(const void *p, size_t len)
{
	return !memchr_inv(p, 0, len);
}

/* A CPU number from user space, checked and clamped against speculation. */
static int archpmu_user_cpu(u32 *cpu)
{
	if (*cpu >= nr_cpu_ids)
		return -ENXIO;
	*cpu = array_index_nospec(*cpu, nr_cpu_ids);
	return 0;
}

static int archpmu_ioc_info(struct archpmu_ucmd *ucmd)
{
	struct archpmu_info *cmd = ucmd->cmd;

	if (cmd->flags || cmd->__reserved0 ||
	    !all_zero(cmd->__reserved, sizeof(cmd->__reserved)))
		return -EINVAL;
	cmd->abi_version = ARCHPMU_ABI_VERSION;
	cmd->backend = archpmu_backend->id;
	cmd->capabilities = archpmu_capabilities();
	cmd->nr_cpu_ids = nr_cpu_ids;
	cmd->nr_cpus_online = num_online_cpus();
	cmd->nr_cpus_enumerated = archpmu_enum_count();
	cmd->max_gp_counters = ARCHPMU_LEGACY_GP;
	cmd->max_fixed_counters = ARCHPMU_LEGACY_FIXED;
	return archpmu_respond(ucmd, sizeof(*cmd));
}

static int archpmu_ioc_cpu_info(struct archpmu_ucmd *ucmd)
{
	struct archpmu_cpu_info *cmd = ucmd->cmd;
	struct archpmu_pmu_desc d;
	int ret;

	if (cmd->flags || !all_zero(cmd->__reserved, sizeof(cmd->__reserved)))
		return -EINVAL;
	ret = archpmu_user_cpu(&cmd->cpu);
	if (ret)
		return ret;
	ret = archpmu_enum_get(cmd->cpu, &d);
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
	return archpmu_respond(ucmd, sizeof(*cmd));
}

static int archpmu_ioc_model_msr(struct archpmu_ucmd *ucmd)
{
	struct archpmu_model_msr *cmd = ucmd->cmd;
	struct archpmu_msr_op op;
	struct archpmu_batch batch = { .ops = &op, .nr = 1 };
	int ret;

	if (archpmu_backend->id != ARCHPMU_BACKEND_MODEL)
		return -EOPNOTSUPP;
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (cmd->flags & ~ARCHPMU_MODEL_MSR_WRITE)
		return -EINVAL;
	ret = archpmu_user_cpu(&cmd->cpu);
	if (ret)
		return ret;
	memset(&op, 0, sizeof(op));
	op.msr = cmd->msr;
	op.kind = cmd->flags & ARCHPMU_MODEL_MSR_WRITE ? ARCHPMU_MSR_WRITE : ARCHPMU_MSR_READ;
	op.val = cmd->value;

	cpus_read_lock();
	ret = cpu_online(cmd->cpu) ? archpmu_batch_run(cmd->cpu, &batch) : -ENODEV;
	cpus_read_unlock();
	if (ret)
		return ret;
	cmd->value = op.val;
	return archpmu_respond(ucmd, sizeof(*cmd));
}

struct model_inject_args {
	u32 code;
	u64 count;
	bool user;
};

static void model_inject_on_cpu(void *info)
{
	struct model_inject_args *a = info;

	archpmu_backend->inject(a->code, a->count, a->user);
}

static int archpmu_ioc_model_inject(struct archpmu_ucmd *ucmd)
{
	struct archpmu_model_inject *cmd = ucmd->cmd;
	struct model_inject_args args;
	int ret;

	if (archpmu_backend->id != ARCHPMU_BACKEND_MODEL || !archpmu_backend->inject)
		return -EOPNOTSUPP;
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (cmd->flags != ARCHPMU_INJECT_USR && cmd->flags != ARCHPMU_INJECT_OS)
		return -EINVAL;
	if (cmd->event > 0xffff)
		return -EINVAL;
	ret = archpmu_user_cpu(&cmd->cpu);
	if (ret)
		return ret;
	args.code = cmd->event;
	args.count = cmd->count;
	args.user = cmd->flags == ARCHPMU_INJECT_USR;
	cpus_read_lock();
	ret = cpu_online(cmd->cpu) ?
	      smp_call_function_single(cmd->cpu, model_inject_on_cpu, &args, 1) : -ENODEV;
	cpus_read_unlock();
	return ret ? -ENODEV : 0;
}

static int archpmu_ioc_count(struct archpmu_ucmd *ucmd)
{
	return archpmu_count_ioctl(ucmd->file, ucmd->ioctl, ucmd->cmd,
				   ucmd->ubuffer, ucmd->user_size);
}

#define IOCTL_OP(_ioctl, _fn, _struct, _last)				\
	{								\
		.size = sizeof(_struct),				\
		.min_size = offsetofend(_struct, _last),		\
		.ioctl_num = _ioctl,					\
		.execute = _fn,						\
	}

static const struct archpmu_ioctl_op archpmu_ioctl_ops[] = {
	IOCTL_OP(ARCHPMU_IOC_INFO, archpmu_ioc_info, struct archpmu_info,
		 __reserved),
	IOCTL_OP(ARCHPMU_IOC_CPU_INFO, archpmu_ioc_cpu_info,
		 struct archpmu_cpu_info, __reserved),
	IOCTL_OP(ARCHPMU_IOC_MODEL_MSR, archpmu_ioc_model_msr,
		 struct archpmu_model_msr, value),
	IOCTL_OP(ARCHPMU_IOC_MODEL_INJECT, archpmu_ioc_model_inject,
		 struct archpmu_model_inject, count),
	IOCTL_OP(ARCHPMU_IOC_COUNT_OPEN, archpmu_ioc_count,
		 struct archpmu_count_open, __reserved),
	IOCTL_OP(ARCHPMU_IOC_COUNT_START, archpmu_ioc_count,
		 struct archpmu_count_ctl, flags),
	IOCTL_OP(ARCHPMU_IOC_COUNT_STOP, archpmu_ioc_count,
		 struct archpmu_count_ctl, flags),
	IOCTL_OP(ARCHPMU_IOC_COUNT_RESET, archpmu_ioc_count,
		 struct archpmu_count_ctl, flags),
	IOCTL_OP(ARCHPMU_IOC_COUNT_READ, archpmu_ioc_count,
		 struct archpmu_count_read, timestamp_ns),
};

static long archpmu_fops_ioctl(struct file *filp, unsigned int cmd,
			       unsigned long arg)
{
	const struct archpmu_ioctl_op *op = NULL;
	union archpmu_ucmd_buffer buf;
	struct archpmu_ucmd ucmd = {};
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(archpmu_ioctl_ops); i++)
		if (archpmu_ioctl_ops[i].ioctl_num == cmd)
			op = &archpmu_ioctl_ops[i];
	if (!op)
		return -ENOTTY;

	ucmd.file = filp->private_data;
	ucmd.ioctl = cmd;
	ucmd.ubuffer = (void __user *)arg;
	ret = get_user(ucmd.user_size, (u32 __user *)ucmd.ubuffer);
	if (ret)
		return ret;
	if (ucmd.user_size < op->min_size)
		return -EINVAL;
	if (ucmd.user_size > PAGE_SIZE)
		return -E2BIG;
	ucmd.cmd = &buf;
	ret = copy_struct_from_user(ucmd.cmd, op->size, ucmd.ubuffer,
				    ucmd.user_size);
	if (ret)
		return ret;
	return op->execute(&ucmd);
}

static int archpmu_fops_open(struct inode *inode, struct file *filp)
{
	filp->private_data = archpmu_file_alloc();
	return filp->private_data ? 0 : -ENOMEM;
}

static int archpmu_fops_release(struct inode *inode, struct file *filp)
{
	archpmu_file_release(filp->private_data);
	return 0;
}

static const struct file_operations archpmu_fops = {
	.owner = THIS_MODULE,
	.open = archpmu_fops_open,
	.release = archpmu_fops_release,
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
