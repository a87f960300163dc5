/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Architectural PMU facts: MSR addresses, CPUID decoding and the valid-bit
 * masks of the control MSRs (Intel SDM Vol. 3B ch. 18; docs/pmu.md).
 * Portable: built into the module and into the user-space unit tests.
 */
#ifndef ARCHPMU_ARCH_PMU_H
#define ARCHPMU_ARCH_PMU_H

#include "portable.h"
#include "../../uapi/archpmu.h"

#define ARCHPMU_MSR_PMC0		0x0c1
#define ARCHPMU_MSR_PERFEVTSEL0		0x186
#define ARCHPMU_MSR_FIXED_CTR0		0x309
#define ARCHPMU_MSR_PERF_METRICS	0x329
#define ARCHPMU_MSR_PERF_CAPABILITIES	0x345
#define ARCHPMU_MSR_FIXED_CTR_CTRL	0x38d
#define ARCHPMU_MSR_GLOBAL_STATUS	0x38e
#define ARCHPMU_MSR_GLOBAL_CTRL		0x38f
#define ARCHPMU_MSR_GLOBAL_OVF_CTRL	0x390	/* GLOBAL_STATUS_RESET on v4+ */
#define ARCHPMU_MSR_GLOBAL_STATUS_SET	0x391
#define ARCHPMU_MSR_GLOBAL_INUSE	0x392
#define ARCHPMU_MSR_A_PMC0		0x4c1

/*
 * Version 6 gives each counter four MSRs from 1900H on (GP n: counter,
 * config A = the event select, B and C = reload), aliasing the legacy ones;
 * GP counters 8 and up exist only there (SDM Vol. 3B, architectural
 * performance monitoring version 6; Linux: msr-index.h's "V6 PMON MSR
 * range", and intel_pmu_init moves its counter bases here on v6).
 */
#define ARCHPMU_MSR_V6_GP0_CTR		0x1900
#define ARCHPMU_MSR_V6_GP0_CFG_A	0x1901
#define ARCHPMU_MSR_V6_FX0_CTR		0x1980
#define ARCHPMU_MSR_V6_STEP		4

/* GP counters with legacy addresses (IA32_PMC0-7, IA32_PERFEVTSEL0-7). */
#define ARCHPMU_LEGACY_GP	8
/* The GP counters archpmu drives: those an event's ARCHPMU_EVENT_GP_MASK can name. */
#define ARCHPMU_NR_GP		16
/* The fixed counters archpmu drives: those with an architectural event (0-6). */
#define ARCHPMU_NR_FIXED	7

/* IA32_PERFEVTSELx fields: ARCHPMU_EVTSEL_* in uapi/archpmu.h. */

/* Nibble j of IA32_FIXED_CTR_CTRL. */
#define ARCHPMU_FIXED_OS	0x1ULL
#define ARCHPMU_FIXED_USR	0x2ULL
#define ARCHPMU_FIXED_ANY	0x4ULL
#define ARCHPMU_FIXED_PMI	0x8ULL
#define ARCHPMU_FIXED_SHIFT(j)	(4 * (j))

/*
 * Busy masks, the counters' own bit sets: GP counter i is bit i, fixed
 * counter j is bit 32 + j, as in IA32_PERF_GLOBAL_CTRL and _STATUS.
 */
#define ARCHPMU_BUSY_FIXED_SHIFT	ARCHPMU_GLOBAL_FIXED_SHIFT
#define ARCHPMU_GP_BITS			GENMASK_ULL(ARCHPMU_NR_GP - 1, 0)
#define ARCHPMU_LEGACY_GP_BITS		GENMASK_ULL(ARCHPMU_LEGACY_GP - 1, 0)

/* IA32_PERF_GLOBAL_STATUS bits above the counters. */
#define ARCHPMU_GLOBAL_FIXED_SHIFT	32
#define ARCHPMU_GLOBAL_PERF_METRICS	BIT_ULL(48)
#define ARCHPMU_STATUS_LBR_FRZ		BIT_ULL(58)
#define ARCHPMU_STATUS_CTR_FRZ		BIT_ULL(59)
#define ARCHPMU_STATUS_OVF_UNCORE	BIT_ULL(61)
#define ARCHPMU_STATUS_OVF_BUF		BIT_ULL(62)
#define ARCHPMU_STATUS_COND_CHGD	BIT_ULL(63)
#define ARCHPMU_INUSE_PMI		BIT_ULL(63)

/* IA32_PERF_CAPABILITIES bits. */
#define ARCHPMU_PERF_CAP_FW_WRITE	BIT_ULL(13)
#define ARCHPMU_PERF_CAP_PERF_METRICS	BIT_ULL(15)

/* CPUID bits that describe the PMU. */
#define CPUID01_ECX_PDCM	BIT(15)
#define CPUID01_ECX_HYPERVISOR	BIT(31)
#define CPUID07_EDX_HYBRID	BIT(15)
#define CPUID07_EDX_RTM_ALWAYS_ABORT	BIT(11)
#define CPUID07_EDX_TSX_FORCE_ABORT	BIT(13)
#define CPUID07_1_EAX_LEAF23	BIT(8)
#define CPUID0A_EDX_ANY_DEPR	BIT(15)
#define CPUID23_SUBLEAF_COUNTERS BIT(1)
#define CPUID23_SUBLEAF_EVENTS	BIT(3)
#define CPUID23_EBX_UMASK2	BIT(0)
#define CPUID23_EBX_EQ		BIT(1)

struct archpmu_cpuid_regs {
	u32 eax, ebx, ecx, edx;
};

#define ARCHPMU_LEAF23_SUBLEAVES	6

/* The CPUID leaves that describe a logical CPU's PMU; absent leaves are 0. */
struct archpmu_cpuid_set {
	struct archpmu_cpuid_regs leaf01;
	struct archpmu_cpuid_regs leaf07_0;
	struct archpmu_cpuid_regs leaf07_1;
	struct archpmu_cpuid_regs leaf0a;
	struct archpmu_cpuid_regs leaf1a;
	struct archpmu_cpuid_regs leaf23[ARCHPMU_LEAF23_SUBLEAVES];
};

/*
 * When the PMI handler unmasks LVTPC, as perf's intel_pmu_handle_irq does per
 * core: early on old parts, after the overflows are acked on Gracemont-class
 * E-cores (mid), after the counters are re-enabled on big cores from Haswell
 * and on Tremont (late: earlier, Haswell raises spurious NMIs).
 */
enum archpmu_pmi_ack {
	ARCHPMU_PMI_ACK_LATE,
	ARCHPMU_PMI_ACK_MID,
	ARCHPMU_PMI_ACK_EARLY,
};

/* What one logical CPU's PMU is: the decoded form of archpmu_cpuid_set. */
struct archpmu_pmu_desc {
	u32 version;
	u32 flags;		/* ARCHPMU_PMU_* */
	u32 core_type;
	u32 native_model_id;
	u32 nr_gp;
	u32 gp_width;
	u32 nr_fixed;
	u32 fixed_width;
	u32 events_len;
	u64 gp_mask;
	u64 fixed_mask;
	u64 events_mask;
	u64 perf_capabilities;
	u32 cpuid_0a[4];
	u32 cpuid_01_eax;	/* the signature: family, model, stepping */
	u32 pmi_ack;		/* enum archpmu_pmi_ack */
};

void archpmu_decode_cpuid(const struct archpmu_cpuid_set *c,
			  struct archpmu_pmu_desc *d);
void archpmu_desc_set_perf_caps(struct archpmu_pmu_desc *d, u64 caps);
bool archpmu_desc_equal(const struct archpmu_pmu_desc *a,
			const struct archpmu_pmu_desc *b);

/*
 * The lookups below run on every open, program and MSR access: inline, so
 * that planning does not call back into this file for each of them.
 */
static inline bool archpmu_anythread_allowed(const struct archpmu_pmu_desc *d)
{
	return d->version >= 3 &&
	       !(d->flags & ARCHPMU_PMU_ANYTHREAD_DEPRECATED);
}

static inline u64 archpmu_width_mask(u32 width)
{
	return width >= 64 ? ~0ULL : (1ULL << width) - 1;
}

/* The GP counters archpmu drives on @d: 8 and up only on v6, where they have addresses. */
static inline u64 archpmu_gp_driven(const struct archpmu_pmu_desc *d)
{
	return d->gp_mask & (d->version >= 6 ? ARCHPMU_GP_BITS : ARCHPMU_LEGACY_GP_BITS);
}

static inline u64 archpmu_evtsel_valid_bits(const struct archpmu_pmu_desc *d)
{
	u64 valid = GENMASK_ULL(31, 0) & ~ARCHPMU_EVTSEL_ANY;

	if (archpmu_anythread_allowed(d))
		valid |= ARCHPMU_EVTSEL_ANY;
	if (d->flags & ARCHPMU_PMU_UMASK2)
		valid |= ARCHPMU_EVTSEL_UMASK2;
	if (d->flags & ARCHPMU_PMU_EQ)
		valid |= ARCHPMU_EVTSEL_EQ;
	return valid;
}

static inline u64 archpmu_fixed_ctrl_valid_bits(const struct archpmu_pmu_desc *d)
{
	u64 nibble = ARCHPMU_FIXED_OS | ARCHPMU_FIXED_USR | ARCHPMU_FIXED_PMI;
	u64 valid = 0;
	u32 j;

	if (archpmu_anythread_allowed(d))
		nibble |= ARCHPMU_FIXED_ANY;
	for (j = 0; j < ARCHPMU_MAX_FIXED_COUNTERS; j++)
		if (d->fixed_mask & BIT_ULL(j))
			valid |= nibble << ARCHPMU_FIXED_SHIFT(j);
	return valid;
}

static inline u64 archpmu_global_ctrl_valid_bits(const struct archpmu_pmu_desc *d)
{
	u64 valid = d->gp_mask | d->fixed_mask << ARCHPMU_GLOBAL_FIXED_SHIFT;

	if (d->flags & ARCHPMU_PMU_PERF_METRICS)
		valid |= ARCHPMU_GLOBAL_PERF_METRICS;
	return valid;
}

static inline u64 archpmu_global_status_valid_bits(const struct archpmu_pmu_desc *d)
{
	u64 valid = archpmu_global_ctrl_valid_bits(d);

	if (d->version >= 2)
		valid |= ARCHPMU_STATUS_OVF_BUF | ARCHPMU_STATUS_COND_CHGD;
	if (d->version >= 3)
		valid |= ARCHPMU_STATUS_OVF_UNCORE;
	if (d->version >= 4)
		valid |= ARCHPMU_STATUS_LBR_FRZ | ARCHPMU_STATUS_CTR_FRZ;
	return valid;
}

/* Event select | umask << 8 of each architectural event, by CPUID bit. */
extern const u32 archpmu_arch_event_codes[ARCHPMU_NR_ARCH_EVENTS];
/*
 * The event (event | umask << 8) fixed counter j counts: instructions,
 * cycles, reference cycles at the TSC rate, topdown slots, and on Atom the
 * topdown bad-speculation, frontend-bound and retiring events.
 */
extern const u32 archpmu_fixed_event_codes[ARCHPMU_NR_FIXED];

static inline u32 archpmu_event_code(u64 config)
{
	return config & 0xffff;
}

/* The architectural event (bit of CPUID.0AH:EBX) that config encodes, or -1. */
static inline int archpmu_arch_event_of(u64 config)
{
	int i;

	for (i = 0; i < ARCHPMU_NR_ARCH_EVENTS; i++)
		if (archpmu_arch_event_codes[i] == archpmu_event_code(config))
			return i;
	return -1;
}

static inline u32 archpmu_fixed_event_code(u32 j)
{
	return j < ARCHPMU_NR_FIXED ? archpmu_fixed_event_codes[j] : 0;
}

/* Fixed counters whose architectural encodings get events placed on them. */
#define ARCHPMU_AUTO_PLACED_FIXED	4

/*
 * The fixed counter that counts config's event, or -1: event 00H with umask
 * j+1 for any j, else the architectural encodings of fixed counters 0-3 (the
 * ones archpmu places events on by themselves).
 */
static inline int archpmu_fixed_counter_of(u64 config)
{
	u32 code = archpmu_event_code(config);
	u32 j;

	/* Event 00H with umask j+1 is fixed counter j's own encoding. */
	if (!(code & 0xff) && (code >> 8) >= 1 &&
	    (code >> 8) <= ARCHPMU_MAX_FIXED_COUNTERS)
		return (code >> 8) - 1;
	for (j = 0; j < ARCHPMU_AUTO_PLACED_FIXED; j++)
		if (archpmu_fixed_event_codes[j] == code)
			return j;
	return -1;
}

static inline bool archpmu_msr_in_block(u32 msr, u32 base, u32 count)
{
	return msr >= base && msr < base + count;
}

/* GP counter @i's event select: IA32_PERFEVTSELi, or v6's IA32_PMC_GPi_CFG_A. */
static inline u32 archpmu_gp_sel_msr(u32 i)
{
	return i < ARCHPMU_LEGACY_GP ? ARCHPMU_MSR_PERFEVTSEL0 + i :
	       ARCHPMU_MSR_V6_GP0_CFG_A + ARCHPMU_MSR_V6_STEP * i;
}

/*
 * GP counter @i: IA32_PMCi, or IA32_A_PMCi with @full_width (full-width
 * writes); v6's IA32_PMC_GPi_CTR, the only address of counters 8 and up.
 */
static inline u32 archpmu_gp_ctr_msr(u32 i, bool full_width)
{
	if (i >= ARCHPMU_LEGACY_GP)
		return ARCHPMU_MSR_V6_GP0_CTR + ARCHPMU_MSR_V6_STEP * i;
	return (full_width ? ARCHPMU_MSR_A_PMC0 : ARCHPMU_MSR_PMC0) + i;
}

/* The GP counter 8-15 whose v6 MSR at @base + 4n @msr is, or -1. */
static inline int archpmu_v6_gp_of(u32 msr, u32 base)
{
	u32 off = msr - base;

	if (msr < base || off % ARCHPMU_MSR_V6_STEP ||
	    off / ARCHPMU_MSR_V6_STEP < ARCHPMU_LEGACY_GP ||
	    off / ARCHPMU_MSR_V6_STEP >= ARCHPMU_NR_GP)
		return -1;
	return off / ARCHPMU_MSR_V6_STEP;
}

/* GP counter @msr is the event select of, or -1. */
static inline int archpmu_gp_of_sel_msr(u32 msr)
{
	if (archpmu_msr_in_block(msr, ARCHPMU_MSR_PERFEVTSEL0, ARCHPMU_LEGACY_GP))
		return msr - ARCHPMU_MSR_PERFEVTSEL0;
	return archpmu_v6_gp_of(msr, ARCHPMU_MSR_V6_GP0_CFG_A);
}

/* GP counter @msr is the counter of, or -1. */
static inline int archpmu_gp_of_ctr_msr(u32 msr)
{
	if (archpmu_msr_in_block(msr, ARCHPMU_MSR_PMC0, ARCHPMU_LEGACY_GP))
		return msr - ARCHPMU_MSR_PMC0;
	if (archpmu_msr_in_block(msr, ARCHPMU_MSR_A_PMC0, ARCHPMU_LEGACY_GP))
		return msr - ARCHPMU_MSR_A_PMC0;
	return archpmu_v6_gp_of(msr, ARCHPMU_MSR_V6_GP0_CTR);
}

/*
 * The only MSRs archpmu ever writes: of the v6 range, only the counter and
 * event select of GP counters 8 and up, which have no other address.
 */
static inline bool archpmu_msr_writable(u32 msr)
{
	return archpmu_gp_of_ctr_msr(msr) >= 0 || archpmu_gp_of_sel_msr(msr) >= 0 ||
	       archpmu_msr_in_block(msr, ARCHPMU_MSR_FIXED_CTR0, ARCHPMU_NR_FIXED) ||
	       msr == ARCHPMU_MSR_PERF_METRICS ||
	       archpmu_msr_in_block(msr, ARCHPMU_MSR_FIXED_CTR_CTRL,
				    ARCHPMU_MSR_GLOBAL_INUSE - ARCHPMU_MSR_FIXED_CTR_CTRL + 1);
}

#endif /* ARCHPMU_ARCH_PMU_H */
