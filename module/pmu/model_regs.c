// SPDX-License-Identifier: GPL-2.0
/*
 * RDMSR/WRMSR semantics of the architectural PMU registers, as the SDM and
 * KVM's Intel vPMU define them (docs/pmu.md §3, §7): absent counters and
 * reserved bits raise #GP, legacy counter writes sign-extend bit 31, full
 * width writes must fit the width, GLOBAL_STATUS and INUSE are read-only.
 * Fixed counters are strict: bits above the width raise #GP.
 */
#include "model_regs.h"

#define GP -EIO

enum reg_kind { REG_NONE, REG_PMC, REG_A_PMC, REG_V6_CTR, REG_EVTSEL, REG_FIXED };

/*
 * v6's range (1900H on): four MSRs a counter, the first the counter (written
 * at full width), the second a GP counter's event select; the reload MSRs
 * (CFG_B, CFG_C) are not modelled and raise #GP, as where not enumerated.
 */
static enum reg_kind v6_reg(const struct archpmu_pmu_desc *d, u32 msr, u32 *idx)
{
	u32 gp = msr - ARCHPMU_MSR_V6_GP0_CTR, fx = msr - ARCHPMU_MSR_V6_FX0_CTR;

	if (d->version < 6)
		return REG_NONE;
	if (msr >= ARCHPMU_MSR_V6_GP0_CTR && gp / ARCHPMU_MSR_V6_STEP < ARCHPMU_NR_GP) {
		*idx = gp / ARCHPMU_MSR_V6_STEP;
		if (!(d->gp_mask & BIT_ULL(*idx)))
			return REG_NONE;
		return gp % ARCHPMU_MSR_V6_STEP == 0 ? REG_V6_CTR :
		       gp % ARCHPMU_MSR_V6_STEP == 1 ? REG_EVTSEL : REG_NONE;
	}
	if (msr >= ARCHPMU_MSR_V6_FX0_CTR && fx / ARCHPMU_MSR_V6_STEP < ARCHPMU_NR_FIXED &&
	    fx % ARCHPMU_MSR_V6_STEP == 0) {
		*idx = fx / ARCHPMU_MSR_V6_STEP;
		return d->fixed_mask & BIT_ULL(*idx) ? REG_FIXED : REG_NONE;
	}
	return REG_NONE;
}

static enum reg_kind counter_reg(const struct archpmu_pmu_desc *d, u32 msr,
				 u32 *idx)
{
	if (msr >= ARCHPMU_MSR_PMC0 && msr < ARCHPMU_MSR_PMC0 + ARCHPMU_LEGACY_GP) {
		*idx = msr - ARCHPMU_MSR_PMC0;
		return d->gp_mask & BIT_ULL(*idx) ? REG_PMC : REG_NONE;
	}
	if (msr >= ARCHPMU_MSR_A_PMC0 && msr < ARCHPMU_MSR_A_PMC0 + ARCHPMU_LEGACY_GP) {
		*idx = msr - ARCHPMU_MSR_A_PMC0;
		return (d->gp_mask & BIT_ULL(*idx)) &&
		       (d->flags & ARCHPMU_PMU_FULL_WIDTH_WRITE) ? REG_A_PMC : REG_NONE;
	}
	if (msr >= ARCHPMU_MSR_PERFEVTSEL0 &&
	    msr < ARCHPMU_MSR_PERFEVTSEL0 + ARCHPMU_LEGACY_GP) {
		*idx = msr - ARCHPMU_MSR_PERFEVTSEL0;
		return d->gp_mask & BIT_ULL(*idx) ? REG_EVTSEL : REG_NONE;
	}
	if (msr >= ARCHPMU_MSR_FIXED_CTR0 &&
	    msr < ARCHPMU_MSR_FIXED_CTR0 + ARCHPMU_NR_FIXED) {
		*idx = msr - ARCHPMU_MSR_FIXED_CTR0;
		return d->version >= 2 && (d->fixed_mask & BIT_ULL(*idx)) ?
		       REG_FIXED : REG_NONE;
	}
	return v6_reg(d, msr, idx);
}

void archpmu_model_regs_reset(struct archpmu_model_regs *r,
			      const struct archpmu_pmu_desc *desc, u64 quirks)
{
	memset(r, 0, sizeof(*r));
	r->desc = desc;
	r->quirks = quirks;
	if (desc->version >= 2)
		r->global_ctrl = desc->gp_mask;
}

u64 archpmu_model_inuse(const struct archpmu_model_regs *r)
{
	u64 inuse = 0;
	u32 i;

	for (i = 0; i < ARCHPMU_NR_GP; i++) {
		if (r->evtsel[i] & ARCHPMU_EVTSEL_EVENT)
			inuse |= BIT_ULL(i);
		if (r->evtsel[i] & ARCHPMU_EVTSEL_INT)
			inuse |= ARCHPMU_INUSE_PMI;
	}
	for (i = 0; i < ARCHPMU_NR_FIXED; i++) {
		u64 nibble = r->fixed_ctrl >> ARCHPMU_FIXED_SHIFT(i);

		if (nibble & (ARCHPMU_FIXED_OS | ARCHPMU_FIXED_USR))
			inuse |= BIT_ULL(ARCHPMU_GLOBAL_FIXED_SHIFT + i);
		if (nibble & ARCHPMU_FIXED_PMI)
			inuse |= ARCHPMU_INUSE_PMI;
	}
	return inuse;
}

int archpmu_model_rdmsr(const struct archpmu_model_regs *r, u32 msr, u64 *val)
{
	const struct archpmu_pmu_desc *d = r->desc;
	u32 idx;

	switch (counter_reg(d, msr, &idx)) {
	case REG_PMC:
	case REG_A_PMC:
	case REG_V6_CTR:
		*val = r->pmc[idx];
		return 0;
	case REG_EVTSEL:
		*val = r->evtsel[idx];
		return 0;
	case REG_FIXED:
		*val = r->fixed[idx];
		return 0;
	case REG_NONE:
		break;
	}

	if (msr == ARCHPMU_MSR_PERF_CAPABILITIES && (d->flags & ARCHPMU_PMU_PDCM)) {
		*val = d->perf_capabilities;
		return 0;
	}
	if (msr == ARCHPMU_MSR_PERF_METRICS && (d->flags & ARCHPMU_PMU_PERF_METRICS)) {
		*val = archpmu_model_metrics_read(r);
		return 0;
	}
	if (d->version < 2)
		return GP;
	switch (msr) {
	case ARCHPMU_MSR_FIXED_CTR_CTRL:
		*val = r->fixed_ctrl;
		return 0;
	case ARCHPMU_MSR_GLOBAL_STATUS:
		*val = r->global_status;
		return 0;
	case ARCHPMU_MSR_GLOBAL_CTRL:
		*val = r->global_ctrl;
		return 0;
	case ARCHPMU_MSR_GLOBAL_OVF_CTRL:
		*val = 0;
		return 0;
	}
	if (d->version < 4)
		return GP;
	switch (msr) {
	case ARCHPMU_MSR_GLOBAL_STATUS_SET:
		*val = 0;
		return 0;
	case ARCHPMU_MSR_GLOBAL_INUSE:
		if (r->quirks & ARCHPMU_MODEL_QUIRK_INUSE_GP)
			return GP;
		*val = archpmu_model_inuse(r);
		return 0;
	}
	return GP;
}

static bool counter_live(const struct archpmu_model_regs *r, enum reg_kind kind, u32 idx);

static int write_counter(struct archpmu_model_regs *r, enum reg_kind kind,
			 u32 idx, u64 val)
{
	const struct archpmu_pmu_desc *d = r->desc;
	u64 gp_mask = archpmu_width_mask(d->gp_width);
	u64 fixed_mask = archpmu_width_mask(d->fixed_width);

	if (counter_live(r, kind, idx))
		r->live_writes++;
	switch (kind) {
	case REG_PMC:
		/* EDX is ignored; EAX is sign-extended, then cut to the width. */
		r->pmc[idx] = (u64)(s64)(s32)(u32)val & gp_mask;
		return 0;
	case REG_A_PMC:
	case REG_V6_CTR:
		if (val & ~gp_mask)
			return GP;
		r->pmc[idx] = val;
		return 0;
	case REG_EVTSEL:
		if (val & ~archpmu_evtsel_valid_bits(d))
			return GP;
		r->evtsel[idx] = val;
		return 0;
	case REG_FIXED:
		if (val & ~fixed_mask)
			return GP;
		r->fixed[idx] = val;
		return 0;
	case REG_NONE:
		break;
	}
	return GP;
}

int archpmu_model_wrmsr(struct archpmu_model_regs *r, u32 msr, u64 val)
{
	const struct archpmu_pmu_desc *d = r->desc;
	u64 status_bits = archpmu_global_status_valid_bits(d);
	enum reg_kind kind;
	u32 idx;

	kind = counter_reg(d, msr, &idx);
	if (kind != REG_NONE)
		return write_counter(r, kind, idx, val);

	if (msr == ARCHPMU_MSR_PERF_METRICS && (d->flags & ARCHPMU_PMU_PERF_METRICS)) {
		archpmu_model_metrics_write(r, val);
		return 0;
	}
	if (d->version < 2)
		return GP;
	switch (msr) {
	case ARCHPMU_MSR_FIXED_CTR_CTRL:
		if (val & ~archpmu_fixed_ctrl_valid_bits(d))
			return GP;
		r->fixed_ctrl = val;
		return 0;
	case ARCHPMU_MSR_GLOBAL_CTRL:
		if (val & ~archpmu_global_ctrl_valid_bits(d))
			return GP;
		r->global_ctrl = val;
		return 0;
	case ARCHPMU_MSR_GLOBAL_OVF_CTRL:
		if (val & ~status_bits)
			return GP;
		r->global_status &= ~val;
		return 0;
	case ARCHPMU_MSR_GLOBAL_STATUS_SET:
		if (d->version < 4 || (val & ~status_bits))
			return GP;
		r->global_status |= val;
		return 0;
	}
	/* GLOBAL_STATUS, INUSE and PERF_CAPABILITIES are read-only. */
	return GP;
}

/* --- counting ------------------------------------------------------------- */

/* Events per microsecond, by architectural event (CPUID.0AH:EBX bit). */
static const u64 arch_event_rates[ARCHPMU_NR_ARCH_EVENTS] = {
	3000,	/* cycles: a 3 GHz core */
	2000,	/* instructions: IPC 0.67 */
	100,	/* reference (bus) cycles: 100 MHz */
	50,	/* LLC references */
	5,	/* LLC misses */
	400,	/* branches */
	4,	/* branch misses */
	12000,	/* topdown slots: 4 per cycle */
	3000,	/* topdown backend bound */
	1000,	/* topdown bad speculation */
	2000,	/* topdown frontend bound */
	6000,	/* topdown retiring */
	400,	/* LBR inserts */
};

#define MODEL_TSC_PER_US	1000	/* fixed counter 2: a 1 GHz TSC */
#define CODE_REF_TSC		0x0300

u64 archpmu_model_rate(u32 code)
{
	int arch = archpmu_arch_event_of(code);

	if (code == CODE_REF_TSC)
		return MODEL_TSC_PER_US;
	return arch >= 0 ? arch_event_rates[arch] : 0;
}

static bool frozen(const struct archpmu_model_regs *r)
{
	return r->desc->version >= 4 && (r->global_status & ARCHPMU_STATUS_CTR_FRZ);
}

static bool globally_enabled(const struct archpmu_model_regs *r, u32 bit)
{
	return (r->desc->version < 2 || (r->global_ctrl & BIT_ULL(bit))) && !frozen(r);
}

static bool gp_counting(const struct archpmu_model_regs *r, u32 i, bool user)
{
	u64 sel = r->evtsel[i];

	return (r->desc->gp_mask & BIT_ULL(i)) && (sel & ARCHPMU_EVTSEL_EN) &&
	       globally_enabled(r, i) &&
	       (sel & (user ? ARCHPMU_EVTSEL_USR : ARCHPMU_EVTSEL_OS));
}

static bool fixed_counting(const struct archpmu_model_regs *r, u32 j, bool user)
{
	u64 nibble = r->fixed_ctrl >> ARCHPMU_FIXED_SHIFT(j);

	return r->desc->version >= 2 && (r->desc->fixed_mask & BIT_ULL(j)) &&
	       globally_enabled(r, ARCHPMU_GLOBAL_FIXED_SHIFT + j) &&
	       (nibble & (user ? ARCHPMU_FIXED_USR : ARCHPMU_FIXED_OS));
}

/* PERF_METRICS counts with fixed counter 3 when GLOBAL_CTRL bit 48 enables it. */
static bool metrics_counting(const struct archpmu_model_regs *r, bool user)
{
	return (r->desc->flags & ARCHPMU_PMU_PERF_METRICS) &&
	       (r->global_ctrl & ARCHPMU_GLOBAL_PERF_METRICS) && fixed_counting(r, 3, user);
}

/* Counting in either ring (the write's concern is the enable, not the filter). */
static bool counter_live(const struct archpmu_model_regs *r, enum reg_kind kind, u32 idx)
{
	switch (kind) {
	case REG_PMC:
	case REG_A_PMC:
	case REG_V6_CTR:
		return gp_counting(r, idx, true) || gp_counting(r, idx, false);
	case REG_FIXED:
		return fixed_counting(r, idx, true) || fixed_counting(r, idx, false);
	default:
		return false;
	}
}

static void add(u64 *counter, u64 inc, u64 width_mask, u64 status_bit,
		bool pmi, struct archpmu_model_regs *r)
{
	u64 old = *counter;

	if (!inc)
		return;
	*counter = (old + inc) & width_mask;
	if (inc <= width_mask - old)
		return;
	if (r->desc->version >= 2)
		r->global_status |= status_bit;
	if (!pmi)
		return;
	r->pmi_pending |= status_bit;
	if (r->quirks & ARCHPMU_MODEL_QUIRK_FREEZE_ON_PMI) {
		if (r->desc->version >= 4)
			r->global_status |= ARCHPMU_STATUS_CTR_FRZ;
		else if (r->desc->version >= 2)
			r->global_ctrl = 0;
	}
}

static bool gp_pmi(const struct archpmu_model_regs *r, u32 i)
{
	return r->evtsel[i] & ARCHPMU_EVTSEL_INT;
}

static bool fixed_pmi(const struct archpmu_model_regs *r, u32 j)
{
	return (r->fixed_ctrl >> ARCHPMU_FIXED_SHIFT(j)) & ARCHPMU_FIXED_PMI;
}

/*
 * Does a cycle with @x occurrences meet a nonzero CMASK: at least CMASK of
 * them, or with EQ (v6) exactly CMASK; INV inverts either comparison (SDM
 * IA32_PERFEVTSELx). Both scaled alike where time drives the count.
 */
static bool cmask_met(u64 sel, u64 cmask, u64 x)
{
	bool met = (sel & ARCHPMU_EVTSEL_EQ) ? x == cmask : x >= cmask;

	return (sel & ARCHPMU_EVTSEL_INV) ? !met : met;
}

/*
 * The event a GP counter's select counts, as event | umask << 8: a second
 * unit mask (v6) names an event the model does not have, which never occurs.
 */
static u32 gp_event(u64 sel)
{
	return sel & ARCHPMU_EVTSEL_UMASK2 ? ~0U : sel & 0xffff;
}

/* What one cycle with @x occurrences adds under the event select's filters. */
static u64 filtered(u64 sel, u64 x)
{
	u64 cmask = (sel & ARCHPMU_EVTSEL_CMASK) >> ARCHPMU_EVTSEL_CMASK_SHIFT;
	bool cond;

	if (!cmask && !(sel & ARCHPMU_EVTSEL_EDGE))
		return x;
	cond = !cmask ? x > 0 : cmask_met(sel, cmask, x);
	return cond ? 1 : 0;
}

void archpmu_model_inject(struct archpmu_model_regs *r, u32 code, u64 count,
			  bool user)
{
	u64 gp_mask = archpmu_width_mask(r->desc->gp_width);
	u64 fixed_mask = archpmu_width_mask(r->desc->fixed_width);
	u32 i;

	for (i = 0; i < ARCHPMU_NR_GP; i++)
		if (gp_counting(r, i, user) && gp_event(r->evtsel[i]) == code)
			add(&r->pmc[i], filtered(r->evtsel[i], count), gp_mask,
			    BIT_ULL(i), gp_pmi(r, i), r);
	for (i = 0; i < ARCHPMU_NR_FIXED; i++)
		if (fixed_counting(r, i, user) &&
		    (code == archpmu_fixed_event_code(i) ||
		     archpmu_fixed_counter_of(code) == (int)i))
			add(&r->fixed[i], count, fixed_mask,
			    BIT_ULL(ARCHPMU_GLOBAL_FIXED_SHIFT + i), fixed_pmi(r, i), r);
	if (metrics_counting(r, user))
		archpmu_model_metrics_inject(r, code, count);
}

/*
 * What @ns of execution adds to a GP counter whose event occurs at @rate/us.
 * @percent scales the counting speed, so the cycles a CMASK event counts too:
 * never more than the cycles event.
 */
static u64 advance_gp(u64 sel, u64 rate, u32 percent, u64 ns)
{
	u64 cmask = (sel & ARCHPMU_EVTSEL_CMASK) >> ARCHPMU_EVTSEL_CMASK_SHIFT;
	u64 cycles = ARCHPMU_MODEL_CYCLES_PER_US * percent / 100 * ns / 1000;
	bool cond;

	if (!cmask && !(sel & ARCHPMU_EVTSEL_EDGE))
		return rate * percent / 100 * ns / 1000;
	/* Per cycle the event occurs rate / CYCLES_PER_US times. */
	cond = !cmask ? rate > 0 :
	       cmask_met(sel, cmask * ARCHPMU_MODEL_CYCLES_PER_US, rate);
	if (!cond)
		return 0;
	return (sel & ARCHPMU_EVTSEL_EDGE) ? 1 : cycles;
}

void archpmu_model_advance(struct archpmu_model_regs *r, u64 ns, bool user,
			   u32 percent)
{
	u64 gp_mask = archpmu_width_mask(r->desc->gp_width);
	u64 fixed_mask = archpmu_width_mask(r->desc->fixed_width);
	u32 i;

	for (i = 0; i < ARCHPMU_NR_GP; i++) {
		u64 rate = archpmu_model_rate(gp_event(r->evtsel[i]));

		if (gp_counting(r, i, user))
			add(&r->pmc[i], advance_gp(r->evtsel[i], rate, percent, ns), gp_mask,
			    BIT_ULL(i), gp_pmi(r, i), r);
	}
	for (i = 0; i < ARCHPMU_NR_FIXED; i++) {
		u64 rate = archpmu_model_rate(archpmu_fixed_event_code(i)) * percent / 100;

		if (fixed_counting(r, i, user))
			add(&r->fixed[i], rate * ns / 1000, fixed_mask,
			    BIT_ULL(ARCHPMU_GLOBAL_FIXED_SHIFT + i), fixed_pmi(r, i), r);
	}
	if (metrics_counting(r, user))
		archpmu_model_metrics_advance(r, ns, percent);
}

/* Nanoseconds until a counter with @dist events to go wraps at @rate/us, or U64_MAX. */
static u64 ns_to_wrap(u64 dist, u64 rate)
{
	if (!rate || dist > ~0ULL / 1000 - rate)
		return ~0ULL;
	return (dist * 1000 + rate - 1) / rate;
}

u64 archpmu_model_advance_to_pmi(struct archpmu_model_regs *r, u64 ns, bool user,
				 u32 percent)
{
	u64 gp_mask = archpmu_width_mask(r->desc->gp_width);
	u64 fixed_mask = archpmu_width_mask(r->desc->fixed_width);
	u64 step = ns, wrap;
	u32 i;

	for (i = 0; i < ARCHPMU_NR_GP; i++) {
		u64 sel = r->evtsel[i];

		/* CMASK and edge count cycles, not events: at most one wrap a step. */
		if (!gp_counting(r, i, user) || !gp_pmi(r, i) ||
		    (sel & (ARCHPMU_EVTSEL_CMASK | ARCHPMU_EVTSEL_EDGE)))
			continue;
		wrap = ns_to_wrap(gp_mask - r->pmc[i] + 1,
				  archpmu_model_rate(gp_event(sel)) * percent / 100);
		step = wrap < step ? wrap : step;
	}
	for (i = 0; i < ARCHPMU_NR_FIXED; i++) {
		if (!fixed_counting(r, i, user) || !fixed_pmi(r, i))
			continue;
		wrap = ns_to_wrap(fixed_mask - r->fixed[i] + 1,
				  archpmu_model_rate(archpmu_fixed_event_code(i)) * percent / 100);
		step = wrap < step ? wrap : step;
	}
	/* At least a nanosecond: a skid past the wrap, as on hardware. */
	if (!step)
		step = 1;
	if (step > ns)
		step = ns;
	archpmu_model_advance(r, step, user, percent);
	return ns - step;
}
