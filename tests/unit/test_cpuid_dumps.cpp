// SPDX-License-Identifier: MIT
// Every real CPUID dump in tests/data/cpuid, decoded. The expected values
// were read off the dumps by hand (see tests/data/cpuid/README.md).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "../common/cpuid_dump.hpp"
#include "../common/dump_expectations.hpp"
#include "portable_core.hpp"

namespace {

using archpmu::test::CpuidLeaves;
using archpmu::test::dump_cases;

archpmu_cpuid_regs regs(const CpuidLeaves& l, uint32_t leaf, uint32_t sub)
{
    const auto it = l.find({leaf, sub});
    if (it == l.end())
        return {};
    return {it->second.eax, it->second.ebx, it->second.ecx, it->second.edx};
}

archpmu_pmu_desc decode(const CpuidLeaves& l)
{
    archpmu_cpuid_set c{};
    c.leaf01 = regs(l, 0x01, 0);
    c.leaf07_0 = regs(l, 0x07, 0);
    c.leaf07_1 = regs(l, 0x07, 1);
    c.leaf0a = regs(l, 0x0a, 0);
    c.leaf1a = regs(l, 0x1a, 0);
    for (uint32_t i = 0; i < ARCHPMU_LEAF23_SUBLEAVES; ++i)
        c.leaf23[i] = regs(l, 0x23, i);
    archpmu_pmu_desc d{};
    archpmu_decode_cpuid(&c, &d);
    return d;
}

}  // namespace

TEST_CASE("every real CPUID dump decodes to the layout the part has", "[decode][dumps]")
{
    for (const auto& dc : dump_cases()) {
        const auto types =
            archpmu::test::read_cpuid_dump(std::string(ARCHPMU_CPUID_DIR "/") + dc.file);
        CAPTURE(dc.file);
        REQUIRE(types.size() == dc.types.size());
        for (std::size_t t = 0; t < types.size(); ++t) {
            CAPTURE(t);
            const auto d = decode(types[t]);
            const auto& e = dc.types[t];
            CHECK(d.core_type == e.core_type);
            CHECK(d.version == e.version);
            CHECK(d.gp_mask == e.gp_mask);
            CHECK(d.nr_gp == static_cast<uint32_t>(__builtin_popcountll(e.gp_mask)));
            CHECK(d.gp_width == e.gp_width);
            CHECK(d.fixed_mask == e.fixed_mask);
            CHECK(d.fixed_width == e.fixed_width);
            CHECK(d.events_mask == e.events_mask);
            CHECK(static_cast<bool>(d.flags & ARCHPMU_PMU_ANYTHREAD_DEPRECATED) ==
                  e.anythread_deprecated);
            CHECK((d.flags & e.must_have_flags) == e.must_have_flags);
        }
    }
}

TEST_CASE("every dump file in the data folder has an expectation", "[decode][dumps]")
{
    // 13 dumps ship in tests/data/cpuid; a new one must be added above.
    CHECK(dump_cases().size() == 13);
}

TEST_CASE("a dump turns into a model_cpuid parameter of the modelled leaves", "[dumps]")
{
    const auto types =
        archpmu::test::read_cpuid_dump(ARCHPMU_CPUID_DIR "/GenuineIntel00006E8_PM_Yonah.txt");
    REQUIRE(types.size() == 1);
    CHECK(archpmu::test::model_cpuid_param(types[0]) ==
          "1.0=6e8:10800:c109:afe9fbff,7.0=0:0:0:0,a.0=7280201:0:0:0");
}

// perf 6.1's intel_pmu_init: early ack on old parts, late on big cores from
// Haswell and on Tremont, mid on Gracemont-class E-cores (hybrid atoms).
TEST_CASE("each real part unmasks LVTPC when perf does on it", "[decode][dumps]")
{
    const std::vector<std::pair<std::string, std::vector<uint32_t>>> expected = {
        {"GenuineIntel00006E8_PM_Yonah.txt", {ARCHPMU_PMI_ACK_EARLY}},
        {"GenuineIntel00006F6_Conroe.txt", {ARCHPMU_PMI_ACK_EARLY}},
        {"GenuineIntel00106A2_Nehalem-EP.txt", {ARCHPMU_PMI_ACK_EARLY}},
        {"GenuineIntel00206A7_SandyBridge.txt", {ARCHPMU_PMI_ACK_EARLY}},
        {"GenuineIntel00206E6_Beckton2.txt", {ARCHPMU_PMI_ACK_EARLY}},
        {"GenuineIntel00306C3_Haswell.txt", {ARCHPMU_PMI_ACK_LATE}},
        {"GenuineIntel00506CA_Goldmont_01.txt", {ARCHPMU_PMI_ACK_EARLY}},
        {"GenuineIntel00506E3_Skylake.txt", {ARCHPMU_PMI_ACK_LATE}},
        {"GenuineIntel00706E5_IceLakeY.txt", {ARCHPMU_PMI_ACK_LATE}},
        {"GenuineIntel00806F8_SapphireRapids_05.txt", {ARCHPMU_PMI_ACK_LATE}},
        {"GenuineIntel0090672_AlderLake_03.txt", {ARCHPMU_PMI_ACK_LATE, ARCHPMU_PMI_ACK_MID}},
        {"GenuineIntel00906C0_JasperLake_01.txt", {ARCHPMU_PMI_ACK_LATE}},
        {"GenuineIntel00C0662_ArrowLake_07.txt", {ARCHPMU_PMI_ACK_LATE, ARCHPMU_PMI_ACK_MID}},
    };
    for (const auto& [file, acks] : expected) {
        CAPTURE(file);
        const auto types =
            archpmu::test::read_cpuid_dump(std::string(ARCHPMU_CPUID_DIR "/") + file);
        REQUIRE(types.size() == acks.size());
        for (std::size_t t = 0; t < types.size(); ++t) {
            CAPTURE(t);
            CHECK(decode(types[t]).pmi_ack == acks[t]);
        }
    }
}
