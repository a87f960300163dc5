// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "archpmu" (uapi/archpmu_netlink.h), after
 * drivers/thermal/thermal_netlink.c: the sink of notify/, which turns each
 * note into an event on the "events" group, and the two dumps
 * (netlink_dump.c). Everything here runs in process context.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/uidgid.h>

#include "../notify/notify.h"
#include "dev.h"
#include "netlink.h"

/*
 * The only attribute a request may carry is GET_PMU_USAGE's CPU. Each policy
 * spans every attribute of the family and rejects all others: 7.3 parsed a
 * request with the family's maxattr, past the end of a policy sized for its
 * command (a kernel BUG on the first attribute beyond it). Filled at init.
 */
static struct nla_policy no_attr_policy[ARCHPMU_GENL_A_MAX + 1] __ro_after_init;
static struct nla_policy usage_policy[ARCHPMU_GENL_A_MAX + 1] __ro_after_init;

static void __init fill_policies(void)
{
	unsigned int i;

	for (i = 0; i <= ARCHPMU_GENL_A_MAX; i++) {
		no_attr_policy[i].type = NLA_REJECT;
		usage_policy[i].type = NLA_REJECT;
	}
	usage_policy[ARCHPMU_GENL_A_CPU].type = NLA_U32;
}

static const struct genl_ops archpmu_genl_ops[] = {
	{
		.cmd = ARCHPMU_GENL_CMD_GET_SESSIONS,
		.start = archpmu_nl_sessions_start,
		.dumpit = archpmu_nl_sessions_dump,
		.done = archpmu_nl_sessions_done,
		.policy = no_attr_policy,
		.maxattr = ARCHPMU_GENL_A_MAX,
	},
	{
		.cmd = ARCHPMU_GENL_CMD_GET_PMU_USAGE,
		.start = archpmu_nl_usage_start,
		.dumpit = archpmu_nl_usage_dump,
		.done = archpmu_nl_usage_done,
		.policy = usage_policy,
		.maxattr = ARCHPMU_GENL_A_MAX,
	},
};

static const struct genl_multicast_group archpmu_genl_mcgrps[] = {
	/* Its events name every session's process: CAP_SYS_ADMIN to join. */
	{ .name = ARCHPMU_GENL_EVENTS_GROUP, .flags = GENL_MCAST_CAP_SYS_ADMIN },
};

struct genl_family archpmu_genl_family __ro_after_init = {
	.name = ARCHPMU_GENL_NAME,
	.version = ARCHPMU_GENL_VERSION,
	.maxattr = ARCHPMU_GENL_A_MAX,
	.module = THIS_MODULE,
	.parallel_ops = true,	/* the dumps take archpmu's own locks */
	.resv_start_op = 0,	/* every command is validated strictly */
	.ops = archpmu_genl_ops,
	.n_ops = ARRAY_SIZE(archpmu_genl_ops),
	.mcgrps = archpmu_genl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(archpmu_genl_mcgrps),
};

void *archpmu_nl_begin(struct sk_buff *skb, u32 portid, u32 seq, int flags, u8 cmd)
{
	void *hdr = genlmsg_put(skb, portid, seq, &archpmu_genl_family, flags, cmd);

	if (hdr && nla_put_u32(skb, ARCHPMU_GENL_A_VERSION, ARCHPMU_GENL_VERSION)) {
		genlmsg_cancel(skb, hdr);
		return NULL;
	}
	return hdr;
}

int archpmu_nl_put_identity(struct sk_buff *skb, const struct archpmu_holder *h, bool full,
			    struct pid_namespace *ns)
{
	/* A refused asker's session never existed: it has no id. */
	if ((h->id && nla_put_u64_64bit(skb, ARCHPMU_GENL_A_SESSION_ID, h->id,
					ARCHPMU_GENL_A_PAD)) ||
	    nla_put_u32(skb, ARCHPMU_GENL_A_UID, from_kuid_munged(&init_user_ns, h->uid)))
		return -EMSGSIZE;
	if (!full)
		return 0;
	if (nla_put_u32(skb, ARCHPMU_GENL_A_PID, ns ? pid_nr_ns(h->tgid, ns) : h->pid) ||
	    nla_put_string(skb, ARCHPMU_GENL_A_COMM, h->comm))
		return -EMSGSIZE;
	return 0;
}

/*
 * Event @e where it has a counter: one for another core type samples
 * nothing on the session's first CPU, and has no period there.
 */
static const struct archpmu_hw_event *placed_hw(const struct archpmu_claims *cl, unsigned int e)
{
	unsigned int i;

	for (i = 0; i < cl->nr_cpus; i++)
		if (archpmu_claim_placed(&cl->cpus[i], e))
			return &cl->cpus[i].hw[e];
	return &cl->cpus[0].hw[e];
}

static int put_events(struct sk_buff *skb, const struct archpmu_claims *cl)
{
	struct nlattr *nest;
	unsigned int e;

	for (e = 0; e < cl->nr_events; e++) {
		const struct archpmu_hw_event *hw = placed_hw(cl, e);
		u64 freq = READ_ONCE(hw->freq);
		u64 period = freq ?: READ_ONCE(hw->period);

		nest = nla_nest_start(skb, ARCHPMU_GENL_A_EVENT);
		if (!nest ||
		    nla_put_u64_64bit(skb, ARCHPMU_GENL_A_EVENT_CONFIG, cl->ev[e].config,
				      ARCHPMU_GENL_A_PAD) ||
		    (period && nla_put_u64_64bit(skb, ARCHPMU_GENL_A_PERIOD, period,
						 ARCHPMU_GENL_A_PAD)) ||
		    (freq && nla_put_flag(skb, ARCHPMU_GENL_A_FREQ)))
			return -EMSGSIZE;
		nla_nest_end(skb, nest);
	}
	return 0;
}

static int put_claim(struct sk_buff *skb, const struct archpmu_claims *cl,
		     const struct archpmu_claim *c)
{
	struct nlattr *nest = nla_nest_start(skb, ARCHPMU_GENL_A_CLAIM);
	unsigned int e;

	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, ARCHPMU_GENL_A_CPU, c->cpu) ||
	    (!READ_ONCE(c->programmed) && nla_put_flag(skb, ARCHPMU_GENL_A_OFFLINE)))
		goto cancel;
	for (e = 0; e < cl->nr_events; e++)
		if (nla_put_u32(skb, ARCHPMU_GENL_A_COUNTER, c->hw[e].counter))
			goto cancel;
	nla_nest_end(skb, nest);
	return 0;
cancel:
	nla_nest_cancel(skb, nest);
	return -EMSGSIZE;
}

int archpmu_nl_put_session(struct sk_buff *skb, const struct archpmu_claims *cl, bool running,
			   unsigned int *claim)
{
	int ret;

	if (!*claim &&
	    (nla_put_u32(skb, ARCHPMU_GENL_A_SCOPE, ARCHPMU_GENL_SCOPE_CPU) ||
	     (running && nla_put_flag(skb, ARCHPMU_GENL_A_RUNNING)) ||
	     (archpmu_claims_sampling(cl) && nla_put_flag(skb, ARCHPMU_GENL_A_SAMPLING)) ||
	     put_events(skb, cl)))
		return -EMSGSIZE;
	for (; *claim < cl->nr_cpus; (*claim)++) {
		ret = put_claim(skb, cl, &cl->cpus[*claim]);
		if (ret)
			return ret;
	}
	return 0;
}

static int put_refusal(struct sk_buff *skb, const struct archpmu_refusal *r)
{
	u32 holder = ARCHPMU_HOLDER_AGENT;

	if (r->kind == ARCHPMU_REFUSED_SESSION)
		holder = ARCHPMU_HOLDER_SESSION;
	else if (r->kind == ARCHPMU_REFUSED_PERF || r->kind == ARCHPMU_REFUSED_PERF_PINNED ||
		 r->kind == ARCHPMU_REFUSED_PERF_ALL)
		holder = ARCHPMU_HOLDER_PERF;
	if (nla_put_u32(skb, ARCHPMU_GENL_A_CPU, r->cpu) ||
	    nla_put_u32(skb, ARCHPMU_GENL_A_ERRNO, EBUSY) ||
	    nla_put_u32(skb, ARCHPMU_GENL_A_HOLDER, holder) ||
	    (r->event != ~0U && nla_put_u32(skb, ARCHPMU_GENL_A_EVENT_INDEX, r->event)))
		return -EMSGSIZE;
	switch (r->kind) {
	case ARCHPMU_REFUSED_SESSION:
		if (nla_put_u64_64bit(skb, ARCHPMU_GENL_A_HOLDER_SESSION_ID, r->holder_id,
				      ARCHPMU_GENL_A_PAD) ||
		    nla_put_u32(skb, ARCHPMU_GENL_A_HOLDER_PID, r->holder_pid) ||
		    nla_put_string(skb, ARCHPMU_GENL_A_HOLDER_COMM, r->holder_comm))
			return -EMSGSIZE;
		return 0;
	case ARCHPMU_REFUSED_PERF_PINNED:
		if (nla_put_u32(skb, ARCHPMU_GENL_A_COUNTER, r->counter))
			return -EMSGSIZE;
		fallthrough;
	case ARCHPMU_REFUSED_PERF:
	case ARCHPMU_REFUSED_PERF_ALL:
		if (nla_put_u64_64bit(skb, ARCHPMU_GENL_A_COUNTERS, r->counters,
				      ARCHPMU_GENL_A_PAD))
			return -EMSGSIZE;
		break;
	default:
		if (nla_put_u32(skb, ARCHPMU_GENL_A_COUNTER, r->counter))
			return -EMSGSIZE;
		break;
	}
	if (holder == ARCHPMU_HOLDER_AGENT &&
	    (nla_put_u32(skb, ARCHPMU_GENL_A_MSR, r->msr) ||
	     nla_put_u64_64bit(skb, ARCHPMU_GENL_A_MSR_VALUE, r->msr_value, ARCHPMU_GENL_A_PAD)))
		return -EMSGSIZE;
	return 0;
}

static int put_note(struct sk_buff *skb, const struct archpmu_note *n)
{
	unsigned int claim = 0;	/* note_size() leaves room for all of them */
	int ret;

	if (n->cmd == ARCHPMU_GENL_EVENT_UNLOAD)
		return 0;
	ret = archpmu_nl_put_identity(skb, n->cl->holder, true, NULL);
	if (ret)
		return ret;
	switch (n->cmd) {
	case ARCHPMU_GENL_EVENT_SESSION_OPEN:
		return archpmu_nl_put_session(skb, n->cl, n->running, &claim);
	case ARCHPMU_GENL_EVENT_REFUSED:
		return put_refusal(skb, n->refusal);
	case ARCHPMU_GENL_EVENT_FOREIGN_USE:
		if (nla_put_u32(skb, ARCHPMU_GENL_A_CPU, n->cpu) ||
		    nla_put_u32(skb, ARCHPMU_GENL_A_COUNTER, n->counter) ||
		    nla_put_u32(skb, ARCHPMU_GENL_A_MSR, n->msr) ||
		    nla_put_u64_64bit(skb, ARCHPMU_GENL_A_MSR_VALUE, n->seen, ARCHPMU_GENL_A_PAD) ||
		    nla_put_u64_64bit(skb, ARCHPMU_GENL_A_EXPECTED, n->expected,
				      ARCHPMU_GENL_A_PAD))
			return -EMSGSIZE;
		return 0;
	case ARCHPMU_GENL_EVENT_CPU_ONLINE:
	case ARCHPMU_GENL_EVENT_CPU_OFFLINE:
		if (nla_put_u32(skb, ARCHPMU_GENL_A_CPU, n->cpu) ||
		    (n->err && nla_put_u32(skb, ARCHPMU_GENL_A_ERRNO, -n->err)))
			return -EMSGSIZE;
		return 0;
	case ARCHPMU_GENL_EVENT_THROTTLE:
	case ARCHPMU_GENL_EVENT_UNTHROTTLE:
	case ARCHPMU_GENL_EVENT_LOST:
		if (nla_put_u32(skb, ARCHPMU_GENL_A_CPU, n->cpu) ||
		    nla_put_u64_64bit(skb, ARCHPMU_GENL_A_COUNT, n->count, ARCHPMU_GENL_A_PAD) ||
		    nla_put_u64_64bit(skb, ARCHPMU_GENL_A_TOTAL, n->total, ARCHPMU_GENL_A_PAD))
			return -EMSGSIZE;
		return 0;
	default:	/* SESSION_CLOSE, _START, _STOP: the identity says it all */
		return 0;
	}
}

/* A session's message: its events and a claim per CPU, each with a counter per event. */
static size_t note_size(const struct archpmu_note *n)
{
	size_t per_cpu = 2 * nla_total_size(sizeof(u32)) + nla_total_size(0) +
			 (n->cl ? n->cl->nr_events : 0) * nla_total_size(sizeof(u32));
	size_t per_event = 2 * nla_total_size_64bit(sizeof(u64)) + 2 * nla_total_size(0);

	/* The others: an identity and at most six values, well within this. */
	if (!n->cl || n->cmd != ARCHPMU_GENL_EVENT_SESSION_OPEN)
		return 512;
	return 512 + n->cl->nr_cpus * per_cpu + n->cl->nr_events * per_event;
}

static void send_note(const struct archpmu_note *n)
{
	struct sk_buff *skb;
	void *hdr;

	if (!genl_has_listeners(&archpmu_genl_family, &init_net, 0))
		return;
	skb = genlmsg_new(note_size(n), GFP_KERNEL);
	if (!skb)
		return;
	hdr = archpmu_nl_begin(skb, 0, 0, 0, n->cmd);
	if (!hdr || put_note(skb, n)) {
		pr_warn_ratelimited("netlink event %u does not fit its message; not sent\n",
				    n->cmd);
		nlmsg_free(skb);
		return;
	}
	genlmsg_end(skb, hdr);
	genlmsg_multicast(&archpmu_genl_family, skb, 0, 0, GFP_KERNEL);
}

int __init archpmu_netlink_init(void)
{
	int ret;

	fill_policies();
	ret = genl_register_family(&archpmu_genl_family);
	if (ret) {
		pr_err("cannot register the generic netlink family %s: %d\n",
		       ARCHPMU_GENL_NAME, ret);
		return ret;
	}
	archpmu_notify_set_sink(send_note);
	return 0;
}

/* No session is left: nothing but this can note any more. */
void archpmu_netlink_exit(void)
{
	archpmu_notify_unload();
	archpmu_notify_set_sink(NULL);
	genl_unregister_family(&archpmu_genl_family);
}
