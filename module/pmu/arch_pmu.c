// SPDX-License-Identifier: GPL-2.0
/*
 * Decoding of CPUID leaves 01H, 07H, 0AH, 1AH and 23H into a PMU
 * description, and the event tables (the lookups are inline in arch_pmu.h).
 */
#include "arch_pmu.h"

/* Linux assumes three fixed counters on v2-4 parts that report fewer. */
#define ARCHPMU_ASSUMED_FIXED	3

static void decode_fixed(const struct archpmu_cpuid_set *c,
			 struct archpmu_pmu_desc *d)
{
	u32 edx_count = c->leaf0a.edx & 0x1f;

	d->fixed_width = (c->leaf0a.edx >> 5) & 0xff;
	if (d->version < 2)
		return;
	if (d->version >= 5) {
		/* Fixed counter i exists iff ECX[i] || EDX[4:0] > i. */
		d->fixed_mask = c->leaf0a.ecx | archpmu_width_mask(edx_count);
		return;
	}
	if (edx_count < ARCHPMU_ASSUMED_FIXED &&
	    !(c->leaf01.ecx & CPUID01_ECX_HYPERVISOR)) {
		edx_count = ARCHPMU_ASSUMED_FIXED;
		d->flags |= ARCHPMU_PMU_FIXED_ASSUMED;
	}
	d->fixed_mask = archpmu_width_mask(edx_count);
}

static void decode_leaf23(const struct archpmu_cpuid_set *c,
			  struct archpmu_pmu_desc *d)
{
	u32 subleaves = c->leaf23[0].eax;

	d->flags |= ARCHPMU_PMU_LEAF23;
	if (c->leaf23[0].ebx & CPUID23_EBX_UMASK2)
		d->flags |= ARCHPMU_PMU_UMASK2;
	if (c->leaf23[0].ebx & CPUID23_EBX_EQ)
		d->flags |= ARCHPMU_PMU_EQ;
	/* Sub-leaf 1's bitmaps replace the counts of leaf 0AH. */
	if (subleaves & CPUID23_SUBLEAF_COUNTERS) {
		d->gp_mask = c->leaf23[1].eax;
		d->fixed_mask = c->leaf23[1].ebx;
	}
	/* Sub-leaf 3 lists available events in positive logic. */
	if (subleaves & CPUID23_SUBLEAF_EVENTS)
		d->events_mask = c->leaf23[3].eax;
}

/* Family 6 models whose handler unmasks LVTPC early (perf 6.1's intel_pmu_init). */
static const u8 early_ack_models[] = {
	0x0e, 0x0f, 0x16, 0x17, 0x1d,		/* Yonah, Core 2 */
	0x1a, 0x1e, 0x1f, 0x2e, 0x25, 0x2c, 0x2f,	/* Nehalem, Westmere */
	0x2a, 0x2d, 0x3a, 0x3e,			/* Sandy Bridge, Ivy Bridge */
	0x1c, 0x26, 0x27, 0x35, 0x36,		/* Bonnell, Saltwell */
	0x37, 0x4a, 0x4c, 0x4d, 0x5a, 0x5d,	/* Silvermont, Airmont */
	0x5c, 0x5f, 0x7a, 0x57, 0x85,		/* Goldmont (Plus), Knights */
};

/* Gracemont-class E-cores alone: ADL-N, Sierra Forest, Grand Ridge, Clearwater Forest */
static const u8 mid_ack_models[] = { 0xbe, 0xaf, 0xb6, 0xdd };

static bool in_models(const u8 *models, unsigned int n, u32 model)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (models[i] == model)
			return true;
	return false;
}

static u32 pmi_ack_of(const struct archpmu_cpuid_set *c, const struct archpmu_pmu_desc *d)
{
	u32 eax = c->leaf01.eax;
	u32 family = (eax >> 8) & 0xf;
	u32 model = ((eax >> 4) & 0xf) | ((eax >> 12) & 0xf0);

	if (d->flags & ARCHPMU_PMU_HYBRID)
		return d->core_type == ARCHPMU_CORE_TYPE_ATOM ? ARCHPMU_PMI_ACK_MID :
		       ARCHPMU_PMI_ACK_LATE;
	if (family != 6)
		return ARCHPMU_PMI_ACK_LATE;
	if (in_models(early_ack_models, ARRAY_SIZE(early_ack_models), model))
		return ARCHPMU_PMI_ACK_EARLY;
	if (in_models(mid_ack_models, ARRAY_SIZE(mid_ack_models), model))
		return ARCHPMU_PMI_ACK_MID;
	return ARCHPMU_PMI_ACK_LATE;
}

void archpmu_decode_cpuid(const struct archpmu_cpuid_set *c,
			  struct archpmu_pmu_desc *d)
{
	const struct archpmu_cpuid_regs *a = &c->leaf0a;

	memset(d, 0, sizeof(*d));
	d->cpuid_0a[0] = a->eax;
	d->cpuid_0a[1] = a->ebx;
	d->cpuid_0a[2] = a->ecx;
	d->cpuid_0a[3] = a->edx;
	d->cpuid_01_eax = c->leaf01.eax;
	if (c->leaf01.ecx & CPUID01_ECX_PDCM)
		d->flags |= ARCHPMU_PMU_PDCM;
	if (c->leaf01.ecx & CPUID01_ECX_HYPERVISOR)
		d->flags |= ARCHPMU_PMU_HYPERVISOR;
	/*
	 * Skylake to Comet Lake client microcode: GP counter 3 serves TSX unless
	 * MSR 10FH[0] is set, which only perf may write. Microcode that makes
	 * RTM always abort (EDX[11]) frees it again (perf's PMU_FL_TFA).
	 */
	if ((c->leaf07_0.edx & CPUID07_EDX_TSX_FORCE_ABORT) &&
	    !(c->leaf07_0.edx & CPUID07_EDX_RTM_ALWAYS_ABORT))
		d->flags |= ARCHPMU_PMU_TSX_FORCE_ABORT;
	if (c->leaf07_0.edx & CPUID07_EDX_HYBRID) {
		d->flags |= ARCHPMU_PMU_HYBRID;
		d->core_type = c->leaf1a.eax >> 24;
		d->native_model_id = c->leaf1a.eax & 0xffffff;
	}
	d->pmi_ack = pmi_ack_of(c, d);

	d->version = a->eax & 0xff;
	if (!d->version)
		return;
	d->gp_width = (a->eax >> 16) & 0xff;
	d->gp_mask = archpmu_width_mask((a->eax >> 8) & 0xff);
	d->events_len = a->eax >> 24;
	/* EBX is inverted: a set bit means the event is NOT available. */
	d->events_mask = ~(u64)a->ebx & archpmu_width_mask(d->events_len < 32 ? d->events_len : 32);
	if (a->edx & CPUID0A_EDX_ANY_DEPR)
		d->flags |= ARCHPMU_PMU_ANYTHREAD_DEPRECATED;
	decode_fixed(c, d);
	if (c->leaf07_1.eax & CPUID07_1_EAX_LEAF23)
		decode_leaf23(c, d);

	d->gp_mask &= archpmu_width_mask(ARCHPMU_MAX_GP_COUNTERS);
	d->fixed_mask &= archpmu_width_mask(ARCHPMU_MAX_FIXED_COUNTERS);
	d->nr_gp = hweight64(d->gp_mask);
	d->nr_fixed = hweight64(d->fixed_mask);
	/* Parts that report no fixed width (Conroe) count at the GP width. */
	if (d->fixed_mask && !d->fixed_width)
		d->fixed_width = d->gp_width;
	if (!d->fixed_mask)
		d->fixed_width = 0;
}

void archpmu_desc_set_perf_caps(struct archpmu_pmu_desc *d, u64 caps)
{
	d->perf_capabilities = caps;
	d->flags &= ~(ARCHPMU_PMU_FULL_WIDTH_WRITE | ARCHPMU_PMU_PERF_METRICS);
	if (caps & ARCHPMU_PERF_CAP_FW_WRITE)
		d->flags |= ARCHPMU_PMU_FULL_WIDTH_WRITE;
	if (caps & ARCHPMU_PERF_CAP_PERF_METRICS)
		d->flags |= ARCHPMU_PMU_PERF_METRICS;
}

bool archpmu_desc_equal(const struct archpmu_pmu_desc *a,
			const struct archpmu_pmu_desc *b)
{
	return a->version == b->version && a->flags == b->flags &&
	       a->core_type == b->core_type &&
	       a->native_model_id == b->native_model_id &&
	       a->gp_width == b->gp_width && a->fixed_width == b->fixed_width &&
	       a->events_len == b->events_len && a->gp_mask == b->gp_mask &&
	       a->fixed_mask == b->fixed_mask &&
	       a->events_mask == b->events_mask &&
	       a->perf_capabilities == b->perf_capabilities;
}

/* --- the architectural event tables (uapi/archpmu.h) --- */

#define EVENT_CODE_OF(ev, umask)	((ev) | (umask) << 8)

const u32 archpmu_arch_event_codes[] = {
#define ARCH_CODE(bit, name, ev, umask)	EVENT_CODE_OF(ev, umask),
	ARCHPMU_ARCH_EVENT_TABLE(ARCH_CODE)
#undef ARCH_CODE
};

const u32 archpmu_fixed_event_codes[] = {
#define FIXED_CODE(j, ev, umask)	EVENT_CODE_OF(ev, umask),
	ARCHPMU_FIXED_EVENT_TABLE(FIXED_CODE)
#undef FIXED_CODE
};

static_assert(ARRAY_SIZE(archpmu_arch_event_codes) == ARCHPMU_NR_ARCH_EVENTS);
static_assert(ARRAY_SIZE(archpmu_fixed_event_codes) == ARCHPMU_NR_FIXED);
