// SPDX-License-Identifier: GPL-2.0
/*
 * archpmu: direct, safe access to the Intel architectural PMU.
 *
 * Load: insmod archpmu.ko [backend=auto|hw|model] [model_*=...]
 *   auto, hw: the CPU's own PMU; the load fails with -ENODEV, and one dmesg
 *             line says why, when the CPU has no usable architectural PMU.
 *   model:    the software model (model.c), for machines without one.
 * Then /dev/archpmu (uapi/archpmu.h), /sys/devices/system/cpu/cpuN/archpmu/
 * and /sys/class/misc/archpmu/ describe every CPU's PMU, and the generic
 * netlink family "archpmu" (uapi/archpmu_netlink.h) tells who holds it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>

#include "dev/dev.h"
#include "pmu/pmu.h"
#include "session/session.h"
#include "version.h"

static char *backend = "auto";
module_param(backend, charp, 0444);
MODULE_PARM_DESC(backend, "auto (default), hw, or model (the software PMU model)");

static int __init archpmu_select_backend(void)
{
	char why[160];
	int ret;

	if (!strcmp(backend, "model")) {
		ret = archpmu_model_init();
		if (ret)
			pr_err("backend=model: the model configuration is invalid (see the lines above)\n");
		else
			archpmu_backend = &archpmu_model_backend;
		return ret;
	}
	if (strcmp(backend, "hw") && strcmp(backend, "auto")) {
		pr_err("backend=%s is not valid: use auto, hw or model\n", backend);
		return -EINVAL;
	}
	ret = archpmu_hw_probe(why, sizeof(why));
	if (ret) {
		pr_err("backend=%s: no usable architectural PMU: %s; load with backend=model to use the software model instead\n",
		       backend, why);
		return ret;
	}
	archpmu_backend = &archpmu_hw_backend;
	return 0;
}

/*
 * The layers, bottom up: pmu/ (access, enumeration, the per-CPU context),
 * own/ (who holds which counter), notify/ (what users hear of it), count/
 * and sample/ (the PMI, rings), session/, dev/ (the interfaces). Each part
 * with CPU state registers its own cpuhp state (enumeration, sysfs,
 * sampling ticks, sessions); none of their callbacks depends on another's
 * order.
 */
static int __init archpmu_init(void)
{
	int ret;

	ret = archpmu_select_backend();
	if (ret)
		return ret;
	ret = archpmu_enum_init();
	if (ret)
		return ret;
	ret = archpmu_sysfs_init();
	if (ret)
		goto err_enum_exit;
	ret = archpmu_pmi_init();
	if (ret)
		goto err_sysfs_exit;
	ret = archpmu_session_hotplug_init();
	if (ret)
		goto err_pmi_exit;
	archpmu_task_init();
	ret = archpmu_netlink_init();
	if (ret)
		goto err_session_exit;
	ret = archpmu_chardev_init();
	if (ret)
		goto err_netlink_exit;
	archpmu_debugfs_init();
	archpmu_enum_print_summary();
	pr_info("loaded: backend %s, ABI %u, %u CPUs enumerated\n",
		archpmu_backend->name, ARCHPMU_ABI_VERSION, archpmu_enum_count());
	return 0;

err_netlink_exit:
	archpmu_netlink_exit();
err_session_exit:
	archpmu_session_hotplug_exit();
err_pmi_exit:
	archpmu_pmi_exit();
err_sysfs_exit:
	archpmu_sysfs_exit();
err_enum_exit:
	archpmu_enum_exit();
	return ret;
}

static void __exit archpmu_exit(void)
{
	archpmu_debugfs_exit();
	archpmu_chardev_exit();
	archpmu_netlink_exit();
	archpmu_task_exit();
	archpmu_session_hotplug_exit();
	archpmu_pmi_exit();
	archpmu_sysfs_exit();
	archpmu_enum_exit();
	pr_info("unloaded\n");
}

module_init(archpmu_init);
module_exit(archpmu_exit);

MODULE_DESCRIPTION("Direct, safe access to the Intel architectural PMU");
MODULE_AUTHOR("archpmu developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(ARCHPMU_VERSION);
