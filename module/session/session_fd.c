// SPDX-License-Identifier: GPL-2.0
/*
 * A session's file: its own ioctl table (COUNT_START, STOP, RESET, READ),
 * mmap of a sampling session's rings and poll for their records, and its
 * release, which destroys the session. It is the descriptor COUNT_OPEN
 * returns.
 */
#include <linux/fs.h>
#include <linux/module.h>

#include "../ucmd.h"
#include "session.h"

/*
 * Capabilities a test hides: not reported, and refused as a module without
 * them refuses them, so that the library's ways with older modules are tried.
 */
static ulong test_hide_caps;
#ifdef CONFIG_ARCHPMU_TEST
module_param(test_hide_caps, ulong, 0444);
MODULE_PARM_DESC(test_hide_caps, "test builds: capability bits not reported, and refused");
#endif

u64 archpmu_hidden_caps(void)
{
	return test_hide_caps;
}

static int session_cmd_check(unsigned int cmd, const void *cmd_buf)
{
	const struct archpmu_count_read *rd = cmd_buf;
	const struct archpmu_count_ctl *ctl = cmd_buf;
	u64 read_flags = ARCHPMU_COUNT_READ_SUM;

	if (cmd != ARCHPMU_IOC_COUNT_READ)
		return ctl->flags ? -EINVAL : 0;
	if (archpmu_hidden_caps() & ARCHPMU_CAP_READ_SUM)
		read_flags = 0;
	return rd->flags & ~read_flags || rd->__reserved0 ? -EINVAL : 0;
}

static int session_ctl(struct archpmu_ucmd *ucmd)
{
	struct archpmu_session *s = ucmd->ctx;
	int ret = session_cmd_check(ucmd->ioctl, ucmd->cmd);

	if (ret)
		return ret;
	mutex_lock(&s->lock);
	ret = archpmu_count_ctl(&s->count, ucmd->ioctl, archpmu_task_is_only_current(s->task));
	mutex_unlock(&s->lock);
	return ret;
}

static int session_read(struct archpmu_ucmd *ucmd)
{
	struct archpmu_session *s = ucmd->ctx;
	struct archpmu_count_read *rd = ucmd->cmd;
	int ret = session_cmd_check(ucmd->ioctl, rd);

	if (ret)
		return ret;
	mutex_lock(&s->lock);
	ret = archpmu_count_read(&s->count, rd, archpmu_task_is_only_current(s->task));
	mutex_unlock(&s->lock);
	if ((!ret || ret == -ENOSPC) && archpmu_ucmd_respond(ucmd, sizeof(*rd)))
		ret = -EFAULT;
	return ret;
}

static const struct archpmu_ioctl_op session_ioctl_ops[] = {
	ARCHPMU_IOCTL_OP(COUNT_START, session_ctl, struct archpmu_count_ctl, flags),
	ARCHPMU_IOCTL_OP(COUNT_STOP, session_ctl, struct archpmu_count_ctl, flags),
	ARCHPMU_IOCTL_OP(COUNT_RESET, session_ctl, struct archpmu_count_ctl, flags),
	ARCHPMU_IOCTL_OP(COUNT_READ, session_read, struct archpmu_count_read,
			 timestamp_ns),
};

static long session_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	return archpmu_ucmd_dispatch(session_ioctl_ops, ARRAY_SIZE(session_ioctl_ops),
				     file->private_data, cmd, arg);
}

static int session_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct archpmu_session *s = file->private_data;

	return archpmu_sample_mmap(&s->sample, vma);
}

static __poll_t session_poll(struct file *file, poll_table *wait)
{
	struct archpmu_session *s = file->private_data;

	return archpmu_sample_poll(&s->sample, file, wait);
}

static int session_release(struct inode *inode, struct file *file)
{
	/* NULL when a failed COUNT_OPEN destroyed the session itself. */
	if (file->private_data)
		archpmu_session_destroy(file->private_data);
	return 0;
}

const struct file_operations archpmu_session_fops = {
	.owner = THIS_MODULE,
	.release = session_release,
	.unlocked_ioctl = session_ioctl,
	.mmap = session_mmap,
	.poll = session_poll,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};
