/* SPDX-License-Identifier: GPL-2.0 */
/* The generic netlink family "archpmu" (uapi/archpmu_netlink.h), inside dev/. */
#ifndef ARCHPMU_DEV_NETLINK_H
#define ARCHPMU_DEV_NETLINK_H

#include <net/genetlink.h>

#include "../../uapi/archpmu_netlink.h"
#include "../own/own.h"

struct pid_namespace;

extern struct genl_family archpmu_genl_family;

/*
 * SESSION_ID and UID of @h, then, if @full, its PID (in @ns; NULL: the
 * initial namespace) and COMM.
 */
int archpmu_nl_put_identity(struct sk_buff *skb, const struct archpmu_holder *h, bool full,
			    struct pid_namespace *ns);
/*
 * From CLAIM *@claim on: with 0 first SCOPE, RUNNING, SAMPLING and the
 * EVENTs; then as many CLAIMs as fit, *@claim advancing past each one put.
 * -EMSGSIZE when not all did (a dump goes on in its next message).
 */
int archpmu_nl_put_session(struct sk_buff *skb, const struct archpmu_claims *cl, bool running,
			   unsigned int *claim);
/* A message with ARCHPMU_GENL_A_VERSION, for a dump reply or an event. */
void *archpmu_nl_begin(struct sk_buff *skb, u32 portid, u32 seq, int flags, u8 cmd);

/* netlink_dump.c */
int archpmu_nl_sessions_start(struct netlink_callback *cb);
int archpmu_nl_sessions_dump(struct sk_buff *skb, struct netlink_callback *cb);
int archpmu_nl_sessions_done(struct netlink_callback *cb);
int archpmu_nl_usage_start(struct netlink_callback *cb);
int archpmu_nl_usage_dump(struct sk_buff *skb, struct netlink_callback *cb);
int archpmu_nl_usage_done(struct netlink_callback *cb);

#endif /* ARCHPMU_DEV_NETLINK_H */
