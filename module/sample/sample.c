// SPDX-License-Identifier: GPL-2.0
/*
 * A session's sampling: its inputs, a sampler and a ring per CPU, the
 * events' periods, and the session file's mmap and poll.
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/nospec.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "../compat.h"
#include "sample.h"

int archpmu_sample_copy_in(struct archpmu_count_open *cmd,
			   struct archpmu_sample_event *specs, bool *sampling)
{
	bool any = false;
	unsigned int e;

	*sampling = false;
	if (!cmd->sample_events)
		return cmd->sample_flags || cmd->ring_pages || cmd->wakeup_bytes ||
		       cmd->stack_user ? -EINVAL : 0;
	if (cmd->sample_flags & ~(ARCHPMU_SAMPLE_READ | ARCHPMU_SAMPLE_CALLCHAIN |
				  ARCHPMU_SAMPLE_USER_STACK))
		return -EINVAL;
	if (cmd->ring_pages && (!is_power_of_2(cmd->ring_pages) ||
				cmd->ring_pages > ARCHPMU_RING_MAX_PAGES))
		return -EINVAL;
	/* A sample must fit in half a ring, as the rest of it goes on being read. */
	if (!(cmd->sample_flags & ARCHPMU_SAMPLE_USER_STACK) ? cmd->stack_user :
	    !cmd->stack_user || cmd->stack_user % 8 || cmd->stack_user > ARCHPMU_STACK_USER_MAX ||
	    cmd->stack_user > (u64)(cmd->ring_pages ?: ARCHPMU_RING_DEFAULT_PAGES) * PAGE_SIZE / 2)
		return -EINVAL;
	if (copy_from_user(specs, u64_to_user_ptr(cmd->sample_events),
			   cmd->nr_events * sizeof(*specs)))
		return -EFAULT;
	for (e = 0; e < cmd->nr_events; e++) {
		const struct archpmu_sample_event *sp = &specs[e];

		cmd->bad_event = e;
		if ((sp->flags & ~ARCHPMU_SAMPLE_FREQ) || sp->__reserved ||
		    ((sp->flags & ARCHPMU_SAMPLE_FREQ) && !sp->period))
			return -EINVAL;
		if ((sp->flags & ARCHPMU_SAMPLE_FREQ) && sp->period > archpmu_sample_max_rate())
			return -ERANGE;
		any |= sp->period != 0;
	}
	cmd->bad_event = ~0U;
	if (!any && (cmd->sample_flags & ARCHPMU_SAMPLE_READ))
		return -EINVAL;
	*sampling = any;
	return 0;
}

/*
 * The largest period @counter takes: legacy GP writes sign-extend bit 31;
 * v1 has no GLOBAL_STATUS, so there an overflow is known by the counter's
 * top bit, which a period of half the range or more would never set.
 */
static u64 period_max(const struct archpmu_claim *c, u32 counter)
{
	u64 max = archpmu_claim_width_mask(c, counter);

	if (!(counter & ARCHPMU_COUNTER_FIXED) &&
	    !(c->desc.flags & ARCHPMU_PMU_FULL_WIDTH_WRITE))
		max = min_t(u64, S32_MAX, max);
	if (c->desc.version < 2)
		max >>= 1;
	return max;
}

static int setup_claim(struct archpmu_sampler *smp, struct archpmu_claims *cl,
		       struct archpmu_claim *c, const struct archpmu_sample_event *specs,
		       struct archpmu_count_open *cmd)
{
	unsigned int e;

	smp->hw = c->hw;
	smp->nr_events = cl->nr_events;
	smp->read_group = cmd->sample_flags & ARCHPMU_SAMPLE_READ;
	smp->task_scope = !!cl->scope;
	smp->callchain = cmd->sample_flags & ARCHPMU_SAMPLE_CALLCHAIN;
	if (cmd->sample_flags & ARCHPMU_SAMPLE_USER_STACK)
		smp->stack_user = cmd->stack_user;
	for (e = 0; e < cl->nr_events; e++) {
		struct archpmu_hw_event *hw = &c->hw[e];
		const struct archpmu_sample_event *sp = &specs[e];

		hw->id = sp->id + c->cpu;
		hw->smp = smp;
		if ((cl->ev[e].config & (ARCHPMU_EVTSEL_USR | ARCHPMU_EVTSEL_OS)) ==
		    ARCHPMU_EVTSEL_USR)
			smp->user_only |= BIT(e);
		/* An event for another core type samples nothing here. */
		if (!sp->period || !archpmu_claim_placed(c, e))
			continue;
		hw->period_max = period_max(c, hw->counter);
		if (!(sp->flags & ARCHPMU_SAMPLE_FREQ) && sp->period > hw->period_max) {
			cmd->bad_event = e;
			cmd->bad_cpu = c->cpu;
			return -ERANGE;
		}
		hw->freq = sp->flags & ARCHPMU_SAMPLE_FREQ ? sp->period : 0;
		hw->period = hw->freq ? archpmu_freq_first_period(hw->freq, hw->period_max) :
			     sp->period;
	}
	return 0;
}

int archpmu_sample_setup(struct archpmu_sample *sm, struct archpmu_claims *cl,
			 const struct archpmu_sample_event *specs,
			 struct archpmu_count_open *cmd)
{
	unsigned int i;
	int ret;

	sm->ring_pages = cmd->ring_pages ?: ARCHPMU_RING_DEFAULT_PAGES;
	sm->smp = kvcalloc(cl->nr_cpus, sizeof(*sm->smp), GFP_KERNEL);
	if (!sm->smp)
		return -ENOMEM;
	sm->nr = cl->nr_cpus;
	for (i = 0; i < cl->nr_cpus; i++) {
		ret = setup_claim(&sm->smp[i], cl, &cl->cpus[i], specs, cmd);
		if (ret)
			return ret;
	}
	/* A bad period is refused by name first; each ring is its data and a control page. */
	ret = archpmu_ring_charge(&sm->charge, (unsigned long)cl->nr_cpus * (sm->ring_pages + 1));
	if (ret)
		return ret;
	for (i = 0; i < cl->nr_cpus; i++) {
		ret = archpmu_ring_alloc(&sm->smp[i].ring, cl->cpus[i].cpu, sm->ring_pages,
					 cmd->wakeup_bytes, &sm->wq);
		if (ret)
			return ret;
	}
	ret = archpmu_pmi_get(cl);
	if (ret)
		return ret;
	sm->registered = true;
	sm->cl = cl;
	cl->sampling_hooks = &archpmu_sample_hooks;
	return 0;
}

void archpmu_sample_teardown(struct archpmu_sample *sm)
{
	unsigned int i;

	for (i = 0; i < sm->nr; i++)
		archpmu_ring_free(&sm->smp[i].ring);
	kvfree(sm->smp);
	sm->smp = NULL;
	sm->nr = 0;
	archpmu_ring_uncharge(&sm->charge);
	if (sm->registered)
		archpmu_pmi_put(sm->cl);
	sm->registered = false;
}

int archpmu_sample_mmap(struct archpmu_sample *sm, struct vm_area_struct *vma)
{
	unsigned long per = 1 + (unsigned long)sm->ring_pages;
	unsigned long idx;

	if (!sm->nr)
		return -ENODEV;
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	idx = vma->vm_pgoff / per;
	if (vma->vm_pgoff % per || idx >= sm->nr || vma_pages(vma) != per)
		return -EINVAL;
	idx = array_index_nospec(idx, (unsigned long)sm->nr);
	vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	return archpmu_ring_map(&sm->smp[idx].ring, vma);
}

__poll_t archpmu_sample_poll(struct archpmu_sample *sm, struct file *file,
			     poll_table *wait)
{
	unsigned int i;

	poll_wait(file, &sm->wq, wait);
	for (i = 0; i < sm->nr; i++)
		if (archpmu_ring_ready(&sm->smp[i].ring) >= sm->smp[i].ring.wakeup_bytes)
			return EPOLLIN | EPOLLRDNORM;
	return 0;
}
