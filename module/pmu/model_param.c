// SPDX-License-Identifier: GPL-2.0
/* The model's numeric module parameters (model_param.h). */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/printk.h>
#include <linux/sysfs.h>

#include "model_param.h"
#include "model_regs.h"

static int model_num_set(const char *text, const struct kernel_param *kp)
{
	const struct archpmu_model_num_param *p = kp->arg;
	u64 v;
	int ret = kstrtou64(text, 0, &v);

	if (ret == -ERANGE || (!ret && (v < p->lo || v > p->hi))) {
		pr_err("%s=%s is out of range (allowed: %llu-%llu)\n", kp->name, text,
		       p->lo, p->hi);
		return -EINVAL;
	}
	if (ret) {
		pr_err("%s='%s' is not a number (allowed: %llu-%llu)\n", kp->name, text,
		       p->lo, p->hi);
		return -EINVAL;
	}
	if (p->is_u64)
		*(u64 *)p->val = v;
	else
		*(uint *)p->val = v;
	if (p->given)
		*p->given = true;
	return 0;
}

static int model_num_get(char *buf, const struct kernel_param *kp)
{
	const struct archpmu_model_num_param *p = kp->arg;

	return sysfs_emit(buf, "%llu\n", p->is_u64 ? *(u64 *)p->val : *(uint *)p->val);
}

const struct kernel_param_ops archpmu_model_num_ops = {
	.set = model_num_set,
	.get = model_num_get,
};

u64 archpmu_model_quirks;
static struct archpmu_model_num_param model_quirks_param = {
	.val = &archpmu_model_quirks, .is_u64 = true, .lo = 0, .hi = ARCHPMU_MODEL_QUIRKS,
};
module_param_cb(model_quirks, &archpmu_model_num_ops, &model_quirks_param, 0444);
MODULE_PARM_DESC(model_quirks, "What real systems do beyond the SDM: 1 = GLOBAL_INUSE raises #GP, 2 = freeze on PMI, 4 = another handler acks first (default 0)");
