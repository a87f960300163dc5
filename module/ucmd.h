/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The size-prefixed ioctl convention of uapi/archpmu.h, shared by
 * /dev/archpmu and the session files: each file type has a table indexed by
 * _IOC_NR; the dispatcher checks the caller's size against the command's
 * first layout and one page, and copies the struct in with
 * copy_struct_from_user, so structs grow without new command numbers.
 */
#ifndef ARCHPMU_UCMD_H
#define ARCHPMU_UCMD_H

#include <linux/errno.h>
#include <linux/ioctl.h>
#include <linux/kernel.h>
#include <linux/nospec.h>
#include <linux/stddef.h>
#include <linux/uaccess.h>

#include "../uapi/archpmu.h"

struct archpmu_ucmd {
	void *ctx;		/* the file's private data */
	unsigned int ioctl;
	void __user *ubuffer;
	u32 user_size;
	void *cmd;		/* the struct, copied in */
};

struct archpmu_ioctl_op {
	unsigned int size;
	unsigned int min_size;
	unsigned int ioctl_num;
	int (*execute)(struct archpmu_ucmd *ucmd);
};

/* The entry of ARCHPMU_IOC_<_name>, at its _IOC_NR. */
#define ARCHPMU_IOCTL_OP(_name, _fn, _struct, _last)			\
	[_IOC_NR(ARCHPMU_IOC_##_name)] = {				\
		.size = sizeof(_struct) +				\
			BUILD_BUG_ON_ZERO(sizeof(_struct) >		\
					  sizeof(union archpmu_ucmd_buffer)), \
		.min_size = offsetofend(_struct, _last),		\
		.ioctl_num = ARCHPMU_IOC_##_name,			\
		.execute = _fn,						\
	}

/* Every struct a command takes fits in this (ARCHPMU_IOCTL_OP checks). */
union archpmu_ucmd_buffer {
	struct archpmu_info info;
	struct archpmu_cpu_info cpu_info;
	struct archpmu_count_open count_open;
	struct archpmu_count_ctl count_ctl;
	struct archpmu_count_read count_read;
	struct archpmu_regs_read regs_read;
};

static inline long archpmu_ucmd_dispatch(const struct archpmu_ioctl_op *ops,
					 size_t nr_ops, void *ctx, unsigned int cmd,
					 unsigned long arg)
{
	const struct archpmu_ioctl_op *op;
	union archpmu_ucmd_buffer buf;
	struct archpmu_ucmd ucmd = {
		.ctx = ctx,
		.ioctl = cmd,
		.ubuffer = (void __user *)arg,
		.cmd = &buf,
	};
	unsigned int nr = _IOC_NR(cmd);
	int ret;

	if (_IOC_TYPE(cmd) != ARCHPMU_IOC_TYPE || nr >= nr_ops)
		return -ENOTTY;
	op = &ops[array_index_nospec(nr, nr_ops)];
	if (!op->execute || op->ioctl_num != cmd)
		return -ENOTTY;
	ret = get_user(ucmd.user_size, (u32 __user *)ucmd.ubuffer);
	if (ret)
		return ret;
	if (ucmd.user_size < op->min_size)
		return -EINVAL;
	if (ucmd.user_size > PAGE_SIZE)
		return -E2BIG;
	ret = copy_struct_from_user(ucmd.cmd, op->size, ucmd.ubuffer, ucmd.user_size);
	if (ret)
		return ret;
	return op->execute(&ucmd);
}

/* Copy @ucmd's struct back: the caller's size, at most @len. */
static inline int archpmu_ucmd_respond(struct archpmu_ucmd *ucmd, size_t len)
{
	if (copy_to_user(ucmd->ubuffer, ucmd->cmd, min_t(size_t, ucmd->user_size, len)))
		return -EFAULT;
	return 0;
}

#endif /* ARCHPMU_UCMD_H */
