/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * archpmu's test-only commands, for the tests that drive the software model
 * (backend=model). A module has them only when built for tests (kbuild with
 * ARCHPMU_TEST=1, as the tree's `make module` and the test kernels' builds
 * are; never `make install` or DKMS), and answers them only on the model.
 * Their numbers are reserved in archpmu.h. Not installed.
 */
#ifndef _UAPI_LINUX_ARCHPMU_TEST_H
#define _UAPI_LINUX_ARCHPMU_TEST_H

#include "archpmu.h"

#define ARCHPMU_CAP_MODEL_MSR	0x4ULL	/* ARCHPMU_IOC_MODEL_MSR */
#define ARCHPMU_CAP_MODEL_INJECT 0x10ULL /* ARCHPMU_IOC_MODEL_INJECT */

/*
 * Model backend only: one RDMSR or WRMSR executed by the model on
 * the given CPU, through the same access layer the driver uses. Needs
 * CAP_SYS_ADMIN. Extra errors:
 *   -EOPNOTSUPP  the backend is not the model
 *   -EPERM       no CAP_SYS_ADMIN
 *   -ENXIO, -ENODEV as for ARCHPMU_IOC_CPU_INFO
 *   -EACCES      a write to an MSR outside the architectural PMU set
 *   -EIO         the model raised #GP (reserved bit, absent or read-only MSR)
 */
#define ARCHPMU_MODEL_MSR_WRITE	0x001U

struct archpmu_model_msr {
	__u32 size;		/* in */
	__u32 flags;		/* in: ARCHPMU_MODEL_MSR_WRITE or 0 */
	__u32 cpu;		/* in */
	__u32 msr;		/* in */
	__u64 value;		/* in for a write, out for a read */
};

/*
 * Model backend only, CAP_SYS_ADMIN: add exactly @count
 * occurrences of the event (event select | umask << 8) on @cpu, at CPL 0
 * (ARCHPMU_INJECT_OS) or CPL 3 (ARCHPMU_INJECT_USR), to every counter of
 * that CPU that counts it, as one cycle would (CMASK, INV and edge apply).
 * With ARCHPMU_INJECT_HERE (capability ARCHPMU_CAP_TASK) @cpu must be 0 and
 * the events happen on the CPU the caller runs on, in the caller's time
 * slice: a task session of the caller counts them. The second layout adds
 * @nr_more other events (up to ARCHPMU_INJECT_MORE_MAX) after the first, in
 * the same cross-call, so that no fold or read comes between them (top-down
 * slots and their categories); -EINVAL past that, with @__reserved not 0,
 * or an event above 0xffff.
 */
#define ARCHPMU_INJECT_USR	0x001U
#define ARCHPMU_INJECT_OS	0x002U
#define ARCHPMU_INJECT_HERE	0x004U

struct archpmu_model_inject {
	__u32 size;		/* in */
	__u32 flags;		/* in: exactly one of ARCHPMU_INJECT_USR, ARCHPMU_INJECT_OS;
				 * ARCHPMU_INJECT_HERE
				 */
	__u32 cpu;		/* in */
	__u32 event;		/* in: event select | umask << 8 */
	__u64 count;		/* in */
	/* Since the second layout (40 bytes). */
	__u64 more;		/* in: user pointer to struct archpmu_model_inject_more[nr_more] */
	__u32 nr_more;		/* in */
	__u32 __reserved;	/* in: 0 */
};

#define ARCHPMU_INJECT_MORE_MAX	16

struct archpmu_model_inject_more {
	__u32 event;		/* as archpmu_model_inject's */
	__u32 __reserved;	/* 0 */
	__u64 count;
};

#define ARCHPMU_IOC_MODEL_MSR	_IO(ARCHPMU_IOC_TYPE, 0x02)
#define ARCHPMU_IOC_MODEL_INJECT _IO(ARCHPMU_IOC_TYPE, 0x15)

#endif /* _UAPI_LINUX_ARCHPMU_TEST_H */
