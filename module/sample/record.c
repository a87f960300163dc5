// SPDX-License-Identifier: GPL-2.0
/*
 * Writing records into a ring: samples, LOST, THROTTLE and UNTHROTTLE, in
 * perf's layout for sample_type IDENTIFIER | IP | TID | TIME | ID | CPU |
 * PERIOD (| READ, group format with ids) (| CALLCHAIN) (| REGS_USER | STACK_USER)
 * and sample_id_all, so user space
 * can copy them into a perf.data file unchanged.
 */
#include <asm/local64.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/smp.h>

#include "record.h"

/*
 * Every session's throttles and dropped samples on each CPU since the load,
 * for sysfs: counted on the CPU, in NMI or the tick, which an NMI can
 * interrupt, so each add is one instruction (local64).
 */
static DEFINE_PER_CPU(local64_t, cpu_throttled);
static DEFINE_PER_CPU(local64_t, cpu_lost);

void archpmu_sample_cpu_totals(unsigned int cpu, u64 *throttled, u64 *lost)
{
	*throttled = local64_read(per_cpu_ptr(&cpu_throttled, cpu));
	*lost = local64_read(per_cpu_ptr(&cpu_lost, cpu));
}

/* The sample_id trailer of non-sample records. */
struct record_id {
	u32 pid, tid;
	u64 time;
	u64 id;
	u32 cpu, res;
	u64 identifier;
};

struct record_sample {
	struct perf_event_header header;
	u64 identifier;
	u64 ip;
	u32 pid, tid;
	u64 time;
	u64 id;
	u32 cpu, res;
	u64 period;
};

struct record_lost {
	struct perf_event_header header;
	u64 id;
	u64 lost;
	struct record_id sid;
};

struct record_throttle {
	struct perf_event_header header;
	u64 time;
	u64 id;
	u64 stream_id;
	struct record_id sid;
};

/*
 * Written from the tick as well as the PMI: in a task session's records the
 * task then running need not be the session's, so none is named (-1).
 */
static void fill_id(struct record_id *sid, const struct archpmu_sampler *smp, u64 id, u64 now)
{
	sid->pid = smp->task_scope ? U32_MAX : task_tgid_nr(current);
	sid->tid = smp->task_scope ? U32_MAX : task_pid_nr(current);
	sid->time = now;
	sid->id = id;
	sid->cpu = smp_processor_id();
	sid->res = 0;
	sid->identifier = id;
}

/* perf's REGS_USER registers of x86-64 (ARCHPMU_SAMPLE_REGS_USER_MASK), in bit order. */
struct user_regs {
	u64 ax, bx, cx, dx, si, di, bp, sp, ip, flags, cs, ss;
	u64 r8, r9, r10, r11, r12, r13, r14, r15;
};

/* The stack a sample copies from @sp: @want bytes, fewer near the top of user space. */
static u32 stack_dump_size(u32 want, unsigned long sp)
{
	if (sp >= TASK_SIZE_MAX)
		return 0;
	return round_down(min_t(unsigned long, want, TASK_SIZE_MAX - sp), sizeof(u64));
}

/* perf's REGS_USER and STACK_USER parts (perf_output_sample_regs, _ustack). */
static void put_user_part(struct archpmu_ring_handle *h, struct pt_regs *uregs, u32 dump)
{
	u64 abi = uregs ? PERF_SAMPLE_REGS_ABI_64 : PERF_SAMPLE_REGS_ABI_NONE;
	u64 size = dump, dyn;
	struct user_regs v;

	BUILD_BUG_ON(sizeof(v) != sizeof(u64) * hweight64(ARCHPMU_SAMPLE_REGS_USER_MASK));
	archpmu_ring_put(h, &abi, sizeof(abi));
	if (uregs) {
		v = (struct user_regs) {
			.ax = uregs->ax, .bx = uregs->bx, .cx = uregs->cx, .dx = uregs->dx,
			.si = uregs->si, .di = uregs->di, .bp = uregs->bp, .sp = uregs->sp,
			.ip = uregs->ip, .flags = uregs->flags, .cs = uregs->cs, .ss = uregs->ss,
			.r8 = uregs->r8, .r9 = uregs->r9, .r10 = uregs->r10, .r11 = uregs->r11,
			.r12 = uregs->r12, .r13 = uregs->r13, .r14 = uregs->r14,
			.r15 = uregs->r15,
		};
		archpmu_ring_put(h, &v, sizeof(v));
	}
	archpmu_ring_put(h, &size, sizeof(size));
	if (!dump)
		return;
	dyn = archpmu_ring_put_user(h, (const void __user *)user_stack_pointer(uregs), dump);
	archpmu_ring_put(h, &dyn, sizeof(dyn));
}

bool archpmu_record_sample(const struct archpmu_cpu_ctx *ctx, struct archpmu_hw_event *hw,
			   struct pt_regs *regs, u64 period, u64 now)
{
	struct archpmu_sampler *smp = hw->smp;
	struct archpmu_ring *r = &smp->ring;
	struct archpmu_ring_handle h;
	struct record_sample rec;
	u32 size = sizeof(rec), nr_ips = 0, dump = 0;
	struct pt_regs *uregs = NULL;
	u64 *ips = NULL;
	unsigned int i;

	archpmu_record_lost(r, now);
	/*
	 * A user-mode event's PMI may land in the kernel (skid: the task had
	 * entered it): the sample is where user mode left off, so that it names
	 * what was counted and no kernel address reaches a user-only session.
	 */
	if (!user_mode(regs) && (smp->user_only & BIT(hw - smp->hw)) &&
	    !(current->flags & PF_KTHREAD))
		regs = task_pt_regs(current);
	if (smp->read_group)
		size += sizeof(u64) + smp->nr_events * 2 * sizeof(u64);
	if (smp->callchain) {
		nr_ips = archpmu_callchain(regs, !smp->stack_user, &ips);
		size += sizeof(u64) * (1 + nr_ips);
	}
	if (smp->stack_user) {
		uregs = archpmu_user_regs(regs);
		size += 2 * sizeof(u64);	/* abi, size */
		if (uregs) {
			dump = stack_dump_size(smp->stack_user, user_stack_pointer(uregs));
			size += sizeof(struct user_regs) + dump + (dump ? sizeof(u64) : 0);
		}
	}
	if (!archpmu_ring_begin(&h, r, size)) {
		r->lost_id = hw->id;
		local64_inc(&r->lost);
		local64_inc(this_cpu_ptr(&cpu_lost));
		WRITE_ONCE(r->dropped, r->dropped + 1);
		WRITE_ONCE(r->page->lost, r->dropped);
		return false;
	}
	rec.header.type = ARCHPMU_RECORD_SAMPLE;
	rec.header.misc = user_mode(regs) ? ARCHPMU_RECORD_MISC_USER :
			  ARCHPMU_RECORD_MISC_KERNEL;
	rec.header.size = size;
	rec.identifier = hw->id;
	rec.ip = instruction_pointer(regs);
	rec.pid = task_tgid_nr(current);
	rec.tid = task_pid_nr(current);
	rec.time = now;
	rec.id = hw->id;
	rec.cpu = smp_processor_id();
	rec.res = 0;
	rec.period = period;
	archpmu_ring_put(&h, &rec, sizeof(rec));
	if (smp->read_group) {
		u64 nr = smp->nr_events;

		archpmu_ring_put(&h, &nr, sizeof(nr));
		for (i = 0; i < smp->nr_events; i++) {
			u64 v[2] = { archpmu_hw_event_update(ctx, &smp->hw[i]), smp->hw[i].id };

			archpmu_ring_put(&h, v, sizeof(v));
		}
	}
	if (smp->callchain) {
		u64 nr = nr_ips;

		archpmu_ring_put(&h, &nr, sizeof(nr));
		archpmu_ring_put(&h, ips, nr_ips * sizeof(*ips));
	}
	if (smp->stack_user)
		put_user_part(&h, uregs, dump);
	archpmu_ring_end(&h);
	r->page->samples++;
	return true;
}

void archpmu_record_lost(struct archpmu_ring *r, u64 now)
{
	struct archpmu_ring_handle h;
	struct record_lost rec;
	u64 lost;

	if (likely(!local64_read(&r->lost)))
		return;
	/* Taken whole, so that an NMI over the tick cannot report the same drops. */
	lost = local64_xchg(&r->lost, 0);
	if (!lost)
		return;
	if (!archpmu_ring_begin(&h, r, sizeof(rec))) {
		local64_add(lost, &r->lost);
		return;
	}
	rec.header.type = ARCHPMU_RECORD_LOST;
	rec.header.misc = 0;
	rec.header.size = sizeof(rec);
	rec.id = r->lost_id;
	rec.lost = lost;
	fill_id(&rec.sid, container_of(r, struct archpmu_sampler, ring), r->lost_id, now);
	archpmu_ring_put(&h, &rec, sizeof(rec));
	archpmu_ring_end(&h);
}

void archpmu_record_throttle(struct archpmu_hw_event *hw, bool throttle, u64 now)
{
	struct archpmu_ring *r = &hw->smp->ring;
	struct archpmu_ring_handle h;
	struct record_throttle rec;

	if (throttle) {
		local64_inc(this_cpu_ptr(&cpu_throttled));
		WRITE_ONCE(r->throttled, r->throttled + 1);
		WRITE_ONCE(r->page->throttled, r->throttled);
	} else {
		WRITE_ONCE(r->unthrottled, r->unthrottled + 1);
	}
	if (!archpmu_ring_begin(&h, r, sizeof(rec)))
		return;
	rec.header.type = throttle ? ARCHPMU_RECORD_THROTTLE : ARCHPMU_RECORD_UNTHROTTLE;
	rec.header.misc = 0;
	rec.header.size = sizeof(rec);
	rec.time = now;
	rec.id = hw->id;
	rec.stream_id = hw->id;
	fill_id(&rec.sid, hw->smp, hw->id, now);
	archpmu_ring_put(&h, &rec, sizeof(rec));
	archpmu_ring_end(&h);
}
