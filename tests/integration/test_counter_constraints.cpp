// SPDX-License-Identifier: MIT
// Counter constraints of model-specific events (ARCHPMU_EVENT_GP_MASK): the ABI,
// the library that fills them from perf's event tables for the CPU the model
// impersonates, the refusal of a pin outside them, and `archpmu list`.
#include <sys/ioctl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <nlohmann/json.hpp>
#include <string>

#include "archpmu.h"
#include "archpmu/device.hpp"
#include "archpmu/error.hpp"
#include "archpmu/events.hpp"
#include "archpmu/session.hpp"
#include "harness.hpp"

using namespace archpmu::itest;
using archpmu::Session;

namespace {

constexpr const char* kDev = "/dev/archpmu";

// COUNT_OPEN of one event on CPU 0: the counter it got, or -errno.
long open_one(const archpmu::Device& dev, uint64_t config, uint32_t flags, uint32_t counter = 0)
{
    archpmu_event ev{config, flags, counter};
    uint32_t cpu = 0;
    archpmu_count_open op{};
    op.size = sizeof(op);
    op.flags = ARCHPMU_COUNT_OPEN_FD;
    op.nr_events = 1;
    op.events = reinterpret_cast<uintptr_t>(&ev);
    op.nr_cpus = 1;
    op.cpus = reinterpret_cast<uintptr_t>(&cpu);
    const int fd = ::ioctl(dev.fd(), ARCHPMU_IOC_COUNT_OPEN, &op);
    if (fd < 0)
        return -errno;
    ::close(fd);
    return ev.counter;
}

}  // namespace

TEST_CASE("the ABI takes a GP counter mask per event, and the CPU's signature", "[constraints]")
{
    LoadedModule module(dump_params("GenuineIntel0090672_AlderLake_03.txt"));
    archpmu::Device dev;
    CHECK((dev.info().capabilities & ARCHPMU_CAP_COUNTER_MASK) != 0);
    CHECK(dev.cpu_info(0).cpuid_01_eax == 0x90672);
    CHECK(open_one(dev, 0x00c4, ARCHPMU_EVENT_GP_COUNTERS(0x4)) == 2);
    CHECK(open_one(dev, 0x00c4, ARCHPMU_EVENT_GP_COUNTERS(0x4) | ARCHPMU_EVENT_PIN, 2) == 2);
    CHECK(open_one(dev, 0x00c4, ARCHPMU_EVENT_GP_COUNTERS(0x4) | ARCHPMU_EVENT_PIN, 1) == -ECHRNG);
    CHECK(open_one(dev, 0x00c4, ARCHPMU_EVENT_GP_COUNTERS(0x8000)) == -ECHRNG);  // no GP 15
    // The mask leaves fixed counters alone.
    CHECK(open_one(dev, 0x00c0, ARCHPMU_EVENT_GP_COUNTERS(0x4)) == (ARCHPMU_COUNTER_FIXED | 0));
}

TEST_CASE("sessions place model-specific events on the counters perf's tables allow",
          "[constraints]")
{
    // Alder Lake: the P-cores' 0x02cd counts only on GP counter 0 (perf's tables).
    LoadedModule module(dump_params("GenuineIntel0090672_AlderLake_03.txt"));
    {
        // In order, branches would take GP counter 0 and r02cd count nothing on GP counter 1.
        Session s(archpmu::parse_event_list("branches@gp,r02cd"), on_cpus({0}));
        CHECK(s.counters() == std::vector<uint32_t>{1, 0});
    }
    try {
        Session s(archpmu::parse_event_list("r02cd@gp1"), on_cpus({0}));
        FAIL("a pin outside the event's counters was taken");
    } catch (const archpmu::Error& e) {
        CHECK(e.code().value() == ECHRNG);
        CHECK_THAT(e.what(), Catch::Contains("'r02cd@gp1' counts only on GP counter 0 (perf's "
                                             "event tables, Linux "));
        CHECK_THAT(e.what(), Catch::Contains("pinned to gp1 it would count nothing on CPU 0"));
    }
    // Two events that both need GP counter 0 take turns when multiplexed.
    Session m(archpmu::parse_event_list("r02cd,r04a4"), on_cpus({0}, Mux::on, StartAt::start));
    CHECK((m.counters()[0] == 0 || m.counters()[1] == 0));
    CHECK((m.counters()[0] == ARCHPMU_NO_COUNTER || m.counters()[1] == ARCHPMU_NO_COUNTER));
}

TEST_CASE("list shows the GP counters a model-specific event is limited to", "[constraints]")
{
    // Ice Lake, with libpfm4's Ice Lake tables: SQ_MISC.SQ_FULL counts on GP counters 0-3.
    LoadedModule module(dump_params("GenuineIntel00706E5_IceLakeY.txt"));
    const std::string tool = "LIBPFM_FORCE_PMU=icl " + std::string(ARCHPMU_TOOL);
    const auto text = run_command(tool + " list SQ_MISC.SQ_FULL");
    REQUIRE(text.status == 0);
    CHECK_THAT(text.out, Catch::Matches("(.|\\n)*SQ_MISC.SQ_FULL +0x000004f4  only gp0-3(.|\\n)*"));
    const auto json = run_command("{ " + tool + " list --json SQ_MISC 2>/dev/null; }");
    REQUIRE(json.status == 0);
    bool seen = false;
    INFO(json.out);
    const auto doc = nlohmann::json::parse(json.out);
    for (const auto& e : doc["model_specific"])
        if (e["name"] == "SQ_MISC.SQ_FULL") {
            seen = true;
            CHECK(e["gp_counters"]["all"] == nlohmann::json::array({0, 1, 2, 3}));
        }
    CHECK(seen);
    // An architectural event is never limited.
    const auto arch = run_command("{ " + tool + " list --json INST_RETIRED.ANY 2>/dev/null; }");
    REQUIRE(arch.status == 0);
    const auto arch_doc = nlohmann::json::parse(arch.out);
    unsigned architectural = 0;
    for (const auto& e : arch_doc["model_specific"])
        if (e["config"] == "0xc0") {
            architectural++;
            CHECK(e["gp_counters"].is_null());
        }
    CHECK(architectural > 0);
}
