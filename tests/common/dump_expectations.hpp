// SPDX-License-Identifier: MIT
// What each real CPUID dump in tests/data/cpuid describes, read off the dumps
// by hand (see tests/data/cpuid/README.md). The unit tests check the decoder
// against it; the VM tests check the module impersonating each CPU.
#pragma once

#include <cstdint>
#include <vector>

#include "archpmu.h"

namespace archpmu::test {

// One logical CPU's PMU as archpmu must report it.
struct PmuLayout {
    uint32_t version = 0;
    uint64_t gp_mask = 0;
    uint32_t gp_width = 0;
    uint64_t fixed_mask = 0;
    uint32_t fixed_width = 0;
    uint64_t events_mask = 0;
    bool anythread_deprecated = false;
    uint32_t core_type = ARCHPMU_CORE_TYPE_NONE;
    uint32_t must_have_flags = 0;  // ARCHPMU_PMU_* bits that must be set
    bool full_width = false;
};

struct DumpCase {
    const char* file;
    std::vector<PmuLayout> types;
};

inline const std::vector<DumpCase>& dump_cases()
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

}  // namespace archpmu::test
