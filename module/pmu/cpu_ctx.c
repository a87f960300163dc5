// SPDX-License-Identifier: GPL-2.0
/*
 * The per-CPU PMU context; cpu_ctx.h has its NMI-safety contract.
 */
#include <linux/lockdep.h>

#include "cpu_ctx.h"

DEFINE_PER_CPU(struct archpmu_cpu_ctx, archpmu_cpu_ctx);
/* Process-context readers of the contexts' enumeration fields (cpu_ctx.h). */
DEFINE_MUTEX(archpmu_enum_lock);

int archpmu_ctx_index(u32 counter)
{
	u32 idx = counter & 0xff;

	if (counter & ~(ARCHPMU_COUNTER_FIXED | 0xff))
		return -1;
	if (counter & ARCHPMU_COUNTER_FIXED)
		return idx < ARCHPMU_LEGACY_FIXED ? ARCHPMU_LEGACY_GP + idx : -1;
	return idx < ARCHPMU_LEGACY_GP ? idx : -1;
}

/* After the programming ops: only a fully programmed claim gets owners. */
void archpmu_ctx_claim_local(struct archpmu_batch *b)
{
	struct archpmu_cpu_ctx *ctx = this_cpu_ptr(&archpmu_cpu_ctx);
	const struct archpmu_ctx_change *ch = b->arg;
	unsigned int i;
	int idx;

	lockdep_assert_irqs_disabled();
	if (b->err)
		return;
	for (i = 0; i < ch->nr; i++) {
		idx = archpmu_ctx_index(ch->hw[i].counter);
		if (idx >= 0)
			WRITE_ONCE(ctx->owner[idx], &ch->hw[i]);
	}
	WRITE_ONCE(ctx->active, ctx->active | ch->used);
}

/* Before the ops that stop and put back the counters. */
void archpmu_ctx_release_local(struct archpmu_batch *b)
{
	struct archpmu_cpu_ctx *ctx = this_cpu_ptr(&archpmu_cpu_ctx);
	const struct archpmu_ctx_change *ch = b->arg;
	unsigned int i;
	int idx;

	lockdep_assert_irqs_disabled();
	WRITE_ONCE(ctx->active, ctx->active & ~ch->used);
	for (i = 0; i < ch->nr; i++) {
		idx = archpmu_ctx_index(ch->hw[i].counter);
		if (idx >= 0 && READ_ONCE(ctx->owner[idx]) == &ch->hw[i])
			WRITE_ONCE(ctx->owner[idx], NULL);
	}
}
