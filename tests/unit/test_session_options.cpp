// SPDX-License-Identifier: MIT
// A session's options are checked by name before the device is opened (the
// device here does not exist: a check that passed would fail with ENOENT).
#include <catch2/catch.hpp>
#include <cerrno>
#include <string>

#include "archpmu/error.hpp"
#include "archpmu/events.hpp"
#include "archpmu/session.hpp"

namespace {

archpmu::SessionOptions nowhere()
{
    archpmu::SessionOptions o;
    o.device = "/nonexistent/archpmu";
    return o;
}

// The errno and message of opening `events` with `o`.
std::pair<int, std::string> refusal(const std::vector<archpmu::EventSpec>& events,
                                    const archpmu::SessionOptions& o)
{
    try {
        archpmu::Session s(events, o);
    } catch (const archpmu::Error& e) {
        return {e.code().value(), e.what()};
    }
    return {0, ""};
}

}  // namespace

TEST_CASE("session options the module would refuse namelessly are refused by name",
          "[session-options]")
{
    const auto cycles = archpmu::parse_event_list("cycles");
    auto o = nowhere();
    CHECK(refusal({}, o).first == EINVAL);

    o.cpus = {0, 1, 0};
    auto r = refusal(cycles, o);
    CHECK(r.first == EINVAL);
    CHECK_THAT(r.second, Catch::Contains("CPU 0 is listed twice"));

    o = nowhere();
    o.cpus = {0};
    o.task = archpmu::TaskScope{};
    CHECK(refusal(cycles, o).first == EINVAL);

    // A period without rings would be ignored; rings without a period sample nothing.
    auto sampled = cycles;
    sampled[0].sample.period = 1000;
    r = refusal(sampled, nowhere());
    CHECK(r.first == EINVAL);
    CHECK_THAT(r.second, Catch::Contains("'cycles'"));
    o = nowhere();
    o.sampling = archpmu::SamplingOptions{};
    CHECK(refusal(cycles, o).first == EINVAL);

    // What the module does not sample yet.
    o.multiplex = true;
    CHECK(refusal(sampled, o).first == EOPNOTSUPP);
    o.multiplex = false;
    o.task = archpmu::TaskScope{};  // a task session samples: the open fails on the device
    CHECK(refusal(sampled, o).first == ENOENT);

    // Passing every check, the open itself fails on the missing device.
    CHECK(refusal(cycles, nowhere()).first == ENOENT);
}

TEST_CASE("a session takes perf's event list as text", "[session-options]")
{
    try {
        archpmu::Session s("cycles,bogus", nowhere());
        FAIL("an unknown event was taken");
    } catch (const archpmu::Error& e) {
        CHECK(e.code().value() == EINVAL);
        CHECK_THAT(e.what(), Catch::Contains("bogus"));
    }
}

TEST_CASE("a result asked for by a name the session has twice is refused", "[results]")
{
    const archpmu::Results r =
        archpmu::summarize(archpmu::parse_event_list("cycles,cycles"), archpmu::Snapshot{});
    try {
        (void)r.get("cycles");
        FAIL("an ambiguous name was taken");
    } catch (const archpmu::Error& e) {
        CHECK(e.code().value() == EINVAL);
    }
}
