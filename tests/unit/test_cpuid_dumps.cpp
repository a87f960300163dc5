// SPDX-License-Identifier: MIT
// Every real CPUID dump in tests/data/cpuid, decoded. The expected values
// were read off the dumps by hand (see tests/data/cpuid/README.md).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "../common/cpuid_dump.hpp"
#include "portable_core.hpp"

namespace {

using archpmu::test::CpuidLeaves;

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

struct Expect {
    uint32_t version;
    uint64_t gp_mask;
    uint32_t gp_width;
    uint64_t fixed_mask;
    uint32_t fixed_width;
    uint64_t events_mask;
    bool anythread_deprecated;
    uint32_t core_type;
    uint32_t must_have_flags;
};

struct DumpCase {
    const char* file;
    std::vector<Expect> types;
};

const std::vector<DumpCase>& dump_cases()
{
    constexpr uint32_t none = ARCHPMU_CORE_TYPE_NONE, core = ARCHPMU_CORE_TYPE_CORE,
                       atom = ARCHPMU_CORE_TYPE_ATOM;
    static const std::vector<DumpCase> cases = {
        {"GenuineIntel00006E8_PM_Yonah.txt", {{1, 0x3, 40, 0x0, 0, 0x7f, false, none, 0}}},
        // Conroe: v2 with EDX reporting no fixed counters; the part has three.
        {"GenuineIntel00006F6_Conroe.txt",
         {{2, 0x3, 40, 0x7, 40, 0x7f, false, none, ARCHPMU_PMU_FIXED_ASSUMED}}},
        {"GenuineIntel00106A2_Nehalem-EP.txt", {{3, 0xf, 48, 0x7, 48, 0x7f, false, none, 0}}},
        {"GenuineIntel00206A7_SandyBridge.txt", {{3, 0xff, 48, 0x7, 48, 0x7f, false, none, 0}}},
        // Beckton: version 0 (dumped under a hypervisor): no architectural PMU.
        {"GenuineIntel00206E6_Beckton2.txt",
         {{0, 0x0, 0, 0x0, 0, 0x0, false, none, ARCHPMU_PMU_HYPERVISOR}}},
        {"GenuineIntel00306C3_Haswell.txt", {{3, 0xf, 48, 0x7, 48, 0x7f, false, none, 0}}},
        {"GenuineIntel00506CA_Goldmont_01.txt", {{4, 0xf, 48, 0x7, 48, 0x7f, false, none, 0}}},
        {"GenuineIntel00506E3_Skylake.txt", {{4, 0xff, 48, 0x7, 48, 0x7f, false, none, 0}}},
        {"GenuineIntel00706E5_IceLakeY.txt", {{5, 0xff, 48, 0xf, 48, 0xff, true, none, 0}}},
        {"GenuineIntel00806F8_SapphireRapids_05.txt",
         {{5, 0xff, 48, 0xf, 48, 0xff, true, none, 0}}},
        // Alder Lake: hybrid with identical 0AH on both core types.
        {"GenuineIntel0090672_AlderLake_03.txt",
         {{5, 0x3f, 48, 0x7, 48, 0x7f, true, core, ARCHPMU_PMU_HYBRID},
          {5, 0x3f, 48, 0x7, 48, 0x7f, true, atom, ARCHPMU_PMU_HYBRID}}},
        // Jasper Lake: leaf 1AH says Atom, but the part is not hybrid.
        {"GenuineIntel00906C0_JasperLake_01.txt", {{5, 0xf, 48, 0x7, 48, 0x7f, true, none, 0}}},
        // Arrow Lake: v6, leaf 23H: 10 GP counters on the P-core (0AH says 8), a
        // non-contiguous fixed bitmap 0x77 on the E-core, events in positive logic.
        {"GenuineIntel00C0662_ArrowLake_07.txt",
         {{6, 0x3ff, 48, 0xf, 48, 0x1dff, true, core,
           ARCHPMU_PMU_HYBRID | ARCHPMU_PMU_LEAF23 | ARCHPMU_PMU_UMASK2 | ARCHPMU_PMU_EQ},
          {6, 0xff, 48, 0x77, 48, 0x1f7f, true, atom,
           ARCHPMU_PMU_HYBRID | ARCHPMU_PMU_LEAF23 | ARCHPMU_PMU_UMASK2 | ARCHPMU_PMU_EQ}}},
    };
    return cases;
}

}  // namespace

TEST_CASE("every real CPUID dump decodes to the layout the part has", "[decode][dumps]")
{
    for (const auto& dc : dump_cases()) {
        const auto types = archpmu::test::read_cpuid_dump(std::string(ARCHPMU_CPUID_DIR "/") +
                                                          dc.file);
        CAPTURE(dc.file);
        REQUIRE(types.size() == dc.types.size());
        for (std::size_t t = 0; t < types.size(); ++t) {
            CAPTURE(t);
            const auto d = decode(types[t]);
            const auto& e = dc.types[t];
            CHECK(d.version == e.version);
            CHECK(d.gp_mask == e.gp_mask);
            CHECK(d.nr_gp == static_cast<uint32_t>(__builtin_popcountll(e.gp_mask)));
            CHECK(d.gp_width == e.gp_width);
            CHECK(d.fixed_mask == e.fixed_mask);
            CHECK(d.fixed_width == e.fixed_width);
            CHECK(d.events_mask == e.events_mask);
            CHECK(static_cast<bool>(d.flags & ARCHPMU_PMU_ANYTHREAD_DEPRECATED) ==
                  e.anythread_deprecated);
            CHECK(d.core_type == e.core_type);
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
    const auto types = archpmu::test::read_cpuid_dump(ARCHPMU_CPUID_DIR
                                                      "/GenuineIntel00006E8_PM_Yonah.txt");
    REQUIRE(types.size() == 1);
    CHECK(archpmu::test::model_cpuid_param(types[0]) ==
          "1.0=6e8:10800:c109:afe9fbff,7.0=0:0:0:0,a.0=7280201:0:0:0");
}
