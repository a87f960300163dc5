/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few kernel types and helpers that the portable core (arch_pmu.c,
 * model_regs.c) needs, so that the same files build into the module and into
 * the user-space unit tests.
 */
#ifndef ARCHPMU_PORTABLE_H
#define ARCHPMU_PORTABLE_H

#ifdef __KERNEL__
#include <linux/bitops.h>
#include <linux/build_bug.h>
#include <linux/bits.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/types.h>
#else
#include <assert.h>
#include <errno.h>
#include <linux/types.h>
#include <stdbool.h>
#include <string.h>

typedef __u8 u8;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef __s64 s64;

#define BIT(n)		(1UL << (n))
#define BIT_ULL(n)	(1ULL << (n))
#define GENMASK_ULL(h, l) \
	(((~0ULL) << (l)) & (~0ULL >> (63 - (h))))
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define hweight64(x)	((unsigned int)__builtin_popcountll(x))
#endif

#endif /* ARCHPMU_PORTABLE_H */
