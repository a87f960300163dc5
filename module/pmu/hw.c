// SPDX-License-Identifier: GPL-2.0
/*
 * The hw backend: the CPU's own PMU through CPUID and the *_safe_* MSR
 * accessors, so a #GP (a hypervisor that does not emulate an MSR, say)
 * becomes -EIO rather than an oops.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>

#include "../compat.h"
#include "backend.h"

/* Linux's X86_FEATURE_ARCH_PERFMON also needs more than one GP counter. */
#define ARCHPMU_HW_MIN_GP	2

static void hw_cpuid(u32 leaf, u32 subleaf, struct archpmu_cpuid_regs *r)
{
	cpuid_count(leaf, subleaf, &r->eax, &r->ebx, &r->ecx, &r->edx);
}

static int hw_rdmsr(u32 msr, u64 *val)
{
	return rdmsrq_safe(msr, val) ? -EIO : 0;
}

static int hw_wrmsr(u32 msr, u64 val)
{
	return wrmsrq_safe(msr, val) ? -EIO : 0;
}

/*
 * The local APIC masks LVTPC on every PMI it delivers; like perf
 * (perf_events_lapic_init, intel_pmu_handle_irq) the whole entry is
 * rewritten as an unmasked NMI, which also sets NMI delivery where
 * firmware or another agent left something else.
 */
static void hw_pmi_unmask(void)
{
	archpmu_apic_write(APIC_LVTPC, APIC_DM_NMI);
}

const struct archpmu_backend archpmu_hw_backend = {
	.name = "hw",
	.id = ARCHPMU_BACKEND_HW,
	.cpuid = hw_cpuid,
	.msr_read = hw_rdmsr,
	.msr_write = hw_wrmsr,
	.pmi_unmask = hw_pmi_unmask,
};

/* Whether the boot CPU has an architectural PMU; if not, @why says why. */
int archpmu_hw_probe(char *why, size_t len)
{
	struct archpmu_cpuid_regs r;
	u32 version, nr_gp;

	if (boot_cpu_data.x86_vendor != X86_VENDOR_INTEL) {
		snprintf(why, len, "the CPU vendor is %s, not GenuineIntel",
			 boot_cpu_data.x86_vendor_id[0] ?
			 boot_cpu_data.x86_vendor_id : "unknown");
		return -ENODEV;
	}
	if (boot_cpu_data.cpuid_level < 0xa) {
		snprintf(why, len, "CPUID leaf 0AH is not implemented (max basic leaf %#x)",
			 boot_cpu_data.cpuid_level);
		return -ENODEV;
	}
	hw_cpuid(0xa, 0, &r);
	version = r.eax & 0xff;
	nr_gp = (r.eax >> 8) & 0xff;
	if (!version) {
		snprintf(why, len,
			 "CPUID.0AH reports PMU version 0, no architectural PMU (a VM without a virtual PMU?)");
		return -ENODEV;
	}
	if (nr_gp < ARCHPMU_HW_MIN_GP) {
		snprintf(why, len,
			 "CPUID.0AH reports %u general-purpose counters, at least %u are needed",
			 nr_gp, ARCHPMU_HW_MIN_GP);
		return -ENODEV;
	}
	if (version >= 6 && ARCHPMU_PERF_V6_ADDRESSES)
		pr_warn("PMU v6: this kernel's perf reserves its counters at 1900H, outside the reservation archpmu shares with it, so neither keeps the other out: do not use perf's hardware events (the NMI watchdog's included) beside archpmu sessions\n");
	return 0;
}
