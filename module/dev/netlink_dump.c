// SPDX-License-Identifier: GPL-2.0
/*
 * The netlink dumps: GET_SESSIONS (every live session) and GET_PMU_USAGE
 * (every counter of every CPU and its holder). Each .start decides what the
 * asker may see (uapi's privilege rules, from the request's socket, so a
 * privileged program writing to a socket it was handed grants nothing) and,
 * for the usage, builds the table that the dump calls then copy out: for a
 * privileged asker from every CPU's registers (one cross-call per CPU), for
 * anyone else from the sessions alone, so that no register value, and no
 * cross-call, is to be had without CAP_PERFMON.
 */
#include <linux/cpu.h>
#include <linux/nospec.h>
#include <linux/pid_namespace.h>
#include <linux/slab.h>
#include <linux/uidgid.h>
#include <net/sock.h>

#include "../compat.h"
#include "../session/session.h"
#include "dev.h"
#include "netlink.h"

/* What a dump remembers between its calls (cb->ctx). */
struct dump_state {
	struct pid_namespace *ns;	/* the asker's, for pids */
	kuid_t uid;			/* the asker's */
	bool privileged;		/* CAP_PERFMON or CAP_SYS_ADMIN */
	u64 next_id;			/* GET_SESSIONS: resume at this session id, */
	unsigned int next_claim;	/* ... at this CLAIM of it */
	struct usage_entry *usage;	/* GET_PMU_USAGE: the table, and where it is */
	unsigned int nr, pos;
};

struct usage_entry {
	u32 cpu;
	u32 counter;
	u32 holder;			/* ARCHPMU_HOLDER_* */
	struct archpmu_holder who;	/* SESSION (tgid: a reference, put in done) */
	bool full;			/* the asker may see who's process */
	u32 msr;			/* AGENT */
	u64 msr_value;
};

static struct dump_state **state_of(struct netlink_callback *cb)
{
	BUILD_BUG_ON(sizeof(struct dump_state *) > sizeof(cb->ctx));
	return (struct dump_state **)cb->ctx;
}

static int state_new(struct netlink_callback *cb)
{
	const struct sock *sk = NETLINK_CB(cb->skb).sk;
	struct dump_state *st = kzalloc(sizeof(*st), GFP_KERNEL_ACCOUNT);

	if (!st)
		return -ENOMEM;
	st->ns = get_pid_ns(task_active_pid_ns(current));
	/* Both the socket's opener and the sender: as netlink_capable() has it. */
	st->privileged = netlink_capable(cb->skb, CAP_PERFMON) ||
			 netlink_capable(cb->skb, CAP_SYS_ADMIN);
	st->uid = current_uid();
	if (!sk->sk_socket || !sk->sk_socket->file ||
	    !uid_eq(sk->sk_socket->file->f_cred->uid, st->uid))
		st->uid = INVALID_UID;	/* sees no one's process */
	*state_of(cb) = st;
	return 0;
}

static void state_free(struct netlink_callback *cb)
{
	struct dump_state *st = *state_of(cb);
	unsigned int i;

	if (!st)
		return;
	for (i = 0; i < st->nr; i++)
		put_pid(st->usage[i].who.tgid);
	kvfree(st->usage);
	put_pid_ns(st->ns);
	kfree(st);
	*state_of(cb) = NULL;
}

static bool may_see(const struct dump_state *st, const struct archpmu_holder *h)
{
	return st->privileged || (uid_valid(st->uid) && uid_eq(st->uid, h->uid));
}

/* --- GET_SESSIONS --------------------------------------------------------- */

int archpmu_nl_sessions_start(struct netlink_callback *cb)
{
	return state_new(cb);
}

int archpmu_nl_sessions_done(struct netlink_callback *cb)
{
	state_free(cb);
	return 0;
}

int archpmu_nl_sessions_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct dump_state *st = *state_of(cb);
	struct archpmu_session *s;
	void *hdr;
	int ret = 0;

	mutex_lock(&archpmu_own_lock);
	/*
	 * In ascending id (session.c): resume where the last message ended, in
	 * the middle of a session's CLAIMs if it did not fit (the next message
	 * repeats its identity and goes on with its CLAIMs).
	 */
	list_for_each_entry(s, &archpmu_sessions, node) {
		unsigned int claim;

		if (s->holder.id < st->next_id)
			continue;
		if (s->holder.id > st->next_id)
			st->next_claim = 0;	/* that one closed meanwhile */
		claim = st->next_claim;
		hdr = archpmu_nl_begin(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
				       NLM_F_MULTI, ARCHPMU_GENL_CMD_SESSION);
		if (!hdr)
			break;
		ret = archpmu_nl_put_identity(skb, &s->holder, may_see(st, &s->holder), st->ns) ?:
		      archpmu_nl_put_session(skb, &s->cl, s->count.running, &claim);
		if (ret && claim == st->next_claim) {
			genlmsg_cancel(skb, hdr);	/* nothing new in it */
			break;
		}
		genlmsg_end(skb, hdr);
		st->next_id = s->holder.id;
		st->next_claim = claim;
		if (ret)
			break;			/* the rest in the next message */
		st->next_id++;
		st->next_claim = 0;
		ret = 0;
	}
	mutex_unlock(&archpmu_own_lock);
	/* Not one CLAIM fits in an empty message: nothing else can follow. */
	return ret && !skb->len ? ret : skb->len;
}

/* --- GET_PMU_USAGE -------------------------------------------------------- */

static u64 reg_value(const struct archpmu_reg *regs, unsigned int nr, u32 msr)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		if (regs[i].msr == msr)
			return regs[i].value;
	return 0;
}

/* Who holds @counter (context index @idx) of @cpu, as @regs show it. */
static void classify(struct dump_state *st, struct usage_entry *u, unsigned int cpu,
		     int idx, const struct archpmu_reg *regs, unsigned int nr, u64 perf_held,
		     bool perf_all)
{
	const struct archpmu_holder *h = per_cpu(archpmu_cpu_ctx, cpu).holder[idx];
	u64 bit = archpmu_counter_bit(u->counter);
	bool fixed = u->counter & ARCHPMU_COUNTER_FIXED;
	u64 ctl;

	u->cpu = cpu;
	if (h) {
		u->holder = ARCHPMU_HOLDER_SESSION;
		u->who = *h;
		u->who.tgid = get_pid(h->tgid);
		u->full = may_see(st, h);
		return;
	}
	if (!st->privileged) {
		u->holder = ARCHPMU_HOLDER_UNKNOWN;	/* the registers are not read */
		return;
	}
	if (fixed) {
		u->msr = ARCHPMU_MSR_FIXED_CTR_CTRL;
		ctl = reg_value(regs, nr, u->msr) >> ARCHPMU_FIXED_SHIFT(u->counter & 0xff);
		ctl &= ARCHPMU_FIXED_OS | ARCHPMU_FIXED_USR;
	} else {
		u->msr = archpmu_gp_sel_msr(u->counter);
		ctl = reg_value(regs, nr, u->msr) & ARCHPMU_EVTSEL_EN;
	}
	if (!fixed && (perf_held & bit)) {
		u->holder = ARCHPMU_HOLDER_PERF;
	} else if (fixed && perf_all) {
		u->holder = ARCHPMU_HOLDER_PERF;
	} else if (ctl) {
		/* What claims refuse (claim.c's agent_busy): a live enable only. */
		u->holder = ARCHPMU_HOLDER_AGENT;
		u->msr_value = reg_value(regs, nr, u->msr);
	} else {
		u->holder = ARCHPMU_HOLDER_NONE;
	}
}

static int usage_cpu(struct dump_state *st, unsigned int cpu, struct archpmu_reg *regs,
		     u64 perf_held)
{
	struct archpmu_pmu_desc d = {};
	unsigned int nr = 0, i;
	bool perf_all;
	u64 gp;
	int ret;

	/* Under the lock: a session that closes meanwhile is not seen as an agent. */
	mutex_lock(&archpmu_own_lock);
	if (st->privileged)
		ret = archpmu_regs_read_cpu(cpu, regs, &nr, &d);
	else
		ret = archpmu_enum_get(cpu, &d, NULL);
	if (ret) {
		mutex_unlock(&archpmu_own_lock);
		return ret;
	}
	gp = archpmu_gp_driven(&d);
	perf_all = gp && !(gp & ~perf_held);
	for (i = 0; i < ARCHPMU_CTX_COUNTERS; i++) {
		bool fixed = i >= ARCHPMU_NR_GP;
		u32 j = fixed ? i - ARCHPMU_NR_GP : i;
		struct usage_entry *u = &st->usage[st->nr];

		if (!((fixed ? d.fixed_mask : gp) & BIT_ULL(j)))
			continue;
		u->counter = fixed ? ARCHPMU_COUNTER_FIXED | j : j;
		classify(st, u, cpu, i, regs, nr, perf_held, perf_all);
		st->nr++;
	}
	mutex_unlock(&archpmu_own_lock);
	return 0;
}

int archpmu_nl_usage_start(struct netlink_callback *cb)
{
	struct nlattr *cpu_attr = archpmu_genl_dump_attrs(cb)[ARCHPMU_GENL_A_CPU];
	struct archpmu_reg *regs;
	struct dump_state *st;
	unsigned int cpu = 0;
	u64 perf_held = 0;
	int ret;

	/* (6.1 hands .start no extended ack: these errnos come alone.) */
	if (cpu_attr) {
		cpu = nla_get_u32(cpu_attr);
		if (cpu >= nr_cpu_ids)
			return -ENXIO;
		cpu = array_index_nospec(cpu, nr_cpu_ids);
	}
	ret = state_new(cb);
	if (ret)
		return ret;
	st = *state_of(cb);
	regs = kcalloc(ARCHPMU_REGS_MAX, sizeof(*regs), GFP_KERNEL_ACCOUNT);
	if (!regs) {
		ret = -ENOMEM;
		goto out;
	}
	if (st->privileged)
		perf_held = archpmu_perf_held_gp();
	cpus_read_lock();
	st->usage = kvcalloc(cpu_attr ? 1 : num_online_cpus(),
			     ARCHPMU_CTX_COUNTERS * sizeof(*st->usage), GFP_KERNEL_ACCOUNT);
	if (!st->usage) {
		ret = -ENOMEM;
	} else if (cpu_attr) {
		ret = usage_cpu(st, cpu, regs, perf_held);
	} else {
		for_each_online_cpu(cpu) {
			ret = usage_cpu(st, cpu, regs, perf_held);
			if (ret == -ENODEV)
				ret = 0;	/* no PMU there: no counters to show */
			if (ret)
				break;
		}
	}
	cpus_read_unlock();
out:
	kfree(regs);
	if (ret)
		state_free(cb);
	return ret;
}

int archpmu_nl_usage_done(struct netlink_callback *cb)
{
	state_free(cb);
	return 0;
}

static int put_usage(struct sk_buff *skb, const struct dump_state *st,
		     const struct usage_entry *u)
{
	if (nla_put_u32(skb, ARCHPMU_GENL_A_CPU, u->cpu) ||
	    nla_put_u32(skb, ARCHPMU_GENL_A_COUNTER, u->counter) ||
	    nla_put_u32(skb, ARCHPMU_GENL_A_HOLDER, u->holder))
		return -EMSGSIZE;
	if (u->holder == ARCHPMU_HOLDER_SESSION)
		return archpmu_nl_put_identity(skb, &u->who, u->full, st->ns);
	if (u->holder == ARCHPMU_HOLDER_AGENT &&
	    (nla_put_u32(skb, ARCHPMU_GENL_A_MSR, u->msr) ||
	     nla_put_u64_64bit(skb, ARCHPMU_GENL_A_MSR_VALUE, u->msr_value, ARCHPMU_GENL_A_PAD)))
		return -EMSGSIZE;
	return 0;
}

int archpmu_nl_usage_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct dump_state *st = *state_of(cb);
	void *hdr;

	for (; st->pos < st->nr; st->pos++) {
		hdr = archpmu_nl_begin(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
				       NLM_F_MULTI, ARCHPMU_GENL_CMD_COUNTER);
		if (!hdr)
			break;
		if (put_usage(skb, st, &st->usage[st->pos])) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
	}
	return skb->len;
}
