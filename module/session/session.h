/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sessions: their lifecycle (session.c), their file (session_fd.c)
 * and what CPU hotplug and suspend do to them (hotplug.c).
 */
#ifndef ARCHPMU_SESSION_SESSION_H
#define ARCHPMU_SESSION_SESSION_H

#include <linux/fs.h>
#include <linux/list.h>
#include <linux/mutex.h>

#include "../count/count.h"
#include "../mux/mux.h"
#include "../sample/sample.h"
#include "../task/task.h"

struct archpmu_session {
	struct list_head node;	/* on archpmu_sessions, under archpmu_own_lock */
	struct mutex lock;	/* serialises the commands on the session's file */
	struct archpmu_holder holder;
	struct archpmu_event ev[ARCHPMU_MAX_EVENTS];
	struct archpmu_claims cl;
	struct archpmu_count count;
	struct archpmu_mux mux;	/* a multiplexing session's turns */
	struct archpmu_sample sample;
	struct archpmu_task *task;	/* task scope, or NULL */
	/* COUNT_OPEN's sampling inputs, copied in before the locks. */
	struct archpmu_sample_event specs[ARCHPMU_MAX_EVENTS];
};

/* Every live session; under archpmu_own_lock. */
extern struct list_head archpmu_sessions;

/*
 * COUNT_OPEN: create, check and program a session, all or nothing, and
 * write the outcome back. The result is the session's new file descriptor.
 */
long archpmu_session_open(struct archpmu_count_open *cmd, void __user *ubuf,
			  u32 user_size);
void archpmu_session_destroy(struct archpmu_session *s);
/* session_fd.c: the ARCHPMU_CAP_* bits a test build hides (test_hide_caps), else 0. */
u64 archpmu_hidden_caps(void);
/*
 * sysfs unloading: while set, COUNT_OPEN is refused with ENODEV (bad_event
 * and bad_cpu ~0).
 */
void archpmu_session_set_unloading(bool on);
bool archpmu_session_unloading(void);

/* privilege.c: what the caller may open (ARCHPMU_PRIVILEGE_*). */
u32 archpmu_privilege(void);
/*
 * 0 if the caller may open the session @cmd describes, with the events @ev
 * (copied in); else -EPERM, with *@bad_event the event
 * refused for its mode where one is.
 */
int archpmu_session_permitted(const struct archpmu_count_open *cmd,
			      const struct archpmu_event *ev, u32 *bad_event);

/* session_fd.c */
extern const struct file_operations archpmu_session_fops;

/* hotplug.c */
int archpmu_session_hotplug_init(void);
void archpmu_session_hotplug_exit(void);

#endif /* ARCHPMU_SESSION_SESSION_H */
