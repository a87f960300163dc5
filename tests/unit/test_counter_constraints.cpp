// SPDX-License-Identifier: MIT
// The GP counter restrictions of model-specific events, from perf's event
// tables (userlib/src/counter_constraints_table.inc): real rows of the table,
// the mapfile matched as perf matches it, and hybrid parts' core types.
#include <catch2/catch.hpp>

#include <regex>
#include <string>

#include "archpmu/counter_constraints.hpp"

using archpmu::CoreType;
using archpmu::counter_constraints_model;
using archpmu::gp_counter_constraint;

namespace {

// CPUID.1:EAX of family 6 parts: extended model, model, stepping.
constexpr std::uint32_t family6(std::uint32_t display_model, std::uint32_t stepping)
{
    return (display_model >> 4) << 16 | 0x6U << 8 | (display_model & 0xf) << 4 | stepping;
}

constexpr std::uint32_t kAlderLake = 0x00090672;       // 6-97-2, hybrid (alderlake)
constexpr std::uint32_t kIceLake = 0x000706e5;         // 6-7E-5 (icelake)
constexpr std::uint32_t kNehalemEp = 0x000106a5;       // 6-1A-5 (nehalemep)
constexpr std::uint32_t kHaswell = 0x000306c3;         // 6-3C-3 (haswell)
constexpr std::uint32_t kSkylake = 0x000906ea;         // 6-9E-A (skylake)
constexpr std::uint32_t kSapphireRapids = 0x000806f8;  // 6-8F-8 (sapphirerapids)
constexpr std::uint32_t kZen = 0x00800f12;             // AMD family 0x17 (15 + 8)

}  // namespace

TEST_CASE("signatures are decoded as perf decodes them", "[constraints]")
{
    CHECK(family6(0x97, 2) == kAlderLake);
    CHECK(counter_constraints_model(kAlderLake) == "alderlake");
    CHECK(counter_constraints_model(kIceLake) == "icelake");
    CHECK(counter_constraints_model(kNehalemEp) == "nehalemep");
    CHECK(counter_constraints_model(kSapphireRapids) == "sapphirerapids");
    // "GenuineIntel-6-1[AEF]": the extended model counts, the processor type does not.
    CHECK(counter_constraints_model(family6(0x1e, 5)) == "nehalemep");
    CHECK(counter_constraints_model(family6(0x0a, 5)) == "");
    CHECK(counter_constraints_model(kNehalemEp | 0x2000) == "nehalemep");
    // Family 0xF + extended family 3 is "18", in decimal, and the model has no
    // leading zero: Nova Lake's "GenuineIntel-18-[13]".
    CHECK(counter_constraints_model(0x00300f10) == "novalake");
    CHECK(counter_constraints_model(0x00300f32) == "novalake");
    CHECK(counter_constraints_model(0x00300f20) == "");  // 18-2
    CHECK(counter_constraints_model(0x00200f10) == "");  // 17-1
    // 18-1F: the regex's match, "GenuineIntel-18-1", is not the whole model.
    CHECK(counter_constraints_model(0x00310ff0) == "");
    // The extended model counts past family 6 too: 18-13 is not 18-3.
    CHECK(counter_constraints_model(0x00310f30) == "");
    // Not Intel's: perf's Intel entries know nothing of it.
    CHECK(counter_constraints_model(kZen) == "");
}

TEST_CASE("stepping-specific entries: Skylake-SP and Cascade Lake", "[constraints]")
{
    // "GenuineIntel-6-55-[01234]" and "GenuineIntel-6-55-[56789ABCDEF]".
    for (std::uint32_t stepping = 0; stepping <= 4; ++stepping) {
        INFO("stepping " << stepping);
        CHECK(counter_constraints_model(family6(0x55, stepping)) == "skylakex");
    }
    for (std::uint32_t stepping = 5; stepping <= 0xf; ++stepping) {
        INFO("stepping " << stepping);
        CHECK(counter_constraints_model(family6(0x55, stepping)) == "cascadelakex");
    }
    // An entry without a stepping takes them all.
    CHECK(counter_constraints_model(family6(0x97, 0)) == "alderlake");
    CHECK(counter_constraints_model(family6(0x97, 0xf)) == "alderlake");
    // The whole model must match: 6-9-7 is not 6-97.
    CHECK(counter_constraints_model(family6(0x09, 7)) == "");
}

TEST_CASE("Alder Lake: P-core and E-core restrictions", "[constraints]")
{
    // LD_BLOCKS.STORE_FORWARD (03H/82H): PMC0-3 on P-cores.
    CHECK(gp_counter_constraint(kAlderLake, CoreType::core, 0x8203) == 0xf);
    // MEM_TRANS_RETIRED.STORE_SAMPLE (CDH/02H): PMC0 only.
    CHECK(gp_counter_constraint(kAlderLake, CoreType::core, 0x02cd) == 0x1);
    // TOPDOWN.BAD_SPEC_SLOTS (A4H/04H): PMC0 only.
    CHECK(gp_counter_constraint(kAlderLake, CoreType::core, 0x04a4) == 0x1);
    // MEM_TRANS_RETIRED.LOAD_LATENCY_GT_* (CDH/01H): every counter but PMC0.
    CHECK(gp_counter_constraint(kAlderLake, CoreType::core, 0x01cd) == 0xfe);
    // Bits above the umask (USR, OS, CMASK...) do not change the event.
    CHECK(gp_counter_constraint(kAlderLake, CoreType::core, 0x01438203U) == 0xf);
    CHECK(gp_counter_constraint(kAlderLake, CoreType::core, 0x010302cdU) == 0x1);
}

TEST_CASE("hybrid parts: atom and core differ where the table says so", "[constraints]")
{
    // MEM_UOPS_RETIRED.LOAD_LATENCY_GT_* (D0H/05H): PMC0-1 on E-cores, any on P-cores.
    CHECK(gp_counter_constraint(kAlderLake, CoreType::atom, 0x05d0) == 0x3);
    CHECK(gp_counter_constraint(kAlderLake, CoreType::core, 0x05d0) == 0);
    // 03H/82H: PMC0-3 on P-cores, any on E-cores.
    CHECK(gp_counter_constraint(kAlderLake, CoreType::atom, 0x8203) == 0);
    // A core of unknown type: only what both types restrict, and they share none here.
    CHECK(gp_counter_constraint(kAlderLake, CoreType::none, 0x05d0) == 0);
    CHECK(gp_counter_constraint(kAlderLake, CoreType::unknown, 0x8203) == 0);
    // Alder Lake-N (6-BE) is all E-cores: its rows hold whatever the core type.
    CHECK(gp_counter_constraint(family6(0xbe, 0), CoreType::none, 0x05d0) == 0x3);
    CHECK(gp_counter_constraint(family6(0xbe, 0), CoreType::atom, 0x05d0) == 0x3);
    // Nova Lake's P-cores (family 18): MEMORY_STALLS.L3 (46H/04H) on PMC0-3.
    CHECK(gp_counter_constraint(0x00300f10, CoreType::core, 0x0446) == 0xf);
    CHECK(gp_counter_constraint(0x00300f10, CoreType::atom, 0x0446) == 0);
}

TEST_CASE("non-hybrid parts: Ice Lake, Haswell, Nehalem", "[constraints]")
{
    // Ice Lake: LD_BLOCKS.STORE_FORWARD (03H/02H), L1D.REPLACEMENT (51H/01H) on
    // PMC0-3 of 8, whatever the core type.
    CHECK(gp_counter_constraint(kIceLake, CoreType::none, 0x0203) == 0xf);
    CHECK(gp_counter_constraint(kIceLake, CoreType::core, 0x0203) == 0xf);
    CHECK(gp_counter_constraint(kIceLake, CoreType::none, 0x0151) == 0xf);
    // Haswell: INST_RETIRED.PREC_DIST (C0H/01H) on PMC1 only.
    CHECK(gp_counter_constraint(kHaswell, CoreType::none, 0x01c0) == 0x2);
    // Skylake: C0H/01H is PREC_DIST on PMC1 and TOTAL_CYCLES_PS on PMC0,2,3:
    // the union is every counter, so no restriction.
    CHECK(gp_counter_constraint(kSkylake, CoreType::none, 0x01c0) == 0);
    // Nehalem-EP: OFFCORE_RESPONSE (B7H/01H) on PMC2, L1D_CACHE_LD.I_STATE (40H/01H)
    // on PMC0-1, MEM_INST_RETIRED.LATENCY_ABOVE_THRESHOLD (0BH/10H) on PMC3.
    CHECK(gp_counter_constraint(kNehalemEp, CoreType::none, 0x01b7) == 0x4);
    CHECK(gp_counter_constraint(kNehalemEp, CoreType::none, 0x0140) == 0x3);
    CHECK(gp_counter_constraint(kNehalemEp, CoreType::none, 0x100b) == 0x8);
    // Westmere-EP (6-2C), another table: B7H/01H there counts on any counter.
    CHECK(gp_counter_constraint(family6(0x2c, 2), CoreType::none, 0x01b7) == 0);
    // An event the table does not list: no restriction.
    CHECK(gp_counter_constraint(kNehalemEp, CoreType::none, 0x10b7) == 0);
}

TEST_CASE("architectural events and unknown CPUs are unrestricted", "[constraints]")
{
    for (const auto cpu : {kAlderLake, kIceLake, kNehalemEp, kHaswell, kSkylake, kSapphireRapids}) {
        INFO("CPUID.1:EAX " << cpu);
        CHECK(gp_counter_constraint(cpu, CoreType::core, 0x00c0) == 0);
        CHECK(gp_counter_constraint(cpu, CoreType::atom, 0x00c0) == 0);
        CHECK(gp_counter_constraint(cpu, CoreType::none, 0x003c) == 0);
    }
    // Events restricted on Intel parts mean nothing on an unknown signature.
    CHECK(gp_counter_constraint(kZen, CoreType::none, 0x01b7) == 0);
    CHECK(gp_counter_constraint(kZen, CoreType::core, 0x8203) == 0);
    CHECK(gp_counter_constraint(0, CoreType::none, 0x8203) == 0);
}

TEST_CASE("the table names the kernel it came from", "[constraints]")
{
    const std::string source(archpmu::counter_constraints_source());
    CHECK(std::regex_match(source, std::regex(R"(Linux [0-9]+\.[0-9]+\.[0-9]+)")));
}
