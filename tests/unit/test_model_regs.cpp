// SPDX-License-Identifier: MIT
// The model's RDMSR/WRMSR semantics (module/pmu/model_regs.c).
#include <catch2/catch.hpp>

#include "portable_core.hpp"

namespace {

constexpr int kGP = -EIO;

archpmu_pmu_desc layout(uint32_t version, uint32_t gp, uint32_t width, uint32_t fixed,
                        bool full_width = false)
{
    archpmu_cpuid_set c{};
    c.leaf01.ecx = full_width ? 1u << 15 : 0;
    c.leaf0a = {version | gp << 8 | width << 16 | 7u << 24, 0, 0, fixed | width << 5};
    archpmu_pmu_desc d{};
    archpmu_decode_cpuid(&c, &d);
    archpmu_desc_set_perf_caps(&d, full_width ? ARCHPMU_PERF_CAP_FW_WRITE : 0);
    return d;
}

struct Model {
    explicit Model(const archpmu_pmu_desc& d, u64 quirks = 0) : desc(d)
    {
        archpmu_model_regs_reset(&regs, &desc, quirks);
    }
    uint64_t read(uint32_t msr)
    {
        u64 v = 0xdeadbeef;
        REQUIRE(archpmu_model_rdmsr(&regs, msr, &v) == 0);
        return v;
    }
    int try_read(uint32_t msr)
    {
        u64 v = 0;
        return archpmu_model_rdmsr(&regs, msr, &v);
    }
    int write(uint32_t msr, uint64_t v) { return archpmu_model_wrmsr(&regs, msr, v); }
    archpmu_pmu_desc desc;
    archpmu_model_regs regs{};
};

}  // namespace

TEST_CASE("model: GLOBAL_CTRL resets to the GP counter mask", "[model]")
{
    Model m(layout(4, 4, 48, 3));
    CHECK(m.read(ARCHPMU_MSR_GLOBAL_CTRL) == 0xf);
    CHECK(m.read(ARCHPMU_MSR_GLOBAL_STATUS) == 0);
    CHECK(m.read(ARCHPMU_MSR_FIXED_CTR_CTRL) == 0);
}

TEST_CASE("model: v1 has no global or fixed MSRs", "[model]")
{
    Model m(layout(1, 2, 40, 3));
    for (uint32_t msr : {0x38du, 0x38eu, 0x38fu, 0x390u, 0x309u})
        CHECK(m.try_read(msr) == kGP);
    CHECK(m.write(ARCHPMU_MSR_GLOBAL_CTRL, 0x3) == kGP);
    CHECK(m.write(ARCHPMU_MSR_PERFEVTSEL0, 0x4300c0) == 0);
}

TEST_CASE("model: legacy counter writes sign-extend bit 31 and truncate to the width", "[model]")
{
    Model m48(layout(4, 4, 48, 3));
    CHECK(m48.write(ARCHPMU_MSR_PMC0, 0x80000000) == 0);
    CHECK(m48.read(ARCHPMU_MSR_PMC0) == 0xffff80000000ULL);
    CHECK(m48.write(ARCHPMU_MSR_PMC0 + 1, 0x123456789ULL) == 0);  // EDX ignored
    CHECK(m48.read(ARCHPMU_MSR_PMC0 + 1) == 0x23456789ULL);

    Model m40(layout(1, 2, 40, 0));
    CHECK(m40.write(ARCHPMU_MSR_PMC0, 0xffffffffULL) == 0);
    CHECK(m40.read(ARCHPMU_MSR_PMC0) == 0xffffffffffULL);
}

TEST_CASE("model: full-width writes exist only with PERF_CAPABILITIES[13]", "[model]")
{
    Model legacy(layout(4, 4, 48, 3));
    CHECK(legacy.write(ARCHPMU_MSR_A_PMC0, 1) == kGP);
    CHECK(legacy.try_read(ARCHPMU_MSR_PERF_CAPABILITIES) == kGP);  // no PDCM

    Model fw(layout(4, 4, 48, 3, true));
    CHECK(fw.read(ARCHPMU_MSR_PERF_CAPABILITIES) == ARCHPMU_PERF_CAP_FW_WRITE);
    CHECK(fw.write(ARCHPMU_MSR_A_PMC0, 0xff0123456789ULL) == 0);
    CHECK(fw.read(ARCHPMU_MSR_PMC0) == 0xff0123456789ULL);  // PMC0 aliases A_PMC0
    CHECK(fw.write(ARCHPMU_MSR_A_PMC0, 1ULL << 48) == kGP);
    CHECK(fw.write(ARCHPMU_MSR_PERF_CAPABILITIES, 0) == kGP);
}

TEST_CASE("model: absent counters raise #GP", "[model]")
{
    Model m(layout(4, 4, 48, 3));
    CHECK(m.try_read(ARCHPMU_MSR_PMC0 + 4) == kGP);
    CHECK(m.write(ARCHPMU_MSR_PERFEVTSEL0 + 4, 0) == kGP);
    CHECK(m.try_read(ARCHPMU_MSR_FIXED_CTR0 + 3) == kGP);
    Model v3(layout(3, 4, 48, 3));
    CHECK(v3.try_read(ARCHPMU_MSR_GLOBAL_INUSE) == kGP);  // INUSE arrives with v4
    CHECK(v3.try_read(ARCHPMU_MSR_GLOBAL_STATUS_SET) == kGP);
}

TEST_CASE("model: v6's range aliases the legacy counters and holds GP 8 and up", "[model]")
{
    Model m(layout(6, 10, 48, 3));
    // GP 0-7: the same registers at both addresses.
    CHECK(m.write(0x1900 + 4 * 2, 0xff0123456789ULL) == 0);  // full width, without FW_WRITE
    CHECK(m.read(ARCHPMU_MSR_PMC0 + 2) == 0xff0123456789ULL);
    CHECK(m.write(ARCHPMU_MSR_PERFEVTSEL0 + 7, 0x4300c0) == 0);
    CHECK(m.read(0x1901 + 4 * 7) == 0x4300c0);
    // GP 8 and 9 exist only here; a bit above the width or a reserved bit is #GP.
    CHECK(m.write(0x1900 + 4 * 9, 0xffffffffffffULL) == 0);
    CHECK(m.read(0x1900 + 4 * 9) == 0xffffffffffffULL);
    CHECK(m.write(0x1900 + 4 * 9, 1ULL << 48) == kGP);
    CHECK(m.write(0x1901 + 4 * 8, 0x4300c4) == 0);
    CHECK(m.read(0x1901 + 4 * 8) == 0x4300c4);
    CHECK(m.write(0x1901 + 4 * 8, 1ULL << 32) == kGP);
    CHECK(m.read(ARCHPMU_MSR_GLOBAL_CTRL) == 0x3ff);
    // No GP 10; the reload MSRs are not modelled; fixed counters alias too.
    CHECK(m.try_read(0x1900 + 4 * 10) == kGP);
    CHECK(m.try_read(0x1901 + 4 * 10) == kGP);
    CHECK(m.try_read(0x1902 + 4 * 8) == kGP);
    CHECK(m.try_read(0x1903) == kGP);
    CHECK(m.write(ARCHPMU_MSR_FIXED_CTR0 + 1, 5) == 0);
    CHECK(m.read(0x1980 + 4 * 1) == 5);
    CHECK(m.try_read(0x1980 + 4 * 3) == kGP);
    CHECK(m.try_read(0x1981) == kGP);
    // GP 9 counts and overflows like the others.
    CHECK(m.write(0x1900 + 4 * 9, 0xfffffffffffeULL) == 0);
    CHECK(m.write(0x1901 + 4 * 9, 0x00c0 | 1ULL << 16 | 1ULL << 22) == 0);
    archpmu_model_inject(&m.regs, 0x00c0, 5, true);
    CHECK(m.read(0x1900 + 4 * 9) == 3);
    CHECK(m.read(ARCHPMU_MSR_GLOBAL_STATUS) == 1ULL << 9);
    // Before v6 the range does not exist.
    Model v5(layout(5, 8, 48, 3));
    CHECK(v5.try_read(0x1900) == kGP);
    CHECK(v5.write(0x1901, 0) == kGP);
    CHECK(v5.try_read(0x1980) == kGP);
}

TEST_CASE("model: PERFEVTSEL reserved bits raise #GP", "[model]")
{
    Model v2(layout(2, 2, 40, 3));
    CHECK(v2.write(ARCHPMU_MSR_PERFEVTSEL0, ARCHPMU_EVTSEL_ANY) == kGP);
    CHECK(v2.write(ARCHPMU_MSR_PERFEVTSEL0, 1ULL << 32) == kGP);
    CHECK(v2.write(ARCHPMU_MSR_PERFEVTSEL0, 0xff5300c0) == 0);  // every defined field

    Model v3(layout(3, 4, 48, 3));
    CHECK(v3.write(ARCHPMU_MSR_PERFEVTSEL0, ARCHPMU_EVTSEL_ANY | 0x4300c0) == 0);
    CHECK(v3.read(ARCHPMU_MSR_PERFEVTSEL0) == (ARCHPMU_EVTSEL_ANY | 0x4300c0));
}

TEST_CASE("model: FIXED_CTR_CTRL and GLOBAL_CTRL bits of absent counters raise #GP", "[model]")
{
    Model m(layout(2, 2, 40, 3));
    CHECK(m.write(ARCHPMU_MSR_FIXED_CTR_CTRL, 0xbbb) == 0);
    CHECK(m.write(ARCHPMU_MSR_FIXED_CTR_CTRL, 0xb000) == kGP);  // fixed counter 3
    CHECK(m.write(ARCHPMU_MSR_FIXED_CTR_CTRL, 0x4) == kGP);     // AnyThread on v2
    CHECK(m.write(ARCHPMU_MSR_GLOBAL_CTRL, 0x3 | 0x7ULL << 32) == 0);
    CHECK(m.write(ARCHPMU_MSR_GLOBAL_CTRL, 0x4) == kGP);
    CHECK(m.write(ARCHPMU_MSR_GLOBAL_CTRL, 1ULL << 35) == kGP);
}

TEST_CASE("model: fixed counters are strict about their width", "[model]")
{
    Model m(layout(4, 4, 48, 3));
    CHECK(m.write(ARCHPMU_MSR_FIXED_CTR0, 0xffffffffffffULL) == 0);
    CHECK(m.read(ARCHPMU_MSR_FIXED_CTR0) == 0xffffffffffffULL);
    CHECK(m.write(ARCHPMU_MSR_FIXED_CTR0, 1ULL << 48) == kGP);
}

TEST_CASE("model: GLOBAL_STATUS is read-only, STATUS_SET and STATUS_RESET change it", "[model]")
{
    Model v4(layout(4, 4, 48, 3));
    CHECK(v4.write(ARCHPMU_MSR_GLOBAL_STATUS, 1) == kGP);
    CHECK(v4.write(ARCHPMU_MSR_GLOBAL_STATUS_SET, 0x5 | 1ULL << 33 | ARCHPMU_STATUS_CTR_FRZ) == 0);
    CHECK(v4.read(ARCHPMU_MSR_GLOBAL_STATUS) == (0x5 | 1ULL << 33 | ARCHPMU_STATUS_CTR_FRZ));
    CHECK(v4.read(ARCHPMU_MSR_GLOBAL_STATUS_SET) == 0);
    CHECK(v4.write(ARCHPMU_MSR_GLOBAL_OVF_CTRL, 0x1 | ARCHPMU_STATUS_CTR_FRZ) == 0);
    CHECK(v4.read(ARCHPMU_MSR_GLOBAL_STATUS) == (0x4 | 1ULL << 33));
    CHECK(v4.read(ARCHPMU_MSR_GLOBAL_OVF_CTRL) == 0);
    CHECK(v4.write(ARCHPMU_MSR_GLOBAL_STATUS_SET, 1ULL << 4) == kGP);  // no counter 4
    CHECK(v4.write(ARCHPMU_MSR_GLOBAL_OVF_CTRL, 1ULL << 40) == kGP);

    Model v3(layout(3, 4, 48, 3));
    CHECK(v3.write(ARCHPMU_MSR_GLOBAL_STATUS_SET, 1) == kGP);
    CHECK(v3.write(ARCHPMU_MSR_GLOBAL_OVF_CTRL, ARCHPMU_STATUS_CTR_FRZ) == kGP);
    CHECK(v3.write(ARCHPMU_MSR_GLOBAL_OVF_CTRL, ARCHPMU_STATUS_OVF_UNCORE) == 0);
}

TEST_CASE("model: GLOBAL_INUSE reflects the event selects and fixed enables", "[model]")
{
    Model m(layout(4, 4, 48, 3));
    CHECK(m.read(ARCHPMU_MSR_GLOBAL_INUSE) == 0);
    CHECK(m.write(ARCHPMU_MSR_PERFEVTSEL0 + 2, 0xc0) == 0);
    CHECK(m.write(ARCHPMU_MSR_FIXED_CTR_CTRL, 0x20) == 0);  // fixed 1, USR
    CHECK(m.read(ARCHPMU_MSR_GLOBAL_INUSE) == (0x4 | 1ULL << 33));
    CHECK(m.write(ARCHPMU_MSR_PERFEVTSEL0, ARCHPMU_EVTSEL_INT) == 0);
    CHECK(m.read(ARCHPMU_MSR_GLOBAL_INUSE) == (0x4 | 1ULL << 33 | ARCHPMU_INUSE_PMI));
    CHECK(m.write(ARCHPMU_MSR_GLOBAL_INUSE, 0) == kGP);
}

TEST_CASE("model: the INUSE_GP quirk makes GLOBAL_INUSE raise #GP, nothing else", "[model]")
{
    Model m(layout(4, 4, 48, 3), ARCHPMU_MODEL_QUIRK_INUSE_GP);
    CHECK(m.try_read(ARCHPMU_MSR_GLOBAL_INUSE) == kGP);
    CHECK(m.read(ARCHPMU_MSR_GLOBAL_CTRL) == 0xf);
    CHECK(m.read(ARCHPMU_MSR_GLOBAL_STATUS) == 0);
}

TEST_CASE("model: the FREEZE_ON_PMI quirk clears GLOBAL_CTRL (v2-3) or sets CTR_Frz (v4+)",
          "[model]")
{
    for (uint32_t version : {3U, 4U}) {
        CAPTURE(version);
        Model m(layout(version, 4, 48, 3), ARCHPMU_MODEL_QUIRK_FREEZE_ON_PMI);
        const uint64_t sel = 0xc0 | ARCHPMU_EVTSEL_USR | ARCHPMU_EVTSEL_EN;
        CHECK(m.write(ARCHPMU_MSR_PERFEVTSEL0, sel | ARCHPMU_EVTSEL_INT) == 0);
        CHECK(m.write(ARCHPMU_MSR_PERFEVTSEL0 + 1, sel) == 0);
        CHECK(m.write(ARCHPMU_MSR_PMC0, 0xfffffffffffeULL & 0xffffffff) == 0);
        archpmu_model_inject(&m.regs, 0xc0, 0x10000, true);  // PMC0 (32-bit writes) wraps
        CHECK(m.regs.pmi_pending == 1);
        if (version < 4) {
            CHECK(m.read(ARCHPMU_MSR_GLOBAL_CTRL) == 0);
        } else {
            CHECK(m.read(ARCHPMU_MSR_GLOBAL_CTRL) == 0xf);
            CHECK((m.read(ARCHPMU_MSR_GLOBAL_STATUS) & ARCHPMU_STATUS_CTR_FRZ) != 0);
        }
        const uint64_t pmc1 = m.read(ARCHPMU_MSR_PMC0 + 1);
        archpmu_model_inject(&m.regs, 0xc0, 5, true);  // frozen: nothing counts
        CHECK(m.read(ARCHPMU_MSR_PMC0 + 1) == pmc1);
        if (version >= 4)
            CHECK(m.write(ARCHPMU_MSR_GLOBAL_OVF_CTRL, ARCHPMU_STATUS_CTR_FRZ | 1) == 0);
        else
            CHECK(m.write(ARCHPMU_MSR_GLOBAL_CTRL, 0xf) == 0);
        archpmu_model_inject(&m.regs, 0xc0, 5, true);
        CHECK(m.read(ARCHPMU_MSR_PMC0 + 1) == pmc1 + 5);
    }
}

namespace {

// Ice Lake's layout: v5, 8 GP, fixed counters 0-3, PDCM and PERF_METRICS.
archpmu_pmu_desc metrics_layout(bool perf_metrics = true)
{
    archpmu_cpuid_set c{};
    c.leaf01.ecx = 1u << 15;
    c.leaf0a = {5u | 8u << 8 | 48u << 16 | 8u << 24, 0, 0xf, 4u | 48u << 5};
    archpmu_pmu_desc d{};
    archpmu_decode_cpuid(&c, &d);
    archpmu_desc_set_perf_caps(&d, perf_metrics ? ARCHPMU_PERF_CAP_PERF_METRICS : 0);
    return d;
}

uint64_t field(uint64_t metrics, unsigned i)
{
    return (metrics >> (8 * i)) & 0xff;
}

// Fixed counter 3 counting slots in both rings, PERF_METRICS enabled with it.
void count_slots(Model& m)
{
    REQUIRE(m.write(ARCHPMU_MSR_FIXED_CTR_CTRL, 0x3000) == 0);
    REQUIRE(m.write(ARCHPMU_MSR_GLOBAL_CTRL, 1ull << 35 | ARCHPMU_GLOBAL_PERF_METRICS) == 0);
}

}  // namespace

TEST_CASE("model: PERF_METRICS splits the slots into fractions of 0xFF", "[model][topdown]")
{
    Model m(metrics_layout());
    count_slots(m);
    // 200 slots: retiring 100, bad speculation 20, frontend 40, backend 40; of those,
    // heavy operations 50, mispredicts 20, fetch latency 10, memory bound 30.
    archpmu_model_inject(&m.regs, 0x01a4, 200, true);
    for (auto [code, n] : {std::pair{0x02c2u, 100u},
                           {0x0073u, 20u},
                           {0x019cu, 40u},
                           {0x02a4u, 40u},
                           {0x8400u, 50u},
                           {0x8500u, 20u},
                           {0x8600u, 10u},
                           {0x8700u, 30u}})
        archpmu_model_inject(&m.regs, code, n, true);
    CHECK(m.read(ARCHPMU_MSR_FIXED_CTR0 + 3) == 200);
    const uint64_t pm = m.read(ARCHPMU_MSR_PERF_METRICS);
    // 127.5 + 25.5 + 51 + 51, rounded so that they sum to 0xFF: the one lost goes to
    // the first of those that lost the most.
    CHECK(field(pm, 0) == 128);
    CHECK(field(pm, 1) == 25);
    CHECK(field(pm, 2) == 51);
    CHECK(field(pm, 3) == 51);
    CHECK(field(pm, 0) + field(pm, 1) + field(pm, 2) + field(pm, 3) == 0xff);
    CHECK(field(pm, 4) == 64);  // 63.75
    CHECK(field(pm, 5) == 25);  // 25.5, but never more than bad speculation
    CHECK(field(pm, 6) == 13);
    CHECK(field(pm, 7) == 38);
    // perf's arithmetic gets the counts back: slots * field / 0xFF.
    CHECK(200 * field(pm, 2) / 0xff == 40);
}

TEST_CASE("model: PERF_METRICS counts only with fixed counter 3 and GLOBAL_CTRL bit 48",
          "[model][topdown]")
{
    Model m(metrics_layout());
    REQUIRE(m.write(ARCHPMU_MSR_FIXED_CTR_CTRL, 0x3000) == 0);
    REQUIRE(m.write(ARCHPMU_MSR_GLOBAL_CTRL, 1ull << 35) == 0);
    archpmu_model_inject(&m.regs, 0x02c2, 10, true);
    CHECK(m.read(ARCHPMU_MSR_PERF_METRICS) == 0);
    REQUIRE(m.write(ARCHPMU_MSR_GLOBAL_CTRL, ARCHPMU_GLOBAL_PERF_METRICS) == 0);
    archpmu_model_inject(&m.regs, 0x02c2, 10, true);
    CHECK(m.read(ARCHPMU_MSR_PERF_METRICS) == 0);
    count_slots(m);
    REQUIRE(m.write(ARCHPMU_MSR_FIXED_CTR_CTRL, 0x2000) == 0);  // user mode only
    archpmu_model_inject(&m.regs, 0x02c2, 10, false);
    CHECK(m.read(ARCHPMU_MSR_PERF_METRICS) == 0);
    archpmu_model_inject(&m.regs, 0x02c2, 10, true);
    CHECK(m.read(ARCHPMU_MSR_PERF_METRICS) == 0xff);
}

TEST_CASE("model: PERF_METRICS resets with a write of 0 and restores a written value",
          "[model][topdown]")
{
    Model m(metrics_layout());
    count_slots(m);
    archpmu_model_advance(&m.regs, 1000, true, 100);
    // The time-driven rates: retiring 6000, bad speculation 1000, frontend 2000 and
    // backend 3000 of 12000 slots per microsecond.
    const uint64_t pm = m.read(ARCHPMU_MSR_PERF_METRICS);
    // 127.5, 21.25, 42.5 and 63.75: the two lost go to backend, then retiring.
    CHECK(field(pm, 0) == 128);
    CHECK(field(pm, 1) == 21);
    CHECK(field(pm, 2) == 42);
    CHECK(field(pm, 3) == 64);
    CHECK(m.read(ARCHPMU_MSR_FIXED_CTR0 + 3) == 12000);
    // perf's reset: fixed counter 3, then PERF_METRICS.
    REQUIRE(m.write(ARCHPMU_MSR_FIXED_CTR0 + 3, 0) == 0);
    REQUIRE(m.write(ARCHPMU_MSR_PERF_METRICS, 0) == 0);
    CHECK(m.read(ARCHPMU_MSR_PERF_METRICS) == 0);
    archpmu_model_inject(&m.regs, 0x01a4, 10, true);
    archpmu_model_inject(&m.regs, 0x0073, 10, true);
    CHECK(m.read(ARCHPMU_MSR_PERF_METRICS) == 0xff00);
    // perf's restore: the slots, then the metrics, which read back as written.
    REQUIRE(m.write(ARCHPMU_MSR_FIXED_CTR0 + 3, 300) == 0);
    REQUIRE(m.write(ARCHPMU_MSR_PERF_METRICS, pm) == 0);
    CHECK(m.read(ARCHPMU_MSR_PERF_METRICS) == pm);
    // And further counting weighs against those 300 slots: 300 more of retiring.
    archpmu_model_inject(&m.regs, 0x02c2, 300, true);
    CHECK(field(m.read(ARCHPMU_MSR_PERF_METRICS), 0) == 192);  // (128 + 255) / 2, rounded
}

TEST_CASE("model: PERF_METRICS exists only where PERF_CAPABILITIES[15] says so", "[model][topdown]")
{
    Model m(metrics_layout(false));
    CHECK(m.try_read(ARCHPMU_MSR_PERF_METRICS) == kGP);
    CHECK(m.write(ARCHPMU_MSR_PERF_METRICS, 0) == kGP);
    CHECK(m.write(ARCHPMU_MSR_GLOBAL_CTRL, ARCHPMU_GLOBAL_PERF_METRICS) == kGP);
    Model with(metrics_layout());
    CHECK(with.write(ARCHPMU_MSR_GLOBAL_CTRL, ARCHPMU_GLOBAL_PERF_METRICS) == 0);
}
