// SPDX-License-Identifier: GPL-2.0
/*
 * archpmu_leak: a test-only module that leaks one allocation on load, so the
 * VM runner's self-test can prove that its kmemleak scan fails a run.
 */
#include <linux/module.h>
#include <linux/slab.h>

static int __init leak_init(void)
{
	void *p = kmalloc(96, GFP_KERNEL);

	/* Forget p: only kmemleak can find it now. */
	return p ? 0 : -ENOMEM;
}

static void __exit leak_exit(void)
{
}

module_init(leak_init);
module_exit(leak_exit);

MODULE_DESCRIPTION("archpmu test helper: leaks one allocation on load");
MODULE_LICENSE("GPL");
