// SPDX-License-Identifier: GPL-2.0
/*
 * The test-only commands of /dev/archpmu, model backend only: one MSR
 * access through the driver's own access layer (ARCHPMU_IOC_MODEL_MSR), and
 * exact event counts injected into the model (ARCHPMU_IOC_MODEL_INJECT).
 */
#include <linux/capability.h>
#include <linux/cpu.h>
#include <linux/smp.h>

#include "../pmu/pmu.h"
#include "../../uapi/archpmu_test.h"
#include "dev.h"

static bool is_model(void)
{
	return archpmu_backend->id == ARCHPMU_BACKEND_MODEL;
}

struct model_msr_args {
	u32 msr;
	bool write;
	u64 val;
	int err;
};

static void model_msr_on_cpu(void *info)
{
	struct model_msr_args *a = info;

	a->err = a->write ? archpmu_wrmsr_local(a->msr, a->val) :
			    archpmu_rdmsr_local(a->msr, &a->val);
}

int archpmu_ioc_model_msr(struct archpmu_ucmd *ucmd)
{
	struct archpmu_model_msr *cmd = ucmd->cmd;
	struct model_msr_args args = {};
	int ret;

	if (!is_model())
		return -EOPNOTSUPP;
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (cmd->flags & ~ARCHPMU_MODEL_MSR_WRITE)
		return -EINVAL;
	ret = archpmu_user_cpu(&cmd->cpu);
	if (ret)
		return ret;
	args.msr = cmd->msr;
	args.write = cmd->flags & ARCHPMU_MODEL_MSR_WRITE;
	args.val = cmd->value;
	cpus_read_lock();
	ret = cpu_online(cmd->cpu) ?
	      smp_call_function_single(cmd->cpu, model_msr_on_cpu, &args, 1) : -ENODEV;
	cpus_read_unlock();
	if (ret)
		return -ENODEV;
	if (args.err)
		return args.err;
	cmd->value = args.val;
	return archpmu_ucmd_respond(ucmd, sizeof(*cmd));
}

struct model_inject_args {
	struct archpmu_model_inject_more ev[1 + ARCHPMU_INJECT_MORE_MAX];
	unsigned int nr;
	bool user;
};

static void model_inject_on_cpu(void *info)
{
	struct model_inject_args *a = info;
	unsigned int i;

	for (i = 0; i < a->nr; i++)
		archpmu_backend->inject(a->ev[i].event, a->ev[i].count, a->user);
}

int archpmu_ioc_model_inject(struct archpmu_ucmd *ucmd)
{
	struct archpmu_model_inject *cmd = ucmd->cmd;
	struct model_inject_args args;
	unsigned int i;
	u32 mode;
	int ret;

	if (!is_model() || !archpmu_backend->inject)
		return -EOPNOTSUPP;
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	mode = cmd->flags & ~ARCHPMU_INJECT_HERE;
	if (mode != ARCHPMU_INJECT_USR && mode != ARCHPMU_INJECT_OS)
		return -EINVAL;
	if (cmd->event > 0xffff || cmd->nr_more > ARCHPMU_INJECT_MORE_MAX || cmd->__reserved)
		return -EINVAL;
	args.ev[0].event = cmd->event;
	args.ev[0].count = cmd->count;
	args.nr = 1 + cmd->nr_more;
	/* Copied in before the cross-call (see session/session.c). */
	if (cmd->nr_more &&
	    copy_from_user(&args.ev[1], u64_to_user_ptr(cmd->more),
			   cmd->nr_more * sizeof(args.ev[1])))
		return -EFAULT;
	for (i = 1; i < args.nr; i++)
		if (args.ev[i].event > 0xffff || args.ev[i].__reserved)
			return -EINVAL;
	args.user = mode == ARCHPMU_INJECT_USR;
	if (cmd->flags & ARCHPMU_INJECT_HERE) {
		/* In the caller's time slice: its task sessions count them. */
		if (cmd->cpu)
			return -EINVAL;
		local_irq_disable();
		model_inject_on_cpu(&args);
		local_irq_enable();
		return 0;
	}
	ret = archpmu_user_cpu(&cmd->cpu);
	if (ret)
		return ret;
	cpus_read_lock();
	ret = cpu_online(cmd->cpu) ?
	      smp_call_function_single(cmd->cpu, model_inject_on_cpu, &args, 1) : -ENODEV;
	cpus_read_unlock();
	return ret ? -ENODEV : 0;
}
