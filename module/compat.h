/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every kernel-version shim archpmu needs, in one place. The module is built
 * and tested against Debian 12's 6.1 kernel; older kernels get these.
 */
#ifndef ARCHPMU_COMPAT_H
#define ARCHPMU_COMPAT_H

#include <linux/capability.h>

#ifndef CAP_PERFMON
/* CAP_PERFMON arrived in 5.8; before it perf used CAP_SYS_ADMIN alone. */
static inline bool perfmon_capable(void)
{
	return capable(CAP_SYS_ADMIN);
}
#endif

#endif /* ARCHPMU_COMPAT_H */
