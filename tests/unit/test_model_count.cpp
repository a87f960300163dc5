// SPDX-License-Identifier: MIT
// The model's counting: enables, filters, wraps and overflow status.
#include <catch2/catch.hpp>

#include "portable_core.hpp"

namespace {

struct Model {
    // leaf23_ebx: CPUID.(23H,0):EBX (UMASK2, EQ) of a v6 part; 0: no leaf 23H.
    Model(uint32_t version, uint32_t width, uint32_t leaf23_ebx = 0)
    {
        archpmu_cpuid_set c{};
        c.leaf0a = {version | 4u << 8 | width << 16 | 7u << 24, 0, 0, 3u | width << 5};
        if (leaf23_ebx) {
            c.leaf07_1.eax = 1u << 8;  // leaf 23H exists
            c.leaf23[0].ebx = leaf23_ebx;
        }
        archpmu_decode_cpuid(&c, &desc);
        archpmu_model_regs_reset(&regs, &desc, 0);
    }
    u64 rd(uint32_t msr)
    {
        u64 v = 0;
        REQUIRE(archpmu_model_rdmsr(&regs, msr, &v) == 0);
        return v;
    }
    void wr(uint32_t msr, u64 v) { REQUIRE(archpmu_model_wrmsr(&regs, msr, v) == 0); }
    archpmu_pmu_desc desc{};
    archpmu_model_regs regs{};
};

constexpr u64 kUsr = 1ULL << 16, kOs = 1ULL << 17, kEn = 1ULL << 22;

}  // namespace

TEST_CASE("model: an enabled counter counts its event in its rings", "[model][count]")
{
    Model m(4, 48);
    m.wr(ARCHPMU_MSR_PERFEVTSEL0, 0x00c0 | kUsr | kEn);
    archpmu_model_inject(&m.regs, 0x00c0, 10, true);
    archpmu_model_inject(&m.regs, 0x00c0, 5, false);  // OS: filtered out
    archpmu_model_inject(&m.regs, 0x00c4, 7, true);   // another event
    CHECK(m.rd(ARCHPMU_MSR_PMC0) == 10);

    m.wr(ARCHPMU_MSR_GLOBAL_CTRL, 0);  // v2+: GLOBAL_CTRL gates it
    archpmu_model_inject(&m.regs, 0x00c0, 10, true);
    CHECK(m.rd(ARCHPMU_MSR_PMC0) == 10);
}

TEST_CASE("model: fixed counters follow their ring bits and GLOBAL_CTRL", "[model][count]")
{
    Model m(4, 48);
    archpmu_model_inject(&m.regs, 0x00c0, 3, false);
    CHECK(m.rd(ARCHPMU_MSR_FIXED_CTR0) == 0);  // FIXED_CTR_CTRL 0
    m.wr(ARCHPMU_MSR_FIXED_CTR_CTRL, ARCHPMU_FIXED_OS);
    archpmu_model_inject(&m.regs, 0x00c0, 3, false);
    CHECK(m.rd(ARCHPMU_MSR_FIXED_CTR0) == 0);  // not in GLOBAL_CTRL yet
    m.wr(ARCHPMU_MSR_GLOBAL_CTRL, 0xf | 1ULL << 32);
    archpmu_model_inject(&m.regs, 0x00c0, 3, false);
    archpmu_model_inject(&m.regs, 0x00c0, 4, true);   // USR: not enabled
    archpmu_model_inject(&m.regs, 0x0100, 2, false);  // fixed 0's own encoding
    CHECK(m.rd(ARCHPMU_MSR_FIXED_CTR0) == 5);
}

TEST_CASE("model: a wrap at the width sets the overflow bit", "[model][count]")
{
    Model m(4, 16);
    m.wr(ARCHPMU_MSR_PERFEVTSEL0 + 1, 0x00c0 | kUsr | kEn);
    m.wr(ARCHPMU_MSR_PMC0 + 1, 0xfff0);
    archpmu_model_inject(&m.regs, 0x00c0, 0x20, true);
    CHECK(m.rd(ARCHPMU_MSR_PMC0 + 1) == 0x10);
    CHECK(m.rd(ARCHPMU_MSR_GLOBAL_STATUS) == 0x2);

    Model v1(1, 16);  // v1 has no status: the counter just wraps
    v1.wr(ARCHPMU_MSR_PERFEVTSEL0, 0x00c0 | kUsr | kEn);
    archpmu_model_inject(&v1.regs, 0x00c0, 0x10005, true);
    CHECK(v1.rd(ARCHPMU_MSR_PMC0) == 5);
}

TEST_CASE("model: CTR_FRZ freezes counting on v4", "[model][count]")
{
    Model m(4, 48);
    m.wr(ARCHPMU_MSR_PERFEVTSEL0, 0x00c0 | kUsr | kEn);
    m.wr(ARCHPMU_MSR_GLOBAL_STATUS_SET, ARCHPMU_STATUS_CTR_FRZ);
    archpmu_model_inject(&m.regs, 0x00c0, 10, true);
    CHECK(m.rd(ARCHPMU_MSR_PMC0) == 0);
    m.wr(ARCHPMU_MSR_GLOBAL_OVF_CTRL, ARCHPMU_STATUS_CTR_FRZ);
    archpmu_model_inject(&m.regs, 0x00c0, 10, true);
    CHECK(m.rd(ARCHPMU_MSR_PMC0) == 10);
}

TEST_CASE("model: CMASK, INV and edge apply per injected cycle", "[model][count]")
{
    Model m(4, 48);
    m.wr(ARCHPMU_MSR_PERFEVTSEL0, 0x00c0 | kUsr | kEn | 2ULL << 24);
    m.wr(ARCHPMU_MSR_PERFEVTSEL0 + 1, 0x00c0 | kUsr | kEn | 2ULL << 24 | ARCHPMU_EVTSEL_INV);
    m.wr(ARCHPMU_MSR_PERFEVTSEL0 + 2, 0x00c0 | kUsr | kEn | ARCHPMU_EVTSEL_EDGE);
    for (u64 x : {1, 2, 5, 0})
        archpmu_model_inject(&m.regs, 0x00c0, x, true);
    CHECK(m.rd(ARCHPMU_MSR_PMC0) == 2);      // 2 and 5 reach CMASK
    CHECK(m.rd(ARCHPMU_MSR_PMC0 + 1) == 2);  // 1 and 0 stay below it
    CHECK(m.rd(ARCHPMU_MSR_PMC0 + 2) == 3);  // three asserted cycles
}

TEST_CASE("model: EQ compares with CMASK for equality, INV inverts it; UMASK2 is another event",
          "[model][count]")
{
    Model m(6, 48, 3);
    const u64 cmask2 = 2ULL << 24;
    m.wr(ARCHPMU_MSR_PERFEVTSEL0, 0x00c0 | kUsr | kEn | cmask2 | ARCHPMU_EVTSEL_EQ);
    m.wr(ARCHPMU_MSR_PERFEVTSEL0 + 1,
         0x00c0 | kUsr | kEn | cmask2 | ARCHPMU_EVTSEL_EQ | ARCHPMU_EVTSEL_INV);
    m.wr(ARCHPMU_MSR_PERFEVTSEL0 + 2, 0x00c0 | kUsr | kEn | 1ULL << ARCHPMU_EVTSEL_UMASK2_SHIFT);
    for (u64 x : {1, 2, 5, 2, 0})
        archpmu_model_inject(&m.regs, 0x00c0, x, true);
    CHECK(m.rd(ARCHPMU_MSR_PMC0) == 2);      // the two cycles of exactly 2
    CHECK(m.rd(ARCHPMU_MSR_PMC0 + 1) == 3);  // 1, 5 and 0
    CHECK(m.rd(ARCHPMU_MSR_PMC0 + 2) == 0);  // not instructions retired
    // Time: instructions retire at 2000/us, under 1 per cycle (3000/us).
    Model t(6, 48, 3);
    const u64 cmask1 = 1ULL << 24;
    t.wr(ARCHPMU_MSR_PERFEVTSEL0, 0x00c0 | kUsr | kEn | cmask1 | ARCHPMU_EVTSEL_EQ);
    t.wr(ARCHPMU_MSR_PERFEVTSEL0 + 1,
         0x00c0 | kUsr | kEn | cmask1 | ARCHPMU_EVTSEL_EQ | ARCHPMU_EVTSEL_INV);
    t.wr(ARCHPMU_MSR_PERFEVTSEL0 + 2, 0x003c | kUsr | kEn | cmask1 | ARCHPMU_EVTSEL_EQ);
    archpmu_model_advance(&t.regs, 1000000, true, 100);
    CHECK(t.rd(ARCHPMU_MSR_PMC0) == 0);
    CHECK(t.rd(ARCHPMU_MSR_PMC0 + 1) == 3000000);  // every cycle: none has exactly 1
    CHECK(t.rd(ARCHPMU_MSR_PMC0 + 2) == 3000000);  // cycles: exactly 1 each cycle
}

TEST_CASE("model: time advances counters at the documented rates", "[model][count]")
{
    Model m(4, 48);
    m.wr(ARCHPMU_MSR_PERFEVTSEL0, 0x003c | kUsr | kOs | kEn);
    m.wr(ARCHPMU_MSR_PERFEVTSEL0 + 1, 0x00c4 | kOs | kEn);
    // Cycles with fewer than one instruction: all of them in the model.
    m.wr(ARCHPMU_MSR_PERFEVTSEL0 + 2, 0x00c0 | kOs | kEn | 1ULL << 24 | ARCHPMU_EVTSEL_INV);
    m.wr(ARCHPMU_MSR_FIXED_CTR_CTRL, 0x333);
    m.wr(ARCHPMU_MSR_GLOBAL_CTRL, 0xf | 0x7ULL << 32);
    archpmu_model_advance(&m.regs, 1000000, true, 100);  // 1 ms in user mode
    archpmu_model_advance(&m.regs, 1000000, false, 50);  // 1 ms in the kernel, half speed
    CHECK(m.rd(ARCHPMU_MSR_PMC0) == 3000000 + 1500000);
    CHECK(m.rd(ARCHPMU_MSR_PMC0 + 1) == 200000);   // branches, OS only
    CHECK(m.rd(ARCHPMU_MSR_PMC0 + 2) == 1500000);  // the kernel millisecond's cycles, at half speed
    CHECK(m.rd(ARCHPMU_MSR_FIXED_CTR0) == 2000000 + 1000000);
    CHECK(m.rd(ARCHPMU_MSR_FIXED_CTR0 + 1) == 3000000 + 1500000);
    CHECK(m.rd(ARCHPMU_MSR_FIXED_CTR0 + 2) == 1000000 + 500000);
    CHECK(archpmu_model_rate(0x00d1) == 0);
}

TEST_CASE("model: an overflow with INT requests a PMI, one without does not", "[model][pmi]")
{
    const uint32_t version = GENERATE(1u, 4u);
    Model m(version, 48);
    const u64 mask = (1ULL << 48) - 1;
    m.wr(ARCHPMU_MSR_PERFEVTSEL0, 0x00c0 | kUsr | kEn | ARCHPMU_EVTSEL_INT);
    m.wr(ARCHPMU_MSR_PERFEVTSEL0 + 1, 0x00c0 | kUsr | kEn);
    m.wr(ARCHPMU_MSR_PMC0, -5 & 0xffffffffULL);  // legacy write: sign-extended
    m.wr(ARCHPMU_MSR_PMC0 + 1, -5 & 0xffffffffULL);
    archpmu_model_inject(&m.regs, 0x00c0, 4, true);
    CHECK(m.regs.pmi_pending == 0);
    archpmu_model_inject(&m.regs, 0x00c0, 3, true);
    CHECK(m.regs.pmi_pending == 1);  // counter 1 wrapped too, without INT
    CHECK(m.rd(ARCHPMU_MSR_PMC0) == 2);
    CHECK(m.rd(ARCHPMU_MSR_PMC0 + 1) == 2);
    if (version >= 2)
        CHECK(m.rd(ARCHPMU_MSR_GLOBAL_STATUS) == 3);  // both status bits
    CHECK((m.rd(ARCHPMU_MSR_PMC0) & mask) == 2);
}

TEST_CASE("model: time advances up to the overflow that raises a PMI", "[model][pmi]")
{
    Model m(4, 48);
    m.wr(ARCHPMU_MSR_PERFEVTSEL0, 0x003c | kUsr | kEn | ARCHPMU_EVTSEL_INT);  // 3000/us
    m.wr(ARCHPMU_MSR_PMC0, -3000 & 0xffffffffULL);
    // 1 ms would be 3,000,000 cycles: the step stops after 1 us, at the wrap.
    const u64 left = archpmu_model_advance_to_pmi(&m.regs, 1000000, true, 100);
    CHECK(left == 1000000 - 1000);
    CHECK(m.regs.pmi_pending == 1);
    CHECK(m.rd(ARCHPMU_MSR_PMC0) == 0);
    // Without INT nothing stops it.
    m.regs.pmi_pending = 0;
    m.wr(ARCHPMU_MSR_PERFEVTSEL0, 0x003c | kUsr | kEn);
    CHECK(archpmu_model_advance_to_pmi(&m.regs, left, true, 100) == 0);
    CHECK(m.rd(ARCHPMU_MSR_PMC0) == 3000 * (left / 1000));
    CHECK(m.regs.pmi_pending == 0);
}

TEST_CASE("model: CMASK cycles never outrun the cycles event, at any counting speed",
          "[model][count]")
{
    for (const uint32_t percent : {100u, 50u, 250u}) {
        INFO(percent << "%");
        Model m(4, 48);
        const u64 cmask1 = 1ULL << 24;
        const u64 inv = 1ULL << 23;
        m.wr(ARCHPMU_MSR_PERFEVTSEL0, 0x00c0 | cmask1 | kUsr | kEn);
        m.wr(ARCHPMU_MSR_PERFEVTSEL0 + 1, 0x00c0 | cmask1 | inv | kUsr | kEn);
        m.wr(ARCHPMU_MSR_PERFEVTSEL0 + 2, 0x003c | kUsr | kEn);
        archpmu_model_advance(&m.regs, 1000000, true, percent);
        const u64 cycles = m.rd(ARCHPMU_MSR_PMC0 + 2);
        CHECK(cycles == 3000000ULL * percent / 100);
        CHECK(m.rd(ARCHPMU_MSR_PMC0) + m.rd(ARCHPMU_MSR_PMC0 + 1) == cycles);
    }
}
