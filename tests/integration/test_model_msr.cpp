// SPDX-License-Identifier: MIT
// The model's MSR semantics, through the module's own access layer and
// cross-calls (ARCHPMU_IOC_MODEL_MSR): reserved-bit #GP, sign extension,
// width truncation, read-only status, per-CPU register files.
#include <catch2/catch.hpp>

#include <cerrno>

#include "archpmu/device.hpp"
#include "archpmu/error.hpp"
#include "harness.hpp"

using namespace archpmu::itest;

namespace {

constexpr uint32_t PMC0 = 0xc1, EVTSEL0 = 0x186, A_PMC0 = 0x4c1, FIXED0 = 0x309;
constexpr uint32_t FIXED_CTRL = 0x38d, STATUS = 0x38e, CTRL = 0x38f, OVF = 0x390;
constexpr uint32_t STATUS_SET = 0x391, INUSE = 0x392, PERF_CAPS = 0x345;

int write_errno(const archpmu::Device& dev, uint32_t cpu, uint32_t msr, uint64_t v)
{
    try {
        model_write_msr(dev, cpu, msr, v);
        return 0;
    } catch (const archpmu::Error& e) {
        return e.code().value();
    }
}

int read_errno(const archpmu::Device& dev, uint32_t cpu, uint32_t msr)
{
    try {
        (void)model_read_msr(dev, cpu, msr);
        return 0;
    } catch (const archpmu::Error& e) {
        return e.code().value();
    }
}

}  // namespace

TEST_CASE("model MSRs of a v5 part with full-width writes", "[model-msr]")
{
    LoadedModule module(
        "backend=model model_version=5 model_gp=8 model_fixed=1 "
        "model_fixed_mask=0x5 model_anythread_deprecated=1 model_full_width=1");
    const archpmu::Device dev;
    for (unsigned cpu : online_cpus()) {
        CAPTURE(cpu);
        CHECK(model_read_msr(dev, cpu, CTRL) == 0xff);  // reset: the GP counters
        CHECK(model_read_msr(dev, cpu, PERF_CAPS) == 1ULL << 13);

        // Legacy writes sign-extend bit 31, then cut to 48 bits.
        model_write_msr(dev, cpu, PMC0, 0x80000000);
        CHECK(model_read_msr(dev, cpu, PMC0) == 0xffff80000000ULL);
        model_write_msr(dev, cpu, PMC0 + 7, 0x1234567ffULL);
        CHECK(model_read_msr(dev, cpu, PMC0 + 7) == 0x234567ffULL);
        // Full-width writes keep 48 bits; a bit above the width is #GP.
        model_write_msr(dev, cpu, A_PMC0 + 1, 0xff0123456789ULL);
        CHECK(model_read_msr(dev, cpu, PMC0 + 1) == 0xff0123456789ULL);
        CHECK(write_errno(dev, cpu, A_PMC0 + 1, 1ULL << 48) == EIO);

        // Reserved PERFEVTSEL bits: 63:32 and AnyThread (deprecated here).
        CHECK(write_errno(dev, cpu, EVTSEL0, 1ULL << 32) == EIO);
        CHECK(write_errno(dev, cpu, EVTSEL0, 1ULL << 21) == EIO);
        CHECK(write_errno(dev, cpu, EVTSEL0 + 8, 0) == EACCES);  // not a PMU MSR we write
        model_write_msr(dev, cpu, EVTSEL0 + 3, 0x5300c0);
        CHECK(model_read_msr(dev, cpu, EVTSEL0 + 3) == 0x5300c0);

        // Fixed counters 0 and 2 exist; 1 does not.
        CHECK(read_errno(dev, cpu, FIXED0 + 1) == EIO);
        CHECK(write_errno(dev, cpu, FIXED_CTRL, 0xb0b) == 0);
        CHECK(write_errno(dev, cpu, FIXED_CTRL, 0x0b0) == EIO);
        CHECK(write_errno(dev, cpu, FIXED0 + 2, 1ULL << 48) == EIO);
        CHECK(write_errno(dev, cpu, CTRL, 1ULL << 33) == EIO);
        CHECK(write_errno(dev, cpu, CTRL, 0xff | 0x5ULL << 32) == 0);

        // GLOBAL_STATUS: read-only; STATUS_SET sets, STATUS_RESET clears.
        CHECK(write_errno(dev, cpu, STATUS, 1) == EIO);
        model_write_msr(dev, cpu, STATUS_SET, 0x3 | 1ULL << 34);
        CHECK(model_read_msr(dev, cpu, STATUS) == (0x3 | 1ULL << 34));
        model_write_msr(dev, cpu, OVF, 0x1);
        CHECK(model_read_msr(dev, cpu, STATUS) == (0x2 | 1ULL << 34));
        CHECK(write_errno(dev, cpu, STATUS_SET, 1ULL << 33) == EIO);  // no fixed counter 1

        // INUSE: counter 3 has an event; fixed 0 and 2 are enabled with PMI.
        CHECK(model_read_msr(dev, cpu, INUSE) == (0x8 | 0x5ULL << 32 | 1ULL << 63));
        CHECK(write_errno(dev, cpu, INUSE, 0) == EIO);
        CHECK(write_errno(dev, cpu, PERF_CAPS, 0) == EACCES);
    }
}

TEST_CASE("model MSRs of a v6 part with 12 GP counters: GP 8 and up at 1900H only",
          "[model-msr][v6]")
{
    LoadedModule module("backend=model model_version=6 model_gp=12 model_fixed=3");
    const archpmu::Device dev;
    const uint32_t cpu = 0;
    CHECK(model_read_msr(dev, cpu, CTRL) == 0xfff);
    model_write_msr(dev, cpu, 0x1900 + 4 * 11, 0xffffffffffffULL);  // GP 11: full width
    CHECK(model_read_msr(dev, cpu, 0x1900 + 4 * 11) == 0xffffffffffffULL);
    model_write_msr(dev, cpu, PMC0 + 3, 42);  // GP 3: 190CH aliases IA32_PMC3
    CHECK(model_read_msr(dev, cpu, 0x1900 + 4 * 3) == 42);
    CHECK(read_errno(dev, cpu, 0x1900 + 4 * 12) == EIO);  // no GP 12
    CHECK(read_errno(dev, cpu, 0x1902 + 4 * 8) == EIO);   // reload: not modelled
    CHECK(read_errno(dev, cpu, EVTSEL0 + 8) == EIO);      // 18EH is not GP 8's
    // archpmu writes an alias of GP 0-7 never, and the reload MSRs never.
    CHECK(write_errno(dev, cpu, 0x1900 + 4 * 3, 0) == EACCES);
    CHECK(write_errno(dev, cpu, 0x1902 + 4 * 8, 0) == EACCES);
}

TEST_CASE("model register files are per CPU", "[model-msr]")
{
    LoadedModule module("backend=model");
    const archpmu::Device dev;
    model_write_msr(dev, 1, PMC0, 0x1234);
    CHECK(model_read_msr(dev, 1, PMC0) == 0x1234);
    CHECK(model_read_msr(dev, 0, PMC0) == 0);
}

TEST_CASE("model MSRs of a v1 part: 40-bit counters, no global MSRs", "[model-msr]")
{
    LoadedModule module(
        "backend=model model_version=1 model_gp=2 model_gp_width=40 "
        "model_fixed=0");
    const archpmu::Device dev;
    model_write_msr(dev, 0, PMC0, 0xffffffff);
    CHECK(model_read_msr(dev, 0, PMC0) == 0xffffffffffULL);
    CHECK(read_errno(dev, 0, CTRL) == EIO);
    CHECK(read_errno(dev, 0, STATUS) == EIO);
    CHECK(read_errno(dev, 0, FIXED0) == EIO);
    CHECK(read_errno(dev, 0, PMC0 + 2) == EIO);
    CHECK(write_errno(dev, 0, A_PMC0, 1) == EIO);  // no full-width writes
}

TEST_CASE("model MSRs of a hybrid part follow each CPU's own layout", "[model-msr]")
{
    LoadedModule module(
        "backend=model model_version=5 model_gp=6 model_hybrid_gp=2 "
        "model_hybrid_cpus=" +
        odd_cpu_list());
    const archpmu::Device dev;
    for (unsigned cpu : online_cpus()) {
        CAPTURE(cpu);
        const bool ecore = is_odd_cpu(cpu);
        CHECK(model_read_msr(dev, cpu, CTRL) == (ecore ? 0x3u : 0x3fu));
        CHECK(write_errno(dev, cpu, EVTSEL0 + 4, 0x4300c0) == (ecore ? EIO : 0));
    }
}
