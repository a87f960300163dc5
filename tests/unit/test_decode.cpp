// SPDX-License-Identifier: MIT
// CPUID decoding: every version, the inverted EBX vector, the v5 fixed
// bitmap rule, the v2-4 fixed-counter assumption, leaf 23H and hybrid.
#include <catch2/catch.hpp>

#include "portable_core.hpp"

namespace {

archpmu_cpuid_set leaf0a(uint32_t eax, uint32_t ebx, uint32_t ecx, uint32_t edx)
{
    archpmu_cpuid_set c{};
    c.leaf0a = {eax, ebx, ecx, edx};
    return c;
}

archpmu_pmu_desc decode(const archpmu_cpuid_set& c)
{
    archpmu_pmu_desc d{};
    archpmu_decode_cpuid(&c, &d);
    return d;
}

uint32_t eax(uint32_t version, uint32_t gp, uint32_t width, uint32_t len)
{
    return version | gp << 8 | width << 16 | len << 24;
}

}  // namespace

TEST_CASE("version 0 means no architectural PMU", "[decode]")
{
    const auto d = decode(leaf0a(eax(0, 4, 48, 7), 0, 0, 0x603));
    CHECK(d.version == 0);
    CHECK(d.gp_mask == 0);
    CHECK(d.fixed_mask == 0);
    CHECK(d.events_mask == 0);
}

TEST_CASE("version 1 has GP counters and no fixed counters", "[decode]")
{
    const auto d = decode(leaf0a(eax(1, 2, 40, 7), 0, 0, 0x603));
    CHECK(d.version == 1);
    CHECK(d.nr_gp == 2);
    CHECK(d.gp_mask == 0x3);
    CHECK(d.gp_width == 40);
    CHECK(d.fixed_mask == 0);
    CHECK(d.fixed_width == 0);
}

TEST_CASE("EBX is inverted and only its first EAX[31:24] bits count", "[decode]")
{
    const auto d = decode(leaf0a(eax(3, 4, 48, 5), 0xffffffe2, 0, 0x603));
    // Bits 0-4 count: EBX 0b00010 -> events 0, 2, 3, 4 available.
    CHECK(d.events_len == 5);
    CHECK(d.events_mask == 0x1d);

    const auto none_reported = decode(leaf0a(eax(3, 4, 48, 0), 0, 0, 0x603));
    CHECK(none_reported.events_mask == 0);
}

TEST_CASE("versions 2 to 4 read contiguous fixed counters from EDX", "[decode]")
{
    for (uint32_t v = 2; v <= 4; ++v) {
        const auto d = decode(leaf0a(eax(v, 4, 48, 7), 0, 0xff, 4 | 48 << 5));
        CHECK(d.version == v);
        CHECK(d.fixed_mask == 0xf);  // ECX is reserved before v5
        CHECK(d.nr_fixed == 4);
        CHECK(d.fixed_width == 48);
        CHECK_FALSE(d.flags & ARCHPMU_PMU_FIXED_ASSUMED);
    }
}

TEST_CASE("v2-4 parts reporting fewer than 3 fixed counters get 3, except under a hypervisor",
          "[decode]")
{
    auto c = leaf0a(eax(2, 2, 40, 7), 0, 0, 0);
    const auto bare = decode(c);
    CHECK(bare.fixed_mask == 0x7);
    CHECK(bare.fixed_width == 40);  // no width reported: the GP width
    CHECK(bare.flags & ARCHPMU_PMU_FIXED_ASSUMED);

    c.leaf01.ecx = 1u << 31;
    const auto guest = decode(c);
    CHECK(guest.fixed_mask == 0);
    CHECK(guest.flags & ARCHPMU_PMU_HYPERVISOR);
    CHECK_FALSE(guest.flags & ARCHPMU_PMU_FIXED_ASSUMED);
}

TEST_CASE("v5 fixed counter i exists iff ECX[i] or EDX[4:0] > i", "[decode]")
{
    struct Case {
        uint32_t ecx, edx_count;
        uint64_t mask;
    };
    const Case cases[] = {
        {0x5, 0, 0x5}, {0x4, 2, 0x7}, {0x0, 3, 0x7}, {0x70, 3, 0x77}, {0x1, 0, 0x1}, {0x0, 0, 0x0},
    };
    for (const auto& k : cases) {
        const auto d = decode(leaf0a(eax(5, 8, 48, 8), 0, k.ecx, k.edx_count | 48 << 5));
        CAPTURE(k.ecx, k.edx_count);
        CHECK(d.fixed_mask == k.mask);
        CHECK(d.nr_fixed == static_cast<uint32_t>(__builtin_popcountll(k.mask)));
    }
}

TEST_CASE("AnyThread deprecation comes from EDX[15]", "[decode]")
{
    CHECK(decode(leaf0a(eax(5, 8, 48, 8), 0, 0xf, 0x8604)).flags &
          ARCHPMU_PMU_ANYTHREAD_DEPRECATED);
    CHECK_FALSE(decode(leaf0a(eax(5, 8, 48, 8), 0, 0xf, 0x0604)).flags &
                ARCHPMU_PMU_ANYTHREAD_DEPRECATED);
}

TEST_CASE("leaf 23H replaces the 0AH counts only when CPUID.(07H,1):EAX[8] says it exists",
          "[decode]")
{
    auto c = leaf0a(eax(6, 8, 48, 13), 0x280, 0x7, 0x8603);
    c.leaf23[0] = {0xb, 0x3, 0, 0};
    c.leaf23[1] = {0x3ff, 0x77, 0, 0};
    c.leaf23[3] = {0x1dff, 0, 0, 0};

    const auto without = decode(c);
    CHECK(without.gp_mask == 0xff);
    CHECK(without.fixed_mask == 0x7);
    CHECK(without.events_mask == (~0x280u & 0x1fffu));
    CHECK_FALSE(without.flags & ARCHPMU_PMU_LEAF23);

    c.leaf07_1.eax = 1u << 8;
    const auto with = decode(c);
    CHECK(with.flags & ARCHPMU_PMU_LEAF23);
    CHECK(with.gp_mask == 0x3ff);
    CHECK(with.nr_gp == 10);
    CHECK(with.fixed_mask == 0x77);
    CHECK(with.nr_fixed == 6);
    CHECK(with.events_mask == 0x1dff);  // positive logic
    CHECK(with.flags & ARCHPMU_PMU_UMASK2);
    CHECK(with.flags & ARCHPMU_PMU_EQ);

    c.leaf23[0].eax = 0x1;  // sub-leaves 1 and 3 not valid
    const auto partial = decode(c);
    CHECK(partial.gp_mask == 0xff);
    CHECK(partial.fixed_mask == 0x7);
}

TEST_CASE("hybrid parts take their core type from leaf 1AH", "[decode]")
{
    auto c = leaf0a(eax(5, 6, 48, 7), 0, 0x7, 0x8603);
    c.leaf1a.eax = 0x20000001;
    CHECK(decode(c).core_type == ARCHPMU_CORE_TYPE_NONE);  // no CPUID.07H:EDX[15]

    c.leaf07_0.edx = 1u << 15;
    const auto d = decode(c);
    CHECK(d.flags & ARCHPMU_PMU_HYBRID);
    CHECK(d.core_type == ARCHPMU_CORE_TYPE_ATOM);
    CHECK(d.native_model_id == 1);
}

TEST_CASE("PERF_CAPABILITIES bits set the full-width and perf-metrics flags", "[decode]")
{
    auto c = leaf0a(eax(4, 4, 48, 7), 0, 0, 0x603);
    c.leaf01.ecx = 1u << 15;
    auto d = decode(c);
    CHECK(d.flags & ARCHPMU_PMU_PDCM);
    archpmu_desc_set_perf_caps(&d, (1ULL << 13) | (1ULL << 15));
    CHECK(d.flags & ARCHPMU_PMU_FULL_WIDTH_WRITE);
    CHECK(d.flags & ARCHPMU_PMU_PERF_METRICS);
    archpmu_desc_set_perf_caps(&d, 0);
    CHECK_FALSE(d.flags & ARCHPMU_PMU_FULL_WIDTH_WRITE);
}

TEST_CASE("valid-bit masks follow the version and the enumeration", "[decode][masks]")
{
    auto v2 = decode(leaf0a(eax(2, 2, 40, 7), 0, 0, 3 | 40 << 5));
    CHECK_FALSE(archpmu_evtsel_valid_bits(&v2) & ARCHPMU_EVTSEL_ANY);
    CHECK(archpmu_fixed_ctrl_valid_bits(&v2) == 0xbbb);
    CHECK(archpmu_global_ctrl_valid_bits(&v2) == (0x3 | 0x7ULL << 32));
    CHECK(archpmu_global_status_valid_bits(&v2) == (0x3 | 0x7ULL << 32 | 3ULL << 62));

    auto v3 = decode(leaf0a(eax(3, 4, 48, 7), 0, 0, 3 | 48 << 5));
    CHECK(archpmu_evtsel_valid_bits(&v3) & ARCHPMU_EVTSEL_ANY);
    CHECK(archpmu_fixed_ctrl_valid_bits(&v3) == 0xfff);
    CHECK(archpmu_global_status_valid_bits(&v3) & ARCHPMU_STATUS_OVF_UNCORE);

    auto v5 = decode(leaf0a(eax(5, 8, 48, 8), 0, 0x5, 0 | 48 << 5 | 1 << 15));
    CHECK_FALSE(archpmu_evtsel_valid_bits(&v5) & ARCHPMU_EVTSEL_ANY);
    CHECK(archpmu_fixed_ctrl_valid_bits(&v5) == 0xb0b);
    CHECK(archpmu_global_status_valid_bits(&v5) & ARCHPMU_STATUS_CTR_FRZ);
}

TEST_CASE("only architectural PMU MSRs are writable", "[decode][allowlist]")
{
    for (uint32_t msr : {0xc1u, 0xc8u, 0x186u, 0x18du, 0x4c1u, 0x309u, 0x30fu, 0x329u, 0x38du,
                         0x38fu, 0x390u, 0x392u})
        CHECK(archpmu_msr_writable(msr));
    for (uint32_t msr : {0x10u, 0xc0u, 0xc9u, 0x18eu, 0x198u, 0x1a0u, 0x1d9u, 0x310u, 0x345u,
                         0x38cu, 0x393u, 0x4c9u, 0x1900u})
        CHECK_FALSE(archpmu_msr_writable(msr));
    // v6's range: the counter and event select of GP counters 8-15, which have no
    // other address; not the reload MSRs, not the aliases of GP 0-7 or fixed counters.
    for (uint32_t n = 8; n < 16; ++n) {
        CHECK(archpmu_msr_writable(0x1900 + 4 * n));
        CHECK(archpmu_msr_writable(0x1901 + 4 * n));
        CHECK_FALSE(archpmu_msr_writable(0x1902 + 4 * n));
        CHECK_FALSE(archpmu_msr_writable(0x1903 + 4 * n));
    }
    for (uint32_t msr : {0x1901u, 0x191cu, 0x191du, 0x1940u, 0x1941u, 0x1980u, 0x1984u, 0x18ffu})
        CHECK_FALSE(archpmu_msr_writable(msr));
}

TEST_CASE("GP counters 8 and up have only v6 addresses", "[decode][allowlist]")
{
    CHECK(archpmu_gp_sel_msr(0) == 0x186);
    CHECK(archpmu_gp_sel_msr(7) == 0x18d);
    CHECK(archpmu_gp_sel_msr(8) == 0x1921);
    CHECK(archpmu_gp_sel_msr(9) == 0x1925);
    CHECK(archpmu_gp_ctr_msr(7, false) == 0xc8);
    CHECK(archpmu_gp_ctr_msr(7, true) == 0x4c8);
    CHECK(archpmu_gp_ctr_msr(8, false) == 0x1920);
    CHECK(archpmu_gp_ctr_msr(15, true) == 0x193c);
    // Not a GP counter's: below the range, the aliases of GP 0-7, the reload MSRs, GP 16.
    for (uint32_t msr : {0x18ffu, 0x1900u, 0x1901u, 0x191du, 0x1922u, 0x1923u, 0x1940u, 0x1941u}) {
        CHECK(archpmu_gp_of_sel_msr(msr) == -1);
        CHECK(archpmu_gp_of_ctr_msr(msr) == -1);
    }
    for (uint32_t n = 0; n < ARCHPMU_NR_GP; ++n) {
        CHECK(archpmu_gp_of_sel_msr(archpmu_gp_sel_msr(n)) == int(n));
        CHECK(archpmu_gp_of_ctr_msr(archpmu_gp_ctr_msr(n, false)) == int(n));
        CHECK(archpmu_gp_of_ctr_msr(archpmu_gp_ctr_msr(n, true)) == int(n));
    }
}

TEST_CASE("TSX_FORCE_ABORT without RTM_ALWAYS_ABORT marks GP counter 3 as TSX's", "[decode]")
{
    auto c = leaf0a(eax(4, 4, 48, 7), 0, 0, 0x603);
    CHECK((decode(c).flags & ARCHPMU_PMU_TSX_FORCE_ABORT) == 0);
    c.leaf07_0.edx = 1u << 13;
    CHECK((decode(c).flags & ARCHPMU_PMU_TSX_FORCE_ABORT) != 0);
    CHECK(decode(c).gp_mask == 0xf);  // still reported: it exists
    c.leaf07_0.edx |= 1u << 11;
    CHECK((decode(c).flags & ARCHPMU_PMU_TSX_FORCE_ABORT) == 0);
}
