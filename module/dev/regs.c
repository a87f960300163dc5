// SPDX-License-Identifier: GPL-2.0
/*
 * ARCHPMU_IOC_REGS: every architectural PMU register of one CPU, read (and
 * never written) on that CPU in one cross-call, through the backend in
 * use. The netlink usage dump reads the same registers (netlink_dump.c).
 */
#include <linux/capability.h>
#include <linux/cpu.h>
#include <linux/ktime.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "../pmu/pmu.h"
#include "dev.h"

static void add(struct archpmu_batch *b, struct archpmu_reg *regs, u32 msr)
{
	regs[b->nr].msr = msr;
	regs[b->nr].__reserved = 0;
	archpmu_batch_read(b, msr, &regs[b->nr].value);
}

int archpmu_regs_read_cpu(unsigned int cpu, struct archpmu_reg *regs, unsigned int *nr,
			  struct archpmu_pmu_desc *d)
{
	struct archpmu_batch *b;
	unsigned int i;
	u64 gp;
	int ret;

	ret = archpmu_enum_get(cpu, d, NULL);
	if (ret)
		return ret;
	if (!cpu_online(cpu))
		return -ENODEV;
	b = kmalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	archpmu_batch_init(b, NULL, NULL, NULL);
	gp = archpmu_gp_driven(d);
	for (i = 0; i < ARCHPMU_NR_GP; i++) {
		if (!(gp & BIT_ULL(i)))
			continue;
		add(b, regs, archpmu_gp_sel_msr(i));
		add(b, regs, archpmu_gp_ctr_msr(i, false));
	}
	for (i = 0; i < ARCHPMU_NR_FIXED; i++)
		if (d->fixed_mask & BIT_ULL(i))
			add(b, regs, ARCHPMU_MSR_FIXED_CTR0 + i);
	if (d->version >= 2) {
		add(b, regs, ARCHPMU_MSR_FIXED_CTR_CTRL);
		add(b, regs, ARCHPMU_MSR_GLOBAL_CTRL);
		add(b, regs, ARCHPMU_MSR_GLOBAL_STATUS);
	}
	if (d->flags & ARCHPMU_PMU_PDCM)
		add(b, regs, ARCHPMU_MSR_PERF_CAPABILITIES);
	if (d->flags & ARCHPMU_PMU_PERF_METRICS)
		add(b, regs, ARCHPMU_MSR_PERF_METRICS);
	/* Last: a hypervisor may report v4 and not emulate it; then it is absent. */
	if (d->version >= 4)
		add(b, regs, ARCHPMU_MSR_GLOBAL_INUSE);
	BUILD_BUG_ON(2 * ARCHPMU_NR_GP + ARCHPMU_NR_FIXED + 6 > ARCHPMU_REGS_MAX);
	*nr = b->nr;
	ret = archpmu_batch_run(cpu, b);
	if (ret && d->version >= 4 && b->done == b->nr - 1)
		ret = 0;
	if (ret || b->done < b->nr)
		*nr = b->done;
	kfree(b);
	return ret;
}

int archpmu_ioc_regs(struct archpmu_ucmd *ucmd)
{
	struct archpmu_regs_read *cmd = ucmd->cmd;
	struct archpmu_pmu_desc d = {};
	struct archpmu_reg *regs;
	unsigned int nr = 0;
	int ret;

	if (!perfmon_capable())
		return -EPERM;
	if (cmd->flags || cmd->__reserved0)
		return -EINVAL;
	ret = archpmu_user_cpu(&cmd->cpu);
	if (ret)
		return ret;
	regs = kcalloc(ARCHPMU_REGS_MAX, sizeof(*regs), GFP_KERNEL);
	if (!regs)
		return -ENOMEM;
	cpus_read_lock();
	ret = archpmu_regs_read_cpu(cmd->cpu, regs, &nr, &d);
	cpus_read_unlock();
	cmd->timestamp_ns = ktime_get_ns();
	if (ret == -EIO || !ret) {
		cmd->version = d.version;
		if (cmd->nr_regs < nr) {
			cmd->nr_regs = nr;
			ret = -ENOSPC;
		} else {
			cmd->nr_regs = nr;
			if (copy_to_user(u64_to_user_ptr(cmd->regs), regs, nr * sizeof(*regs)))
				ret = -EFAULT;
		}
	}
	kfree(regs);
	return archpmu_ucmd_respond(ucmd, sizeof(*cmd)) ?: ret;
}
