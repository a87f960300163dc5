// SPDX-License-Identifier: GPL-2.0
/*
 * archpmu and perf never share the PMU, as far as perf's reservation reaches
 * (below).
 *
 * perf (and the NMI watchdog, a perf event) claims GP counters through the
 * reservation bitmaps of arch/x86/kernel/cpu/perfctr-watchdog.c: as soon as
 * it has one hardware event it reserves every counter it knows, and from
 * then on rewrites IA32_PERF_GLOBAL_CTRL wholesale. So:
 *  - while any archpmu session exists, archpmu holds the reservation of at
 *    least one GP counter (the counters it uses, else one more), and perf's
 *    reservation, hence perf_event_open() of a hardware event, fails;
 *  - a counter whose reservation fails is held by perf: archpmu allocates
 *    around it, and while perf holds every one of them, every session is
 *    refused (plan.c). A session's plan takes the reservation of every
 *    free legacy counter and, in the same step under archpmu_own_lock,
 *    gives back those it does not use: a perf_event_open() in that moment
 *    fails even if the session is then refused, as it fails while any
 *    session exists; so unprivileged sessions are off by default
 *    (session/privilege.c). A multiplexing session growing onto GP 8 and
 *    up probes them the same way (plan.c); beyond that, archpmu probes
 *    counters only for a privileged caller's GET_PMU_USAGE
 *    (archpmu_perf_held_gp()).
 * archpmu's own sessions share its reservations, counted per counter.
 *
 * The bitmaps cover the legacy addresses only (GP 0-7): a kernel that knows
 * v6 reserves 1900H + 4n, outside them, and so reserves nothing at all, and
 * GP 8 and up have no bit. So a session on those counters holds a legacy
 * counter's reservation too (plan.c), and while perf holds any counter it
 * holds 8 and up as well: it rewrites GLOBAL_CTRL with its own counters'
 * bits, which stops the others.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <asm/nmi.h>
#include <linux/module.h>
#include <linux/mutex.h>

#include "own.h"

static DEFINE_MUTEX(reserve_lock);
static unsigned int gp_refs[ARCHPMU_LEGACY_GP];
static bool kvm_told;	/* since archpmu last held no reservation */

static bool holding(void)
{
	u32 i;

	for (i = 0; i < ARCHPMU_LEGACY_GP; i++)
		if (gp_refs[i])
			return true;
	return false;
}

/*
 * KVM's vPMU counts for its guests through perf events, whose reservation
 * now fails: a guest's counters read 0, and nothing tells its user. Said as
 * archpmu takes the PMU (its first session) while kvm is loaded.
 */
static void tell_kvm(void)
{
	if (!__symbol_get("kvm_get_kvm"))
		return;
	__symbol_put("kvm_get_kvm");
	pr_warn("kvm is loaded: while archpmu sessions exist, perf cannot reserve the PMU for KVM's virtual PMU, and guests' hardware counters read 0\n");
}

static bool reserve_one(u32 i)
{
	if (!reserve_perfctr_nmi(ARCHPMU_MSR_PMC0 + i))
		return false;
	if (!reserve_evntsel_nmi(ARCHPMU_MSR_PERFEVTSEL0 + i)) {
		release_perfctr_nmi(ARCHPMU_MSR_PMC0 + i);
		return false;
	}
	return true;
}

static void release_one(u32 i)
{
	release_evntsel_nmi(ARCHPMU_MSR_PERFEVTSEL0 + i);
	release_perfctr_nmi(ARCHPMU_MSR_PMC0 + i);
}

static void release_locked(u64 gp)
{
	u32 i;

	for (i = 0; i < ARCHPMU_LEGACY_GP; i++) {
		if (!(gp & BIT_ULL(i)) || WARN_ON_ONCE(!gp_refs[i]))
			continue;
		if (!--gp_refs[i])
			release_one(i);
	}
}

/*
 * Take (or share) the reservation of every legacy GP counter in @gp (the
 * others have none) that perf does not hold, into *@reserved; returns those
 * perf holds. A plan allocates around them and gives back at once what it
 * does not use.
 */
u64 archpmu_reserve_gp(u64 gp, u64 *reserved)
{
	u64 held = 0, done = 0;
	u32 i;

	mutex_lock(&reserve_lock);
	for (i = 0; i < ARCHPMU_LEGACY_GP; i++) {
		if (!(gp & BIT_ULL(i)))
			continue;
		if (!gp_refs[i] && !reserve_one(i)) {
			held |= BIT_ULL(i);
			continue;
		}
		gp_refs[i]++;
		done |= BIT_ULL(i);
	}
	mutex_unlock(&reserve_lock);
	*reserved = done;
	return held;
}

/*
 * Give back @gp: what a plan does not use, or a session's as it ends. Left
 * holding the PMU for the first time (a plan kept its first reservation),
 * say that KVM's guests count nothing.
 */
void archpmu_release_gp(u64 gp)
{
	mutex_lock(&reserve_lock);
	release_locked(gp);
	if (!holding()) {
		kvm_told = false;
	} else if (!kvm_told) {
		kvm_told = true;
		tell_kvm();
	}
	mutex_unlock(&reserve_lock);
}

/*
 * perf's reservation is a bitmap the kernel does not export, so each free
 * counter is probed by taking and at once releasing it, under reserve_lock:
 * a perf_event_open() in those few instructions would see EBUSY, as it would
 * if a session were opening. Only for callers with CAP_PERFMON.
 */
u64 archpmu_perf_held_gp(void)
{
	u64 held = 0;
	u32 i;

	mutex_lock(&reserve_lock);
	for (i = 0; i < ARCHPMU_LEGACY_GP; i++) {
		if (gp_refs[i])
			continue;
		if (reserve_one(i))
			release_one(i);
		else
			held |= BIT_ULL(i);
	}
	mutex_unlock(&reserve_lock);
	return archpmu_perf_holds(held);
}
