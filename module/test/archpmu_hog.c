// SPDX-License-Identifier: GPL-2.0
/*
 * archpmu_hog: a test-only module that holds one GP counter the way perf and
 * the NMI watchdog do, through reserve_perfctr_nmi()/reserve_evntsel_nmi(),
 * so tests can check that archpmu refuses it with -EBUSY.
 *
 *   insmod archpmu_hog.ko counter=N
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <asm/nmi.h>
#include <linux/module.h>
#include <linux/moduleparam.h>

#define HOG_PMC0	0xc1
#define HOG_EVTSEL0	0x186

static uint counter;
module_param(counter, uint, 0444);
MODULE_PARM_DESC(counter, "GP counter to hold (default 0)");

static int __init hog_init(void)
{
	if (!reserve_perfctr_nmi(HOG_PMC0 + counter)) {
		pr_err("GP counter %u is already reserved\n", counter);
		return -EBUSY;
	}
	if (!reserve_evntsel_nmi(HOG_EVTSEL0 + counter)) {
		release_perfctr_nmi(HOG_PMC0 + counter);
		pr_err("GP event select %u is already reserved\n", counter);
		return -EBUSY;
	}
	pr_info("holding GP counter %u\n", counter);
	return 0;
}

static void __exit hog_exit(void)
{
	release_evntsel_nmi(HOG_EVTSEL0 + counter);
	release_perfctr_nmi(HOG_PMC0 + counter);
}

module_init(hog_init);
module_exit(hog_exit);

MODULE_DESCRIPTION("archpmu test helper: holds one GP counter reservation");
MODULE_LICENSE("GPL");
