// SPDX-License-Identifier: GPL-2.0
/*
 * A sample's call chain (ARCHPMU_SAMPLE_CALLCHAIN), as perf's
 * perf_callchain_kernel() and perf_callchain_user() take it on x86: the
 * kernel part from the interrupted registers through the kernel's own stack
 * unwinder, the user part by following the frame pointers of the task's
 * user stack with copy_from_user_nmi(), which never faults or sleeps. Each
 * part begins with perf's context marker. A frame pointer that leaves the
 * user address space, is misaligned, goes down the stack, or cannot be read
 * ends the chain, nothing more.
 *
 * The chain is built in a per-CPU buffer: the PMI handler never nests on a
 * CPU (the sampling tick runs it with the NMI deferring to it, pmi.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <asm/unwind.h>

#include "sample.h"

#define MAX_STACK_LIMIT		1024

static uint sample_max_stack = 127;

static int max_stack_set(const char *text, const struct kernel_param *kp)
{
	uint v;
	int ret = kstrtouint(text, 0, &v);

	if (ret || !v || v > MAX_STACK_LIMIT) {
		pr_err("sample_max_stack=%.*s: allowed 1-%u frames\n",
		       (int)strcspn(text, "\n"), text, MAX_STACK_LIMIT);
		return -EINVAL;
	}
	WRITE_ONCE(sample_max_stack, v);
	return 0;
}

static const struct kernel_param_ops max_stack_ops = {
	.set = max_stack_set,
	.get = param_get_uint,
};

module_param_cb(sample_max_stack, &max_stack_ops, &sample_max_stack, 0644);
MODULE_PARM_DESC(sample_max_stack, "Frames in a sample's call chain, as perf's kernel.perf_event_max_stack (default 127)");

/* Two context markers and the frames. */
#define BUF_ENTRIES		(MAX_STACK_LIMIT + 2)

static u64 __percpu *chains;

int archpmu_callchain_init(void)
{
	chains = __alloc_percpu(BUF_ENTRIES * sizeof(u64), sizeof(u64));
	return chains ? 0 : -ENOMEM;
}

void archpmu_callchain_exit(void)
{
	free_percpu(chains);
	chains = NULL;
}

struct chain {
	u64 *ip;
	u32 nr, frames, max;
};

static bool chain_add(struct chain *ch, u64 ip)
{
	if (ch->frames >= ch->max)
		return false;
	ch->ip[ch->nr++] = ip;
	ch->frames++;
	return true;
}

static void kernel_part(struct chain *ch, struct pt_regs *regs)
{
	struct unwind_state state;
	unsigned long addr;

	ch->ip[ch->nr++] = PERF_CONTEXT_KERNEL;
	if (!chain_add(ch, instruction_pointer(regs)))
		return;
	/* Registers an interrupt saved (EFLAGS bit 1 set), or only a stack pointer. */
	if (regs->flags & X86_EFLAGS_FIXED)
		unwind_start(&state, current, regs, NULL);
	else
		unwind_start(&state, current, NULL, (unsigned long *)regs->sp);
	for (; !unwind_done(&state); unwind_next_frame(&state)) {
		addr = unwind_get_return_address(&state);
		if (!addr || !chain_add(ch, addr))
			return;
	}
}

static void user_part(struct chain *ch, struct pt_regs *regs)
{
	unsigned long fp = regs->bp;
	struct {
		unsigned long next, ret;
	} frame;

	ch->ip[ch->nr++] = PERF_CONTEXT_USER;
	if (!chain_add(ch, instruction_pointer(regs)))
		return;
	while (ch->frames < ch->max) {
		if (!fp || (fp & (sizeof(long) - 1)) || fp > TASK_SIZE_MAX - sizeof(frame))
			return;
		if (copy_from_user_nmi(&frame, (const void __user *)fp, sizeof(frame)))
			return;
		if (!frame.ret || !chain_add(ch, frame.ret))
			return;
		/* The caller's frame is above this one: anything else is not a chain. */
		if (frame.next <= fp)
			return;
		fp = frame.next;
	}
}

struct pt_regs *archpmu_user_regs(struct pt_regs *regs)
{
	if (user_mode(regs))
		return regs;
	if (!current->mm || (current->flags & PF_KTHREAD))
		return NULL;
	return task_pt_regs(current);
}

u32 archpmu_callchain(struct pt_regs *regs, bool user, u64 **ips)
{
	struct chain ch = {
		.ip = this_cpu_ptr(chains),
		.max = READ_ONCE(sample_max_stack),
	};
	struct pt_regs *uregs = user ? archpmu_user_regs(regs) : NULL;

	if (!user_mode(regs))
		kernel_part(&ch, regs);
	if (uregs)
		user_part(&ch, uregs);
	*ips = ch.ip;
	return ch.nr;
}
