/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The model's numeric module parameters: each is checked as it is set, so a
 * bad one fails the load with -EINVAL and a line naming the parameter, the
 * value and the range.
 */
#ifndef ARCHPMU_PMU_MODEL_PARAM_H
#define ARCHPMU_PMU_MODEL_PARAM_H

#include <linux/moduleparam.h>
#include <linux/types.h>

struct archpmu_model_num_param {
	void *val;		/* a uint, or a u64 with is_u64 */
	bool is_u64;
	u64 lo, hi;
	bool *given;		/* optional: set once the parameter is given */
};

/* For module_param_cb(), with a struct archpmu_model_num_param as its arg. */
extern const struct kernel_param_ops archpmu_model_num_ops;

/* model_quirks: a mask of ARCHPMU_MODEL_QUIRK_* (model_regs.h). */
extern u64 archpmu_model_quirks;

#endif /* ARCHPMU_PMU_MODEL_PARAM_H */
