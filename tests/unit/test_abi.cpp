// SPDX-License-Identifier: MIT
// The ioctl ABI's layout: fixed sizes and offsets, 8-byte alignment (so the
// 32-bit compat ABI is identical), distinct command numbers.
#include <catch2/catch.hpp>

#include <cstddef>
#include <iterator>
#include <set>

#include "archpmu.h"
#include "archpmu_test.h"

extern "C" unsigned int archpmu_abi_c_sizes(void);

TEST_CASE("ABI structs have fixed, 8-byte aligned layouts", "[abi]")
{
    STATIC_REQUIRE(sizeof(archpmu_info) == 80);
    STATIC_REQUIRE(offsetof(archpmu_info, size) == 0);
    STATIC_REQUIRE(offsetof(archpmu_info, flags) == 4);
    STATIC_REQUIRE(offsetof(archpmu_info, capabilities) == 16);
    STATIC_REQUIRE(offsetof(archpmu_info, max_fixed_counters) == 40);
    STATIC_REQUIRE(offsetof(archpmu_info, privilege) == 44);
    STATIC_REQUIRE(offsetof(archpmu_info, __reserved) == 48);

    STATIC_REQUIRE(sizeof(archpmu_cpu_info) == 128);
    STATIC_REQUIRE(offsetof(archpmu_cpu_info, cpu) == 8);
    STATIC_REQUIRE(offsetof(archpmu_cpu_info, gp_mask) == 48);
    STATIC_REQUIRE(offsetof(archpmu_cpu_info, perf_capabilities) == 72);
    STATIC_REQUIRE(offsetof(archpmu_cpu_info, cpuid_0a) == 80);
    STATIC_REQUIRE(offsetof(archpmu_cpu_info, cpuid_01_eax) == 96);
    STATIC_REQUIRE(offsetof(archpmu_cpu_info, __reserved0) == 100);
    STATIC_REQUIRE(offsetof(archpmu_cpu_info, __reserved) == 104);

    STATIC_REQUIRE(sizeof(archpmu_model_msr) == 24);
    STATIC_REQUIRE(offsetof(archpmu_model_msr, value) == 16);

    // The first layout (64 bytes) stays as it was; the busy fields came after it.
    STATIC_REQUIRE(offsetof(archpmu_count_open, nr_cpus_opened) == 40);
    STATIC_REQUIRE(offsetof(archpmu_count_open, __reserved0) == 44);
    STATIC_REQUIRE(offsetof(archpmu_count_open, __reserved) == 48);
    STATIC_REQUIRE(offsetof(archpmu_count_open, busy_holder) == 64);
    STATIC_REQUIRE(offsetof(archpmu_count_open, busy_pid) == 68);
    // The third layout (96 bytes): sampling.
    STATIC_REQUIRE(offsetof(archpmu_count_open, sample_events) == 72);
    STATIC_REQUIRE(offsetof(archpmu_count_open, sample_flags) == 80);
    STATIC_REQUIRE(offsetof(archpmu_count_open, ring_pages) == 84);
    STATIC_REQUIRE(offsetof(archpmu_count_open, wakeup_bytes) == 88);
    // The fourth layout (104 bytes): task scope.
    STATIC_REQUIRE(offsetof(archpmu_count_open, task_pid) == 96);
    STATIC_REQUIRE(offsetof(archpmu_count_open, task_flags) == 100);
    STATIC_REQUIRE(sizeof(archpmu_count_open) == 104);
    STATIC_REQUIRE(sizeof(archpmu_sample_event) == 24);
    // data_head and the rest where perf's struct perf_event_mmap_page has them.
    STATIC_REQUIRE(offsetof(archpmu_ring_page, data_head) == 1024);
    STATIC_REQUIRE(offsetof(archpmu_ring_page, data_tail) == 1032);
    STATIC_REQUIRE(offsetof(archpmu_ring_page, data_offset) == 1040);
    STATIC_REQUIRE(offsetof(archpmu_ring_page, data_size) == 1048);

    CHECK(archpmu_abi_c_sizes() == 80 + 128 + 24);  // the C view agrees
}

TEST_CASE("ioctl numbers are distinct and carry the archpmu type", "[abi]")
{
    const std::set<unsigned long> cmds = {ARCHPMU_IOC_INFO, ARCHPMU_IOC_CPU_INFO,
                                          ARCHPMU_IOC_MODEL_MSR};
    CHECK(cmds.size() == 3);
    for (unsigned long cmd : cmds)
        CHECK(_IOC_TYPE(cmd) == ARCHPMU_IOC_TYPE);
}

TEST_CASE("capability, flag and event numbers are stable", "[abi]")
{
    CHECK(ARCHPMU_ABI_VERSION == 2);
    CHECK(ARCHPMU_CAP_INFO == 1);
    CHECK(ARCHPMU_CAP_CPU_INFO == 2);
    CHECK(ARCHPMU_CAP_MODEL_MSR == 4);
    CHECK(ARCHPMU_BACKEND_HW == 1);
    CHECK(ARCHPMU_BACKEND_MODEL == 2);
    CHECK(ARCHPMU_EVENT_LBR_INSERTS == 12);
    CHECK(ARCHPMU_CAP_UNPRIVILEGED == 0x4000);
    CHECK(ARCHPMU_CAP_TASK_SAMPLE == 0x8000);
    CHECK(ARCHPMU_CAP_CALLCHAIN == 0x10000);
    CHECK(ARCHPMU_SAMPLE_CALLCHAIN == 2);
    CHECK(ARCHPMU_CAP_USER_STACK == 0x20000);
    CHECK(ARCHPMU_CAP_PERF_METRICS == 0x40000);
    CHECK(ARCHPMU_CAP_CORE_TYPE == 0x80000);
    CHECK(ARCHPMU_CAP_CORE_TYPE_SAMPLE == 0x100000);
    CHECK(ARCHPMU_CAP_READ_SUM == 0x200000);
    CHECK(ARCHPMU_COUNT_READ_SUM == 1);
    CHECK(ARCHPMU_ALL_CPUS == 0xffffffffU);
    CHECK(ARCHPMU_EVENT_ON_CORE_TYPE(ARCHPMU_CORE_TYPE_ATOM) == 0x2000);
    CHECK((ARCHPMU_EVENT_CORE_TYPE & (ARCHPMU_EVENT_GP_MASK | 0x1f)) == 0);
    CHECK(ARCHPMU_COUNTER_METRICS == 0x200);
    CHECK(ARCHPMU_SAMPLE_USER_STACK == 4);
    CHECK(ARCHPMU_SAMPLE_REGS_USER_MASK == 0xff0fff);
    CHECK(ARCHPMU_PRIVILEGE_NONE == 0);
    CHECK(ARCHPMU_PRIVILEGE_OWN_USER == 1);
    CHECK(ARCHPMU_PRIVILEGE_ALL == 2);
    CHECK(ARCHPMU_NR_ARCH_EVENTS == 13);
}

namespace {
// The uapi event tables list their entries in bit (counter) order: the module
// builds arrays from them by position.
constexpr unsigned kArchBits[] = {
#define ARCH_BIT(bit, name, ev, umask) bit,
    ARCHPMU_ARCH_EVENT_TABLE(ARCH_BIT)
#undef ARCH_BIT
};
constexpr unsigned kFixedIndexes[] = {
#define FIXED_INDEX(j, ev, umask) j,
    ARCHPMU_FIXED_EVENT_TABLE(FIXED_INDEX)
#undef FIXED_INDEX
};
}  // namespace

TEST_CASE("the uapi event tables are complete and in order", "[abi]")
{
    REQUIRE(std::size(kArchBits) == ARCHPMU_NR_ARCH_EVENTS);
    for (unsigned i = 0; i < std::size(kArchBits); ++i)
        CHECK(kArchBits[i] == i);
    REQUIRE(std::size(kFixedIndexes) == 7);
    for (unsigned j = 0; j < std::size(kFixedIndexes); ++j)
        CHECK(kFixedIndexes[j] == j);
    CHECK(ARCHPMU_CAP_SESSION_FD == 0x20);
    CHECK(ARCHPMU_COUNT_OPEN_FD == 1);
}
