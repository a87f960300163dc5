// SPDX-License-Identifier: GPL-2.0
/*
 * The model's IA32_PERF_METRICS (329H, where IA32_PERF_CAPABILITIES[15] says
 * it exists): the top-down breakdown of fixed counter 3's slots. Portable:
 * the unit tests drive it through model_regs.c.
 *
 * The register holds eight 8-bit fractions of 0xFF (SDM vol. 3B, "Performance
 * Metrics"; docs/pmu.md): retiring, bad speculation, frontend bound, backend
 * bound, whose fractions sum to 0xFF, then the level-2 heavy operations,
 * branch mispredicts, fetch latency and memory bound, each a part of the
 * level-1 category before it. The metrics count while fixed counter 3
 * counts and GLOBAL_CTRL.EN_PERF_METRICS (bit 48) is set. Software resets
 * them by writing 0, and restores them by writing a value back after fixed
 * counter 3 (perf's order): the fractions then apply to that counter's value.
 * Their internal overflow (GLOBAL_STATUS bit 48) is not modelled.
 */
#include "model_regs.h"

/* Each category's slots per microsecond beside fixed counter 3's 12000. */
static const u64 td_rates[ARCHPMU_MODEL_TD_FIELDS] = {
	6000,	/* retiring, as topdown-retiring */
	1000,	/* bad speculation, as topdown-bad-spec */
	2000,	/* frontend bound, as topdown-fe-bound */
	3000,	/* backend bound, as topdown-be-bound */
	1500,	/* heavy operations: a quarter of retiring */
	800,	/* branch mispredicts: most of bad speculation */
	1200,	/* fetch latency: more than half of frontend bound */
	2000,	/* memory bound: two thirds of backend bound */
};

/* The architectural top-down events and perf's metric encodings, by field. */
static int td_field_of(u32 code)
{
	switch (archpmu_arch_event_of(code)) {
	case ARCHPMU_EVENT_TOPDOWN_RETIRING:
		return 0;
	case ARCHPMU_EVENT_TOPDOWN_BAD_SPEC:
		return 1;
	case ARCHPMU_EVENT_TOPDOWN_FE_BOUND:
		return 2;
	case ARCHPMU_EVENT_TOPDOWN_BE_BOUND:
		return 3;
	}
	/* perf's event=0x00,umask=0x80+i: the metric in field i. */
	if ((code & 0xff) == 0 && (code >> 8) >= 0x80 &&
	    (code >> 8) < 0x80 + ARCHPMU_MODEL_TD_FIELDS)
		return (code >> 8) - 0x80;
	return -1;
}

/*
 * The fraction of 0xFF of @part in @whole, rounded down, and what was left
 * of 0xFF * @part (@rest, of @whole).
 */
static u64 fraction(u64 part, u64 whole, u64 *rest)
{
	*rest = 0;
	if (!whole)
		return 0;
	if (part > whole)
		part = whole;
	/* 0xFF * part overflows only past 2^56: scale both down first. */
	while (whole > (~0ULL >> 8)) {
		part >>= 1;
		whole >>= 1;
	}
	*rest = part * 0xff % whole;
	return part * 0xff / whole;
}

u64 archpmu_model_metrics_read(const struct archpmu_model_regs *r)
{
	u64 sum = r->td[0] + r->td[1] + r->td[2] + r->td[3];
	u64 field[ARCHPMU_MODEL_TD_FIELDS], rest[ARCHPMU_MODEL_TD_FIELDS];
	u64 total = 0, val = 0;
	unsigned int i, j, most;

	if (!sum)
		return 0;
	for (i = 0; i < 4; i++) {
		field[i] = fraction(r->td[i], sum, &rest[i]);
		total += field[i];
	}
	/*
	 * The level-1 fractions sum to 0xFF: what rounding down lost goes to
	 * those that lost the most, one each (the first of equals first).
	 */
	for (; total < 0xff; total++) {
		for (most = 0, j = 1; j < 4; j++)
			if (rest[j] > rest[most])
				most = j;
		field[most]++;
		rest[most] = 0;
	}
	for (i = 4; i < ARCHPMU_MODEL_TD_FIELDS; i++) {
		field[i] = fraction(r->td[i], sum, &rest[i]);
		if (rest[i] * 2 >= sum)
			field[i]++;
		if (field[i] > field[i - 4])
			field[i] = field[i - 4];
	}
	for (i = 0; i < ARCHPMU_MODEL_TD_FIELDS; i++)
		val |= (field[i] & 0xff) << (8 * i);
	return val;
}

void archpmu_model_metrics_write(struct archpmu_model_regs *r, u64 val)
{
	u64 slots = r->fixed[3] ? r->fixed[3] : 1;
	unsigned int i;

	for (i = 0; i < ARCHPMU_MODEL_TD_FIELDS; i++)
		r->td[i] = ((val >> (8 * i)) & 0xff) * slots;
}

void archpmu_model_metrics_inject(struct archpmu_model_regs *r, u32 code, u64 count)
{
	int i = td_field_of(code);

	if (i >= 0)
		r->td[i] += count * 0xff;
}

void archpmu_model_metrics_advance(struct archpmu_model_regs *r, u64 ns, u32 percent)
{
	unsigned int i;

	for (i = 0; i < ARCHPMU_MODEL_TD_FIELDS; i++)
		r->td[i] += td_rates[i] * percent / 100 * ns / 1000 * 0xff;
}
