// SPDX-License-Identifier: MIT
// Sampling records: parsing, reading a perf-protocol ring (with a record that
// wraps around its end) and the k-way merge in time order. No kernel needed.
#include <catch2/catch.hpp>

#include <linux/perf_event.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "archpmu.h"
#include "archpmu/records.hpp"
#include "archpmu/sideband.hpp"
#include "record_builder.hpp"

using archpmu::Record;

namespace {

// A THROTTLE record: time, id, stream_id, then the sample_id trailer.
Record throttle(std::uint64_t id, std::uint64_t time, std::uint32_t cpu)
{
    std::vector<std::uint8_t> b(8);
    put64(b, time);
    put64(b, id);
    put64(b, id);
    put32x2(b, 0, 0);
    put64(b, time);
    put64(b, id);
    put32x2(b, cpu, 0);
    put64(b, id);
    Record r;
    r.type = ARCHPMU_RECORD_THROTTLE;
    const auto size = static_cast<std::uint16_t>(b.size());
    std::memcpy(b.data(), &r.type, 4);
    std::memcpy(b.data() + 6, &size, 2);
    r.bytes = std::move(b);
    return r;
}

std::vector<Record> read_all(FakeRing& ring, bool* corrupt = nullptr)
{
    std::vector<Record> out;
    archpmu::read_ring(
        ring.memory(), [&](Record&& r) { out.push_back(std::move(r)); }, corrupt);
    return out;
}

}  // namespace

TEST_CASE("a sample record parses, with and without group values", "[records]")
{
    const auto s = archpmu::parse_sample(sample_record(7, 123456, 3, 0xabcdef), false);
    REQUIRE(s);
    CHECK(s->ip == 0xabcdef);
    CHECK(s->pid == 42);
    CHECK(s->tid == 43);
    CHECK(s->time == 123456);
    CHECK(s->id == 7);
    CHECK(s->cpu == 3);
    CHECK(s->period == 100000);
    CHECK_FALSE(s->kernel);
    CHECK(s->values.empty());

    const std::vector<archpmu::GroupValue> group{{1000, 7}, {2000, 8}};
    const auto g = archpmu::parse_sample(sample_record(7, 1, 0, 0, &group), true);
    REQUIRE(g);
    REQUIRE(g->values.size() == 2);
    CHECK(g->values[1].value == 2000);
    CHECK(g->values[1].id == 8);
    // Asking for group values that are not there fails.
    CHECK_FALSE(archpmu::parse_sample(sample_record(7, 1, 0), true));
    CHECK_FALSE(archpmu::parse_sample(throttle(7, 1, 0), false));
}

TEST_CASE("a sample's call chain, user registers and stack parse by the session's format",
          "[records]")
{
    Record r = sample_record(7, 1, 0);
    auto& b = r.bytes;
    put64(b, 3);  // callchain: nr, then the entries
    put64(b, PERF_CONTEXT_KERNEL);
    put64(b, 0xffffffff81000000ULL);
    put64(b, 0xffffffff81000010ULL);
    put64(b, PERF_SAMPLE_REGS_ABI_64);
    for (std::uint64_t i = 0; i < 20; ++i)
        put64(b, 100 + i);
    put64(b, 16);  // stack size, data, dyn_size
    put64(b, 0x1111);
    put64(b, 0);
    put64(b, 8);
    const auto size = static_cast<std::uint16_t>(b.size());
    std::memcpy(b.data() + 6, &size, 2);

    archpmu::SampleFormat format;
    format.callchain = true;
    format.user_stack = true;
    const auto s = archpmu::parse_sample(r, format);
    REQUIRE(s);
    CHECK(s->callchain == std::vector<std::uint64_t>{PERF_CONTEXT_KERNEL, 0xffffffff81000000ULL,
                                                     0xffffffff81000010ULL});
    REQUIRE(s->user_regs.size() == 20);
    CHECK(s->user_regs[8] == 108);       // ip
    REQUIRE(s->user_stack.size() == 8);  // what could be read of the 16
    CHECK(s->user_stack[0] == 0x11);
    // Cut short, the record is refused, not read past its end.
    Record cut = r;
    cut.bytes.resize(cut.bytes.size() - 16);
    CHECK_FALSE(archpmu::parse_sample(cut, format));
    // Without the format, what follows the fixed fields is taken for a chain only.
    const auto plain = archpmu::parse_sample(sample_record(7, 1, 0), false);
    REQUIRE(plain);
    CHECK(plain->callchain.empty());
    CHECK(plain->user_regs.empty());
}

TEST_CASE("non-sample records sort by their sample_id trailer's time", "[records]")
{
    const Record t = throttle(9, 555, 2);
    const auto id = archpmu::parse_sample_id(t);
    REQUIRE(id);
    CHECK(id->time == 555);
    CHECK(id->id == 9);
    CHECK(id->cpu == 2);
    CHECK(archpmu::record_time(t) == 555);
    CHECK(archpmu::record_time(sample_record(1, 777, 0)) == 777);
    CHECK(archpmu::record_time(archpmu::make_comm_record(1, 1, "x", 31, 5)) == 31);
}

TEST_CASE("the ring reader copies records out, across the end of the ring", "[records]")
{
    FakeRing ring(256);
    const Record a = sample_record(1, 10, 0);  // 64 bytes at 160..224
    const Record b = throttle(1, 20, 0);       // 72 bytes at 224..296: wraps
    const Record c = sample_record(1, 30, 0);  // 64 bytes at 296..360 (40..104)
    REQUIRE(b.size() == 72);
    ring.place(160, {a, b, c});
    bool corrupt = false;
    const auto got = read_all(ring, &corrupt);
    CHECK_FALSE(corrupt);
    REQUIRE(got.size() == 3);
    CHECK(got[0].bytes == a.bytes);
    CHECK(got[1].bytes == b.bytes);
    CHECK(got[1].type == ARCHPMU_RECORD_THROTTLE);
    CHECK(got[2].bytes == c.bytes);
    CHECK(ring.control[1032 / 8] == 360);  // data_tail = data_head
    // Nothing new: nothing read.
    CHECK(read_all(ring).empty());
}

TEST_CASE("a ring's records are handed over in place, in two pieces when they wrap", "[records]")
{
    FakeRing ring(256);
    const Record a = sample_record(1, 10, 0, 0x1000, nullptr, 7, 8);  // 160..224
    const Record b = throttle(1, 20, 0);                              // 224..296: wraps
    const Record c = sample_record(1, 30, 0);                         // 296..360 (40..104)
    ring.place(160, {a, b, c});
    const archpmu::RingMemory memory = ring.memory();
    std::vector<std::uint8_t> bytes;
    std::vector<std::uint64_t> times;
    unsigned calls = 0;
    const auto n = archpmu::read_ring_span(memory, [&](const archpmu::RingSpan& span) {
        ++calls;
        CHECK(span.records() == 3);
        CHECK(span.bytes() == 200);
        CHECK(span.first().data == ring.data.data() + 160);
        CHECK(span.first().size == 96);
        CHECK(span.second().data == ring.data.data());
        bytes.insert(bytes.end(), span.first().data, span.first().data + span.first().size);
        bytes.insert(bytes.end(), span.second().data, span.second().data + span.second().size);
        span.for_each(
            [&](const archpmu::RecordRef& r) { times.push_back(archpmu::record_time(r)); });
        std::uint32_t pid = 0;
        span.for_each([&](const archpmu::RecordRef& r) {
            if (!pid)
                pid = r.u32(24);
        });
        CHECK(pid == 7);
    });
    CHECK(n == 3);
    CHECK(calls == 1);
    std::vector<std::uint8_t> want = a.bytes;
    want.insert(want.end(), b.bytes.begin(), b.bytes.end());
    want.insert(want.end(), c.bytes.begin(), c.bytes.end());
    CHECK(bytes == want);
    CHECK(times == std::vector<std::uint64_t>{10, 20, 30});
    CHECK(ring.control[1032 / 8] == 360);
    // Nothing new: no call.
    CHECK(archpmu::read_ring_span(memory, [&](const archpmu::RingSpan&) { ++calls; }) == 0);
    CHECK(calls == 1);

    // A malformed record ends the span before it; the rest is skipped.
    Record bad = sample_record(1, 40, 0);
    const std::uint16_t zero = 0;
    std::memcpy(bad.bytes.data() + 6, &zero, 2);
    ring.place(360, {c, bad, c});
    bool corrupt = false;
    std::size_t span_bytes = 0;
    CHECK(archpmu::read_ring_span(
              memory, [&](const archpmu::RingSpan& span) { span_bytes = span.bytes(); },
              &corrupt) == 1);
    CHECK(corrupt);
    CHECK(span_bytes == c.size());
    CHECK(ring.control[1032 / 8] == ring.control[1024 / 8]);

    // A head more than the ring's size ahead of the tail: nothing handed over.
    ring.place(1000, {c});
    ring.control[1024 / 8] = 1000 + 256 + 64;
    corrupt = false;
    CHECK(archpmu::read_ring_span(
              memory, [&](const archpmu::RingSpan&) { ++calls; }, &corrupt) == 0);
    CHECK(corrupt);
    CHECK(calls == 1);
    CHECK(ring.control[1032 / 8] == 1000 + 256 + 64);
}

TEST_CASE("a record header that wraps is read too", "[records]")
{
    FakeRing ring(128);
    const Record a = sample_record(1, 10, 0);
    ring.place(124, {a});  // the header itself is split 4 + 4
    const auto got = read_all(ring);
    REQUIRE(got.size() == 1);
    CHECK(got[0].bytes == a.bytes);
}

TEST_CASE("a malformed record ends the read and skips the rest", "[records]")
{
    FakeRing ring(256);
    Record bad = sample_record(1, 10, 0);
    const std::uint16_t zero = 0;
    std::memcpy(bad.bytes.data() + 6, &zero, 2);
    ring.place(0, {sample_record(1, 5, 0), bad});
    bool corrupt = false;
    const auto got = read_all(ring, &corrupt);
    CHECK(corrupt);
    CHECK(got.size() == 1);
    CHECK(ring.control[1032 / 8] == ring.control[1024 / 8]);
}

TEST_CASE("records of several rings merge in time order", "[records]")
{
    std::vector<std::vector<Record>> rings(3);
    rings[0] = {sample_record(1, 10, 0), sample_record(1, 40, 0), sample_record(1, 70, 0)};
    rings[1] = {sample_record(1, 5, 1), throttle(1, 40, 1), sample_record(1, 90, 1)};
    rings[2] = {};
    const auto merged = archpmu::merge_by_time(rings);
    REQUIRE(merged.size() == 6);
    std::vector<std::uint64_t> times;
    for (const auto& r : merged)
        times.push_back(archpmu::record_time(r));
    CHECK(times == std::vector<std::uint64_t>{5, 10, 40, 40, 70, 90});
    // A tie goes to the lower ring.
    CHECK(merged[2].type == ARCHPMU_RECORD_SAMPLE);
    CHECK(merged[3].type == ARCHPMU_RECORD_THROTTLE);

    archpmu::TimeMerge none({});
    Record r;
    CHECK_FALSE(none.next(r));
}

TEST_CASE("executable mappings parse from /proc/PID/maps", "[records]")
{
    const std::string maps =
        "55d0c0000000-55d0c0001000 r--p 00000000 08:01 1234 /usr/bin/true\n"
        "55d0c0001000-55d0c0005000 r-xp 00001000 08:01 1234 /usr/bin/true\n"
        "7f0000000000-7f0000001000 rwxp 00000000 00:00 0 \n"
        "7ffd1000-7ffd3000 r-xp 00000000 00:00 0 [vdso]\n"
        "7f1000000000-7f1000100000 r-xs 00002000 fd:02 99 /opt/my lib.so\n";
    const auto m = archpmu::parse_exec_maps(maps);
    REQUIRE(m.size() == 3);
    CHECK(m[0].start == 0x55d0c0001000);
    CHECK(m[0].end == 0x55d0c0005000);
    CHECK(m[0].pgoff == 0x1000);
    CHECK(m[0].maj == 8);
    CHECK(m[0].min == 1);
    CHECK(m[0].ino == 1234);
    CHECK(m[0].prot == (PROT_READ | PROT_EXEC));
    CHECK(m[0].flags == MAP_PRIVATE);
    CHECK(m[1].path == "[vdso]");
    CHECK(m[2].path == "/opt/my lib.so");
    CHECK(m[2].maj == 0xfd);
    CHECK(m[2].flags == MAP_SHARED);

    const Record r = archpmu::make_mmap2_record(5, 5, m[0], 0, 77);
    CHECK(r.size() % 8 == 0);
    const auto id = archpmu::parse_sample_id(r);
    REQUIRE(id);
    CHECK(id->id == 77);
    CHECK(id->pid == 5);
}

TEST_CASE("the side-band finds the online CPUs", "[sideband]")
{
    const auto cpus = archpmu::online_cpus();
    REQUIRE_FALSE(cpus.empty());
    CHECK(std::is_sorted(cpus.begin(), cpus.end()));
}
