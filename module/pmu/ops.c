// SPDX-License-Identifier: GPL-2.0
/*
 * The PMU operations of each architectural version, as batch steps: v1 has
 * no global MSRs, v2+ add IA32_PERF_GLOBAL_CTRL/STATUS/OVF_CTRL and
 * IA32_FIXED_CTR_CTRL (docs/pmu.md §3). v4's IA32_PERF_GLOBAL_INUSE is
 * never read here: it reports the idle event selects perf leaves behind as
 * in use, and a hypervisor need not emulate it (a #GP would fail sessions).
 */
#include "cpu_ctx.h"

static void v1_save_global(struct archpmu_batch *b, struct archpmu_pmu_saved *sv)
{
}

static void v1_mask(struct archpmu_batch *b, u64 used)
{
}

/*
 * Through archpmu_global_ctrl_local(), which keeps what runs in global_ours
 * (on v1, which has no GLOBAL_CTRL, only that).
 */
static void global_disable(struct archpmu_batch *b, u64 used)
{
	archpmu_batch_modify(b, ARCHPMU_MSR_GLOBAL_CTRL, 0, used);
}

static void global_enable(struct archpmu_batch *b, u64 used)
{
	archpmu_batch_modify(b, ARCHPMU_MSR_GLOBAL_CTRL, used, used);
}

static void v1_restore_global(struct archpmu_batch *b,
			      const struct archpmu_pmu_saved *sv, u64 used)
{
}

static const struct archpmu_pmu_ops pmu_v1_ops = {
	.name = "v1",
	.save_global = v1_save_global,
	.disable = global_disable,
	.enable = global_enable,
	.ack = v1_mask,
	.restore_global = v1_restore_global,
};

static void v2_save_global(struct archpmu_batch *b, struct archpmu_pmu_saved *sv)
{
	archpmu_batch_read(b, ARCHPMU_MSR_FIXED_CTR_CTRL, &sv->fixed_ctrl);
	archpmu_batch_read(b, ARCHPMU_MSR_GLOBAL_CTRL, &sv->global_ctrl);
}

static void v2_ack(struct archpmu_batch *b, u64 used)
{
	archpmu_batch_ack(b, used);
}

static void v2_restore_global(struct archpmu_batch *b,
			      const struct archpmu_pmu_saved *sv, u64 used)
{
	u64 fixed = archpmu_fixed_ctrl_mask(used);

	if (fixed)
		archpmu_batch_modify(b, ARCHPMU_MSR_FIXED_CTR_CTRL, sv->fixed_ctrl, fixed);
	archpmu_batch_ack(b, used);
	archpmu_batch_modify(b, ARCHPMU_MSR_GLOBAL_CTRL, sv->global_ctrl, used);
}

static const struct archpmu_pmu_ops pmu_v2_ops = {
	.name = "v2",
	.save_global = v2_save_global,
	.disable = global_disable,
	.enable = global_enable,
	.ack = v2_ack,
	.restore_global = v2_restore_global,
};

const struct archpmu_pmu_ops *archpmu_pmu_ops_for(const struct archpmu_pmu_desc *d)
{
	if (d->version >= 2)
		return &pmu_v2_ops;
	return &pmu_v1_ops;
}
