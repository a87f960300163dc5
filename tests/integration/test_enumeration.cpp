// SPDX-License-Identifier: MIT
// For each model configuration: the ioctls, sysfs, `archpmu info --json` and
// the dmesg summary all report exactly the configured layout on every CPU.
#include <catch2/catch.hpp>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "../common/cpuid_dump.hpp"
#include "../common/dump_expectations.hpp"
#include "archpmu/device.hpp"
#include "archpmu/pmu.hpp"
#include "archpmu_test.h"
#include "harness.hpp"

using namespace archpmu::itest;

namespace {

using Layout = archpmu::test::PmuLayout;

struct Config {
    std::string name;
    std::string params;
    Layout primary;
    Layout secondary;  // the odd CPUs of a hybrid configuration
    bool hybrid = false;
};

std::string hex(uint64_t v)
{
    char buf[32];
    std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

std::vector<uint32_t> bits(uint64_t mask)
{
    std::vector<uint32_t> out;
    for (uint32_t i = 0; i < 64; ++i)
        if (mask & (1ULL << i))
            out.push_back(i);
    return out;
}

std::string event_names(uint64_t mask)
{
    std::string out;
    for (uint32_t n : bits(mask)) {
        if (n >= archpmu::kArchEventCount)
            continue;
        out += (out.empty() ? "" : " ") + std::string(archpmu::arch_event_name(n));
    }
    return out;
}

std::vector<Config> configurations()
{
    using L = Layout;
    constexpr uint32_t none = ARCHPMU_CORE_TYPE_NONE, core = ARCHPMU_CORE_TYPE_CORE,
                       atom = ARCHPMU_CORE_TYPE_ATOM, hybrid = ARCHPMU_PMU_HYBRID;
    std::vector<Config> configs = {
        {"v1",
         "model_version=1 model_gp=2 model_gp_width=40 model_fixed=0",
         L{1, 0x3, 40, 0x0, 0, 0x7f},
         {}},
        {"v2",
         "model_version=2 model_gp=2 model_gp_width=40 model_fixed=3 model_fixed_width=40",
         L{2, 0x3, 40, 0x7, 40, 0x7f},
         {}},
        {"v3", "model_version=3 model_gp=4 model_fixed=3", L{3, 0xf, 48, 0x7, 48, 0x7f}, {}},
        {"v4 defaults", "", L{4, 0xf, 48, 0x7, 48, 0x7f}, {}},
        {"v5 non-contiguous fixed",
         "model_version=5 model_gp=8 model_fixed=1 model_fixed_mask=0x5 model_events_len=8 "
         "model_anythread_deprecated=1 model_full_width=1",
         L{5, 0xff, 48, 0x5, 48, 0xff, true, none, ARCHPMU_PMU_FULL_WIDTH_WRITE, true},
         {}},
        {"v4 unavailable events",
         "model_version=4 model_gp=4 model_gp_width=32 model_events_len=7 "
         "model_events_unavail=0x24",
         L{4, 0xf, 32, 0x7, 48, 0x5b},
         {}},
        {"v6 leaf 23H",
         "model_version=6 model_gp=8 model_fixed=3 model_fixed_mask=0x70 "
         "model_events_len=13 model_anythread_deprecated=1",
         L{6, 0xff, 48, 0x77, 48, 0x1fff, true, none, ARCHPMU_PMU_LEAF23},
         {}},
    };
    configs.push_back(Config{"hybrid v5",
                             "model_version=5 model_gp=8 model_fixed=3 model_full_width=1 "
                             "model_hybrid_gp=4 model_hybrid_fixed_mask=0x70 "
                             "model_hybrid_cpus=" +
                                 odd_cpu_list(),
                             L{5, 0xff, 48, 0x7, 48, 0x7f, false, core, hybrid, true},
                             L{5, 0xf, 48, 0x77, 48, 0x7f, false, atom, hybrid, true}, true});

    // Real CPUs, impersonated from their CPUID dumps.
    for (const auto& dc : archpmu::test::dump_cases()) {
        const auto types =
            archpmu::test::read_cpuid_dump(std::string(ARCHPMU_CPUID_DIR "/") + dc.file);
        Config c;
        c.name = dc.file;
        c.params = "model_cpuid=" + archpmu::test::model_cpuid_param(types.at(0));
        c.primary = dc.types.at(0);
        if (types.size() > 1) {
            c.hybrid = true;
            c.params += " model_cpuid_hybrid=" + archpmu::test::model_cpuid_param(types.at(1)) +
                        " model_hybrid_cpus=" + odd_cpu_list();
            c.secondary = dc.types.at(1);
        }
        configs.push_back(c);
    }
    return configs;
}

void check_ioctl(const archpmu::CpuInfo& c, const Layout& l)
{
    CHECK(c.version == l.version);
    CHECK(c.gp_mask == l.gp_mask);
    CHECK(c.gp_counters == bits(l.gp_mask).size());
    CHECK(c.gp_width == l.gp_width);
    CHECK(c.fixed_mask == l.fixed_mask);
    CHECK(c.fixed_width == l.fixed_width);
    CHECK(c.events_mask == l.events_mask);
    CHECK(c.anythread_deprecated() == l.anythread_deprecated);
    CHECK(c.full_width_write() == l.full_width);
    CHECK((c.pmu_flags & l.must_have_flags) == l.must_have_flags);
    CHECK(static_cast<uint32_t>(c.core_type == archpmu::CoreType::core   ? ARCHPMU_CORE_TYPE_CORE
                                : c.core_type == archpmu::CoreType::atom ? ARCHPMU_CORE_TYPE_ATOM
                                                                         : 0) == l.core_type);
}

void check_sysfs(unsigned cpu, const Layout& l)
{
    CHECK(cpu_sysfs(cpu, "version") == std::to_string(l.version));
    CHECK(cpu_sysfs(cpu, "gp_counters") == std::to_string(bits(l.gp_mask).size()));
    CHECK(cpu_sysfs(cpu, "gp_width") == std::to_string(l.gp_width));
    CHECK(cpu_sysfs(cpu, "gp_mask") == hex(l.gp_mask));
    CHECK(cpu_sysfs(cpu, "fixed_counters") == archpmu::format_cpu_list(bits(l.fixed_mask)));
    CHECK(cpu_sysfs(cpu, "fixed_width") == std::to_string(l.fixed_width));
    CHECK(cpu_sysfs(cpu, "fixed_mask") == hex(l.fixed_mask));
    CHECK(cpu_sysfs(cpu, "events") == event_names(l.events_mask));
    CHECK(cpu_sysfs(cpu, "events_mask") == hex(l.events_mask));
    CHECK(cpu_sysfs(cpu, "anythread_deprecated") == (l.anythread_deprecated ? "1" : "0"));
    CHECK(cpu_sysfs(cpu, "full_width_write") == (l.full_width ? "1" : "0"));
    CHECK(cpu_sysfs(cpu, "core_type") == (l.core_type == ARCHPMU_CORE_TYPE_CORE   ? "core"
                                          : l.core_type == ARCHPMU_CORE_TYPE_ATOM ? "atom"
                                                                                  : "none"));
}

void check_json(const nlohmann::json& j, const Layout& l, bool hybrid)
{
    CHECK(j["version"] == l.version);
    CHECK(j["gp_counters"] == bits(l.gp_mask).size());
    CHECK(j["gp_width"] == l.gp_width);
    CHECK(j["fixed_counters"] == nlohmann::json(bits(l.fixed_mask)));
    CHECK(j["fixed_width"] == l.fixed_width);
    std::vector<std::string> names;
    for (uint32_t n : bits(l.events_mask))
        if (n < archpmu::kArchEventCount)
            names.emplace_back(archpmu::arch_event_name(n));
    CHECK(j["events"] == nlohmann::json(names));
    CHECK(j["anythread_deprecated"] == l.anythread_deprecated);
    CHECK(j["full_width_write"] == l.full_width);
    if (hybrid)
        CHECK(j["core_type"] == (l.core_type == ARCHPMU_CORE_TYPE_CORE ? "core" : "atom"));
    else
        CHECK(j["core_type"].is_null());
}

}  // namespace

TEST_CASE("every configuration is reported exactly on every CPU", "[enumeration]")
{
    const auto cpus = online_cpus();
    REQUIRE(cpus.size() >= 2);
    for (const auto& config : configurations()) {
        SECTION(config.name)
        {
            KernelLog log;
            LoadedModule module("backend=model " + config.params);
            const archpmu::Device dev;

            const auto info = dev.info();
            CHECK(info.backend == archpmu::Backend::model);
            CHECK(info.abi_version == ARCHPMU_ABI_VERSION);
            CHECK(info.nr_cpus_enumerated == cpus.size());
            CHECK(info.capabilities ==
                  (ARCHPMU_CAP_INFO | ARCHPMU_CAP_CPU_INFO | ARCHPMU_CAP_MODEL_MSR |
                   ARCHPMU_CAP_COUNT | ARCHPMU_CAP_MODEL_INJECT | ARCHPMU_CAP_SESSION_FD |
                   ARCHPMU_CAP_OPEN_START | ARCHPMU_CAP_SAMPLE | ARCHPMU_CAP_REGS |
                   ARCHPMU_CAP_NETLINK | ARCHPMU_CAP_TASK | ARCHPMU_CAP_ENABLE_ON_EXEC |
                   ARCHPMU_CAP_MULTIPLEX | ARCHPMU_CAP_COUNTER_MASK | ARCHPMU_CAP_UNPRIVILEGED |
                   ARCHPMU_CAP_TASK_SAMPLE | ARCHPMU_CAP_CALLCHAIN | ARCHPMU_CAP_USER_STACK |
                   ARCHPMU_CAP_PERF_METRICS | ARCHPMU_CAP_CORE_TYPE | ARCHPMU_CAP_CORE_TYPE_SAMPLE |
                   ARCHPMU_CAP_READ_SUM));
            CHECK(read_file("/sys/class/misc/archpmu/backend") == "model");

            const auto tool = run_tool("info --json");
            REQUIRE(tool.status == 0);
            const auto doc = nlohmann::json::parse(tool.out);
            CHECK(doc["backend"] == "model");
            CHECK(doc["abi_version"] == ARCHPMU_ABI_VERSION);
            REQUIRE(doc["cpus"].size() == cpus.size());

            std::size_t index = 0;
            for (unsigned cpu : cpus) {
                CAPTURE(cpu);
                const Layout& l =
                    config.hybrid && is_odd_cpu(cpu) ? config.secondary : config.primary;
                check_ioctl(dev.cpu_info(cpu), l);
                check_sysfs(cpu, l);
                CHECK(doc["cpus"][index]["cpu"] == cpu);
                check_json(doc["cpus"][index], l, config.hybrid);
                ++index;
            }

            // One summary line per distinct PMU, naming its CPUs.
            const auto groups = log.grep("archpmu: CPUs ");
            CHECK(groups.size() == (config.hybrid ? 2u : 1u));
            CHECK(log.grep("archpmu: loaded: backend model").size() == 1);

            const auto table = run_tool("info");
            CHECK(table.status == 0);
            CHECK_THAT(table.out, Catch::Contains("backend model"));
        }
    }
}
