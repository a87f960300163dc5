// SPDX-License-Identifier: GPL-2.0
/*
 * sysfs: per-CPU attributes in /sys/devices/system/cpu/cpuN/archpmu/ and
 * global ones on the misc device (/sys/class/misc/archpmu/). One value per
 * file; docs/sysfs-archpmu.md describes each. The per-CPU directories have
 * a cpuhp state of their own, after enumeration's.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/debugfs.h>
#include <linux/device.h>
#include <linux/fault-inject.h>
#include <linux/kernel.h>
#include <linux/sysfs.h>

#include "../pmu/pmu.h"
#include "../sample/sample.h"
#include "../session/session.h"
#include "dev.h"

static int cpu_desc(struct device *dev, struct archpmu_pmu_desc *d)
{
	return archpmu_enum_get(dev->id, d, NULL);
}

#define ARCHPMU_CPU_ATTR(_name, _fmt, _expr)					\
static ssize_t _name##_show(struct device *dev, struct device_attribute *attr,	\
			    char *buf)						\
{										\
	struct archpmu_pmu_desc d;						\
	int ret = cpu_desc(dev, &d);						\
										\
	if (ret)								\
		return ret;							\
	return sysfs_emit(buf, _fmt "\n", _expr);				\
}										\
static DEVICE_ATTR_RO(_name)

ARCHPMU_CPU_ATTR(version, "%u", d.version);
ARCHPMU_CPU_ATTR(gp_counters, "%u", d.nr_gp);
ARCHPMU_CPU_ATTR(gp_width, "%u", d.gp_width);
ARCHPMU_CPU_ATTR(gp_mask, "%#llx", d.gp_mask);
ARCHPMU_CPU_ATTR(fixed_width, "%u", d.fixed_width);
ARCHPMU_CPU_ATTR(fixed_mask, "%#llx", d.fixed_mask);
ARCHPMU_CPU_ATTR(events_mask, "%#llx", d.events_mask);
ARCHPMU_CPU_ATTR(anythread_deprecated, "%d",
		 !!(d.flags & ARCHPMU_PMU_ANYTHREAD_DEPRECATED));
ARCHPMU_CPU_ATTR(full_width_write, "%d",
		 !!(d.flags & ARCHPMU_PMU_FULL_WIDTH_WRITE));
ARCHPMU_CPU_ATTR(hybrid, "%d", !!(d.flags & ARCHPMU_PMU_HYBRID));
ARCHPMU_CPU_ATTR(core_type, "%s", archpmu_core_type_name(d.core_type));
ARCHPMU_CPU_ATTR(perf_capabilities, "%#llx", d.perf_capabilities);
ARCHPMU_CPU_ATTR(pmu_flags, "%#x", d.flags);

static ssize_t fixed_counters_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	struct archpmu_pmu_desc d;
	unsigned long mask;
	int ret = cpu_desc(dev, &d);

	if (ret)
		return ret;
	mask = d.fixed_mask;
	return sysfs_emit(buf, "%*pbl\n", (int)ARCHPMU_MAX_FIXED_COUNTERS, &mask);
}
static DEVICE_ATTR_RO(fixed_counters);

static ssize_t events_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	struct archpmu_pmu_desc d;
	unsigned int n, len = 0;
	int ret = cpu_desc(dev, &d);

	if (ret)
		return ret;
	for (n = 0; n < ARCHPMU_NR_ARCH_EVENTS; n++)
		if (d.events_mask & BIT_ULL(n))
			len += sysfs_emit_at(buf, len, "%s%s", len ? " " : "",
					     archpmu_event_name(n));
	len += sysfs_emit_at(buf, len, "\n");
	return len;
}
static DEVICE_ATTR_RO(events);

static ssize_t throttled_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	u64 throttled, lost;

	archpmu_sample_cpu_totals(dev->id, &throttled, &lost);
	return sysfs_emit(buf, "%llu\n", throttled);
}
static DEVICE_ATTR_RO(throttled);

static ssize_t lost_samples_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	u64 throttled, lost;

	archpmu_sample_cpu_totals(dev->id, &throttled, &lost);
	return sysfs_emit(buf, "%llu\n", lost);
}
static DEVICE_ATTR_RO(lost_samples);

static struct attribute *archpmu_cpu_attrs[] = {
	&dev_attr_version.attr,
	&dev_attr_gp_counters.attr,
	&dev_attr_gp_width.attr,
	&dev_attr_gp_mask.attr,
	&dev_attr_fixed_counters.attr,
	&dev_attr_fixed_width.attr,
	&dev_attr_fixed_mask.attr,
	&dev_attr_events.attr,
	&dev_attr_events_mask.attr,
	&dev_attr_anythread_deprecated.attr,
	&dev_attr_full_width_write.attr,
	&dev_attr_hybrid.attr,
	&dev_attr_core_type.attr,
	&dev_attr_perf_capabilities.attr,
	&dev_attr_pmu_flags.attr,
	&dev_attr_throttled.attr,
	&dev_attr_lost_samples.attr,
	NULL
};

static const struct attribute_group archpmu_cpu_group = {
	.name = "archpmu",
	.attrs = archpmu_cpu_attrs,
};

static enum cpuhp_state sysfs_hp_state;

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
/*
 * debugfs archpmu/fail_cpu_online: the kernel's fault-injection attributes
 * for the one allocating step of bringing a CPU online. fail-nth cannot
 * reach it: the callbacks run in the cpuhp/N thread, not the caller's.
 */
static DECLARE_FAULT_ATTR(fail_cpu_online);

void archpmu_sysfs_debugfs_init(struct dentry *dir)
{
	fault_create_debugfs_attr("fail_cpu_online", dir, &fail_cpu_online);
}

static bool fail_online(void)
{
	return should_fail(&fail_cpu_online, 1);
}
#else
void archpmu_sysfs_debugfs_init(struct dentry *dir)
{
}

static bool fail_online(void)
{
	return false;
}
#endif

static int sysfs_cpu_online(unsigned int cpu)
{
	struct device *dev = get_cpu_device(cpu);

	if (fail_online())
		return -ENOMEM;
	return dev ? sysfs_create_group(&dev->kobj, &archpmu_cpu_group) : -ENODEV;
}

static int sysfs_cpu_offline(unsigned int cpu)
{
	struct device *dev = get_cpu_device(cpu);

	if (dev)
		sysfs_remove_group(&dev->kobj, &archpmu_cpu_group);
	return 0;
}

int archpmu_sysfs_init(void)
{
	int ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "archpmu/sysfs:online",
				    sysfs_cpu_online, sysfs_cpu_offline);

	if (ret < 0) {
		pr_err("cannot register the sysfs CPU hotplug callbacks: %d\n", ret);
		return ret;
	}
	sysfs_hp_state = ret;
	return 0;
}

void archpmu_sysfs_exit(void)
{
	cpuhp_remove_state(sysfs_hp_state);
}

static ssize_t backend_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%s\n", archpmu_backend->name);
}
static DEVICE_ATTR_RO(backend);

static ssize_t abi_version_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", ARCHPMU_ABI_VERSION);
}
static DEVICE_ATTR_RO(abi_version);

static ssize_t capabilities_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%#llx\n", archpmu_capabilities());
}
static DEVICE_ATTR_RO(capabilities);

static ssize_t unloading_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", archpmu_session_unloading());
}

static ssize_t unloading_store(struct device *dev, struct device_attribute *attr,
			       const char *buf, size_t count)
{
	bool on;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ret = kstrtobool(buf, &on);
	if (ret)
		return ret;
	archpmu_session_set_unloading(on);
	pr_info("unloading=%d: %s\n", on,
		on ? "new sessions are refused, and the exporter lets go, until rmmod" :
		"sessions open again");
	return count;
}
static DEVICE_ATTR_RW(unloading);

static struct attribute *archpmu_dev_attrs[] = {
	&dev_attr_backend.attr,
	&dev_attr_abi_version.attr,
	&dev_attr_capabilities.attr,
	&dev_attr_unloading.attr,
	NULL
};

static const struct attribute_group archpmu_dev_group = {
	.attrs = archpmu_dev_attrs,
};

const struct attribute_group *archpmu_dev_groups[] = {
	&archpmu_dev_group,
	NULL
};
