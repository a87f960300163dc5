// SPDX-License-Identifier: GPL-2.0
/*
 * archpmu_hog: a test-only module that holds GP counters the way perf and
 * the NMI watchdog do, through reserve_perfctr_nmi()/reserve_evntsel_nmi(),
 * so tests can check that archpmu refuses them with -EBUSY. perf itself
 * reserves every counter at once (nr=<the CPU's GP counters>, at most the
 * 8 legacy ones: the bitmaps cover no other address).
 *
 *   insmod archpmu_hog.ko counter=N [nr=K]    holds GP N .. N+K-1
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <asm/nmi.h>
#include <linux/module.h>
#include <linux/moduleparam.h>

#define HOG_PMC0	0xc1
#define HOG_EVTSEL0	0x186

#define HOG_MAX		8

static uint counter;
module_param(counter, uint, 0444);
MODULE_PARM_DESC(counter, "First GP counter to hold (default 0)");
static uint nr = 1;
module_param(nr, uint, 0444);
MODULE_PARM_DESC(nr, "How many GP counters to hold (default 1)");

static void hog_release(uint n)
{
	while (n--) {
		release_evntsel_nmi(HOG_EVTSEL0 + counter + n);
		release_perfctr_nmi(HOG_PMC0 + counter + n);
	}
}

static int __init hog_init(void)
{
	uint i;

	if (!nr || counter >= HOG_MAX || nr > HOG_MAX - counter)
		return -EINVAL;
	for (i = 0; i < nr; i++) {
		if (!reserve_perfctr_nmi(HOG_PMC0 + counter + i))
			goto busy;
		if (!reserve_evntsel_nmi(HOG_EVTSEL0 + counter + i)) {
			release_perfctr_nmi(HOG_PMC0 + counter + i);
			goto busy;
		}
	}
	pr_info("holding GP counters %u-%u\n", counter, counter + nr - 1);
	return 0;
busy:
	pr_err("GP counter %u is already reserved\n", counter + i);
	hog_release(i);
	return -EBUSY;
}

static void __exit hog_exit(void)
{
	hog_release(nr);
}

module_init(hog_init);
module_exit(hog_exit);

MODULE_DESCRIPTION("archpmu test helper: holds one GP counter reservation");
MODULE_LICENSE("GPL");
