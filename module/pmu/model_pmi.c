// SPDX-License-Identifier: GPL-2.0
/*
 * The model's PMI (model_pmi.h). An overflow of a counter with INT (or its
 * fixed PMI bit) set raises a real NMI on its CPU, an NMI IPI the model sends
 * itself once the step that counted is complete. The driver's handler is
 * told the context the model's tick interrupted (pmi_regs), so samples land
 * in the code that ran, as on hardware; after an injection, the NMI's own
 * context. An NMI handler that reaches the registers in the middle of a step
 * (another NMI source, on this CPU) is refused with -EBUSY, and the model
 * sends the PMI again when the step ends.
 *
 * LVTPC: delivering a PMI masks it (SDM vol. 3, "Local Vector Table": the
 * APIC sets the mask bit as it handles a performance-counter interrupt), and
 * a PMI raised while it is masked is dropped, as a hypervisor may drop it,
 * until the driver unmasks it (pmi_unmask).
 */
#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/ktime.h>
#include <linux/percpu.h>
#include <linux/smp.h>
#include <asm/apic.h>
#include <asm/local.h>
#include <asm/nmi.h>
#include <asm/ptrace.h>

#include "../compat.h"
#include "model_pmi.h"

/* The PMI of one CPU: what the driver's handler is told it interrupted. */
struct model_pmi {
	struct pt_regs regs;	/* a copy: the tick's own frame is gone by then */
	bool regs_valid;	/* until the handler takes them */
	bool refused;		/* an NMI met a step in progress: send again */
	bool lvtpc_masked;	/* since the last PMI sent, until pmi_unmask */
	bool drop_next;		/* tests: the next PMI finds LVTPC masked */
	local_t unseen;		/* NMIs sent that no handler has taken yet */
	unsigned int busy;	/* a step is changing the registers */
};

static DEFINE_PER_CPU(struct model_pmi, model_pmis);
/* Tests: what each PMI the handler takes costs it besides its own work. */
static unsigned int pmi_delay_us;
static atomic64_t pmis_dropped;

/* How long the model waits for its NMI to arrive before it goes on. */
#define MODEL_PMI_WAIT_LOOPS	1000000

/*
 * As on hardware, the PMI is taken before the code that overflowed goes on:
 * the model waits (bounded) until this CPU has taken an NMI since the send,
 * so its NMIs never meet a later step or arrive twice.
 */
static void model_send_pmi(struct model_pmi *p, struct pt_regs *regs)
{
	unsigned int nmis = archpmu_nmi_count();
	unsigned int i;

	if (READ_ONCE(p->lvtpc_masked) || READ_ONCE(p->drop_next)) {
		WRITE_ONCE(p->drop_next, false);
		atomic64_inc(&pmis_dropped);
		return;
	}
	WRITE_ONCE(p->lvtpc_masked, true);
	if (regs) {
		p->regs = *regs;
		WRITE_ONCE(p->regs_valid, true);
	}
	local_inc(&p->unseen);
	apic->send_IPI_mask(cpumask_of(smp_processor_id()), NMI_VECTOR);
	for (i = 0; i < MODEL_PMI_WAIT_LOOPS && archpmu_nmi_count() == nmis; i++)
		cpu_relax();
	WRITE_ONCE(p->regs_valid, false);
}

bool archpmu_model_step_begin(void)
{
	struct model_pmi *p = this_cpu_ptr(&model_pmis);

	if (in_nmi() && READ_ONCE(p->busy)) {
		WRITE_ONCE(p->refused, true);
		return false;
	}
	WRITE_ONCE(p->busy, p->busy + 1);
	barrier();
	return true;
}

void archpmu_model_step_end(struct archpmu_model_regs *r, struct pt_regs *regs)
{
	struct model_pmi *p = this_cpu_ptr(&model_pmis);

	barrier();
	WRITE_ONCE(p->busy, p->busy - 1);
	if (in_nmi() || p->busy)
		return;
	if (r->pmi_pending || READ_ONCE(p->refused)) {
		if (r->quirks & ARCHPMU_MODEL_QUIRK_FOREIGN_ACK)
			r->global_status &= ~r->pmi_pending;
		r->pmi_pending = 0;
		WRITE_ONCE(p->refused, false);
		model_send_pmi(p, regs);
	}
}

struct pt_regs *archpmu_model_pmi_regs(struct pt_regs *nmi_regs)
{
	struct model_pmi *p = this_cpu_ptr(&model_pmis);
	unsigned int delay = READ_ONCE(pmi_delay_us);

	if (delay) {
		/* By the clock the handler's budget reads: udelay runs long under TCG. */
		u64 end = ktime_get_mono_fast_ns() + (u64)delay * NSEC_PER_USEC;

		while (ktime_get_mono_fast_ns() < end)
			cpu_relax();
	}
	if (!READ_ONCE(p->regs_valid))
		return nmi_regs;
	WRITE_ONCE(p->regs_valid, false);
	return &p->regs;
}

/* The sender never interrupts its NMI: the read and the decrement are one step. */
bool archpmu_model_pmi_take(void)
{
	struct model_pmi *p = this_cpu_ptr(&model_pmis);

	if (local_read(&p->unseen) <= 0)
		return false;
	local_dec(&p->unseen);
	return true;
}

void archpmu_model_pmi_unmask(void)
{
	WRITE_ONCE(this_cpu_ptr(&model_pmis)->lvtpc_masked, false);
}

void archpmu_model_drop_next_pmi(unsigned int cpu)
{
	WRITE_ONCE(per_cpu_ptr(&model_pmis, cpu)->drop_next, true);
}

u64 archpmu_model_pmis_dropped(void)
{
	return atomic64_read(&pmis_dropped);
}

u32 archpmu_model_pmi_delay_us(void)
{
	return READ_ONCE(pmi_delay_us);
}

void archpmu_model_set_pmi_delay_us(u32 us)
{
	WRITE_ONCE(pmi_delay_us, us);
}
