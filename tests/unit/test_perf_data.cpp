// SPDX-License-Identifier: MIT
// The perf.data writer: the file's layout read back, and (where perf is
// installed) perf report and perf script accept it.
#include <catch2/catch.hpp>

#include <elf.h>
#include <link.h>
#include <linux/perf_event.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "archpmu/events.hpp"
#include "archpmu/perf_data.hpp"
#include "archpmu/sideband.hpp"
#include "record_builder.hpp"

using archpmu::Record;

namespace {

constexpr std::uint64_t kCyclesId = archpmu::kSampleIdBase + 1;
constexpr std::uint64_t kDummyId = 4242;
constexpr std::uint32_t kPid = 31337;

template <typename T>
T at(const std::vector<std::uint8_t>& file, std::uint64_t offset)
{
    T v;
    REQUIRE(offset + sizeof(T) <= file.size());
    std::memcpy(&v, file.data() + offset, sizeof(T));
    return v;
}

Record sample(std::uint64_t time, std::uint64_t ip, std::uint16_t misc)
{
    std::vector<std::uint64_t> w{0,    kCyclesId, ip, static_cast<std::uint64_t>(kPid) << 32 | kPid,
                                 time, kCyclesId, 1,  100000};
    Record r;
    r.type = PERF_RECORD_SAMPLE;
    r.misc = misc;
    r.bytes.resize(w.size() * 8);
    std::memcpy(r.bytes.data(), w.data(), r.bytes.size());
    const auto size = static_cast<std::uint16_t>(r.bytes.size());
    std::memcpy(r.bytes.data(), &r.type, 4);
    std::memcpy(r.bytes.data() + 4, &r.misc, 2);
    std::memcpy(r.bytes.data() + 6, &size, 2);
    return r;
}

std::string temp_path(const char* name)
{
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir ? dir : "/tmp") + "/archpmu-unit-" + std::to_string(::getpid()) + "-" +
           name;
}

std::string own_path()
{
    char buf[4096];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf));
    REQUIRE(n > 0);
    return std::string(buf, static_cast<std::size_t>(n));
}

std::string hex_of(const std::uint8_t* bytes, std::size_t size)
{
    std::string out;
    for (std::size_t i = 0; i < size; ++i) {
        out += "0123456789abcdef"[bytes[i] >> 4];
        out += "0123456789abcdef"[bytes[i] & 15];
    }
    return out;
}

// This program's build id as the loader mapped it (its PT_NOTE in memory), in hex.
std::string own_build_id()
{
    std::string hex;
    ::dl_iterate_phdr(
        [](dl_phdr_info* info, std::size_t, void* out) {
            for (int i = 0; i < info->dlpi_phnum; ++i) {
                const ElfW(Phdr)& ph = info->dlpi_phdr[i];
                if (ph.p_type != PT_NOTE)
                    continue;
                const auto* p = reinterpret_cast<const std::uint8_t*>(info->dlpi_addr + ph.p_vaddr);
                std::size_t at = 0;
                while (at + sizeof(ElfW(Nhdr)) <= ph.p_memsz) {
                    ElfW(Nhdr) n;
                    std::memcpy(&n, p + at, sizeof(n));
                    const std::size_t desc = at + sizeof(n) + ((n.n_namesz + 3) & ~3U);
                    if (n.n_type == NT_GNU_BUILD_ID) {
                        *static_cast<std::string*>(out) = hex_of(p + desc, n.n_descsz);
                        return 1;
                    }
                    at = desc + ((n.n_descsz + 3) & ~3U);
                }
            }
            return 1;  // the first object is the program itself
        },
        &hex);
    return hex;
}

// A writer of 2 events (cycles:u and the side-band dummy) that has written the
// side-band records of one process; their bytes in *bytes.
archpmu::PerfDataWriter start_file(const std::string& path, std::uint64_t* bytes)
{
    archpmu::EventSpec cycles = archpmu::parse_event("cycles:u");
    cycles.sample.freq_hz = 4000;
    std::vector<archpmu::PerfEventDesc> events(2);
    events[0].attr = archpmu::perf_attr_for(cycles, false);
    events[0].name = "cycles:u";
    events[0].ids = {kCyclesId};
    events[1].attr = archpmu::sideband_attr();
    events[1].name = "dummy";
    events[1].ids = {kDummyId, kDummyId + 1};
    auto info = archpmu::host_perf_data_info({"archpmu", "record", "--", "synth"});
    archpmu::PerfDataWriter w(path, std::move(events), info);

    archpmu::MapEntry m;
    m.start = 0x400000;
    m.end = 0x500000;
    m.prot = 5;
    m.flags = 2;
    m.path = "/nonexistent/synthbin";
    archpmu::MapEntry self = m;  // a file with a build id: this test's own
    self.start = 0x600000;
    self.end = 0x700000;
    self.path = own_path();
    *bytes = 0;
    for (const auto& r : {archpmu::make_kernel_mmap_record(0xffffffff81000000ULL, 0, kDummyId),
                          archpmu::make_comm_record(kPid, kPid, "synthproc", 0, kDummyId),
                          archpmu::make_mmap2_record(kPid, kPid, m, 0, kDummyId),
                          archpmu::make_mmap2_record(kPid, kPid, self, 0, kDummyId)}) {
        w.write(r);
        *bytes += r.size();
    }
    return w;
}

// Writes a file with 2 events (cycles:u and the side-band dummy) and a few records.
std::uint64_t write_file(const std::string& path)
{
    std::uint64_t bytes = 0;
    archpmu::PerfDataWriter w = start_file(path, &bytes);
    // The samples as the recorder writes them: in place in a ring, across its end.
    FakeRing ring(256);
    const std::vector<Record> samples{sample(1000, 0x401234, 2), sample(2000, 0x401238, 2),
                                      sample(3000, 0x402000, 2)};
    ring.place(160, samples);
    const archpmu::RingMemory memory = ring.memory();
    archpmu::read_ring_span(memory, [&](const archpmu::RingSpan& span) {
        CHECK(span.second().size > 0);
        w.write(span);
    });
    for (const auto& r : samples)
        bytes += r.size();
    CHECK(w.samples() == 3);
    w.finish();
    return bytes;
}

std::vector<std::uint8_t> slurp(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// stdout of a shell command and its exit status.
std::string run(const std::string& cmd, int* status)
{
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    REQUIRE(p);
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0)
        out.append(buf, n);
    *status = ::pclose(p);
    return out;
}

}  // namespace

TEST_CASE("perf attributes for archpmu events", "[perf_data]")
{
    archpmu::EventSpec e = archpmu::parse_event("instructions:k");
    e.sample.period = 1000003;
    auto a = archpmu::perf_attr_for(e, true);
    CHECK(a.type == PERF_TYPE_HARDWARE);
    CHECK(a.config == PERF_COUNT_HW_INSTRUCTIONS);
    CHECK(a.sample_period == 1000003);
    CHECK(a.freq == 0);
    CHECK(a.exclude_user == 1);
    CHECK(a.exclude_kernel == 0);
    CHECK((a.sample_type & PERF_SAMPLE_IDENTIFIER) != 0);
    CHECK((a.sample_type & PERF_SAMPLE_READ) != 0);
    CHECK(a.read_format == (PERF_FORMAT_GROUP | PERF_FORMAT_ID));
    CHECK(a.sample_id_all == 1);
    CHECK(a.use_clockid == 1);
    CHECK(a.clockid == CLOCK_MONOTONIC);

    e = archpmu::parse_event("cpu/event=0xc0,umask=0x01,cmask=2/");
    a = archpmu::perf_attr_for(e, false);
    CHECK(a.type == PERF_TYPE_RAW);
    CHECK(a.config == 0x020001c0);
    // Neither :u nor :k: both.
    CHECK(a.exclude_user == 0);
    CHECK(a.exclude_kernel == 0);
    CHECK((a.sample_type & PERF_SAMPLE_READ) == 0);

    // perf's cache events as perf writes them: its generic cache type and config.
    a = archpmu::perf_attr_for(archpmu::parse_event("L1-dcache-load-misses:u"), false);
    CHECK(a.type == PERF_TYPE_HW_CACHE);
    CHECK(a.config == (PERF_COUNT_HW_CACHE_L1D | PERF_COUNT_HW_CACHE_OP_READ << 8 |
                       PERF_COUNT_HW_CACHE_RESULT_MISS << 16));
    CHECK(a.exclude_kernel == 1);
    CHECK(archpmu::perf_attr_for(archpmu::parse_event("iTLB-loads"), false).config ==
          PERF_COUNT_HW_CACHE_ITLB);
    CHECK(archpmu::perf_attr_for(archpmu::parse_event("L1-dcache-prefetch-misses"), false).config ==
          (PERF_COUNT_HW_CACHE_L1D | PERF_COUNT_HW_CACHE_OP_PREFETCH << 8 |
           PERF_COUNT_HW_CACHE_RESULT_MISS << 16));
    CHECK(archpmu::perf_attr_for(archpmu::parse_event("LLC-loads"), false).config ==
          PERF_COUNT_HW_CACHE_LL);
}

TEST_CASE("a perf.data file reads back: header, attributes, ids, data, features", "[perf_data]")
{
    const std::string path = temp_path("layout.data");
    const std::uint64_t data_bytes = write_file(path);
    const auto f = slurp(path);
    std::remove(path.c_str());

    REQUIRE(f.size() > archpmu::kPerfFileHeaderSize);
    CHECK(std::string(reinterpret_cast<const char*>(f.data()), 8) == "PERFILE2");
    CHECK(at<std::uint64_t>(f, 8) == 104);
    const auto attr_size = at<std::uint64_t>(f, 16);
    CHECK(attr_size == sizeof(perf_event_attr) + 16);
    const auto attrs_off = at<std::uint64_t>(f, 24);
    const auto attrs_size = at<std::uint64_t>(f, 32);
    const auto data_off = at<std::uint64_t>(f, 40);
    const auto data_size = at<std::uint64_t>(f, 48);
    CHECK(attrs_size == 2 * attr_size);
    CHECK(attrs_off + attrs_size == data_off);
    CHECK(data_size == data_bytes);
    CHECK(at<std::uint64_t>(f, 56) == 0);  // event_types: none
    CHECK(at<std::uint64_t>(f, 64) == 0);

    // Each attribute and its ids.
    const std::vector<std::vector<std::uint64_t>> ids{{kCyclesId}, {kDummyId, kDummyId + 1}};
    for (std::size_t i = 0; i < 2; ++i) {
        const auto a = at<perf_event_attr>(f, attrs_off + i * attr_size);
        CHECK(a.size == sizeof(perf_event_attr));
        CHECK(a.sample_id_all == 1);
        CHECK((a.sample_type & PERF_SAMPLE_IDENTIFIER) != 0);
        const auto ids_off = at<std::uint64_t>(f, attrs_off + i * attr_size + sizeof(a));
        const auto ids_size = at<std::uint64_t>(f, attrs_off + i * attr_size + sizeof(a) + 8);
        REQUIRE(ids_size == ids[i].size() * 8);
        for (std::size_t j = 0; j < ids[i].size(); ++j)
            CHECK(at<std::uint64_t>(f, ids_off + j * 8) == ids[i][j]);
    }
    CHECK(at<perf_event_attr>(f, attrs_off).freq == 1);
    CHECK(at<perf_event_attr>(f, attrs_off).sample_freq == 4000);
    CHECK(at<perf_event_attr>(f, attrs_off).exclude_kernel == 1);  // cycles:u
    CHECK(at<perf_event_attr>(f, attrs_off).exclude_user == 0);
    CHECK(at<perf_event_attr>(f, attrs_off + attr_size).type == PERF_TYPE_SOFTWARE);

    // The first record of the data is the kernel's MMAP.
    CHECK(at<std::uint32_t>(f, data_off) == PERF_RECORD_MMAP);

    // The feature bitmap, and a section per bit right after the data, in bit order,
    // the contents back to back up to the end of the file.
    const std::vector<unsigned> bits{2, 3, 4, 5, 6, 7, 11, 12, 21, 23, 29};
    std::vector<unsigned> set;
    for (unsigned bit = 0; bit < 256; ++bit)
        if (at<std::uint64_t>(f, 72 + bit / 64 * 8) & (1ULL << (bit % 64)))
            set.push_back(bit);
    for (const auto b : bits)
        CHECK(std::find(set.begin(), set.end(), b) != set.end());
    std::uint64_t next = data_off + data_size + set.size() * 16;
    std::uint64_t event_desc = 0;
    std::uint64_t sample_time = 0;
    for (std::size_t i = 0; i < set.size(); ++i) {
        const auto off = at<std::uint64_t>(f, data_off + data_size + i * 16);
        const auto size = at<std::uint64_t>(f, data_off + data_size + i * 16 + 8);
        CHECK(off == next);
        next = off + size;
        if (set[i] == 12)
            event_desc = off;
        if (set[i] == 21)
            sample_time = off;
    }
    CHECK(next == f.size());
    REQUIRE(event_desc);
    CHECK(at<std::uint32_t>(f, event_desc) == 2);
    CHECK(at<std::uint32_t>(f, event_desc + 4) == sizeof(perf_event_attr));
    const auto name_at = event_desc + 8 + sizeof(perf_event_attr) + 4;  // after nr_ids
    CHECK(at<std::uint32_t>(f, name_at) % 64 == 0);
    CHECK(std::string(reinterpret_cast<const char*>(f.data() + name_at + 4)) == "cycles:u");
    REQUIRE(sample_time);
    CHECK(at<std::uint64_t>(f, sample_time) == 1000);
    CHECK(at<std::uint64_t>(f, sample_time + 8) == 3000);

    // HEADER_BUILD_ID: perf's build_id_event for the kernel and each mapped file
    // that has an id (this program; not the missing synthbin).
    REQUIRE(set[0] == 2);
    const auto build_ids = at<std::uint64_t>(f, data_off + data_size);
    const auto build_ids_end = build_ids + at<std::uint64_t>(f, data_off + data_size + 8);
    std::vector<std::string> names;
    std::string own_id;
    for (auto e = build_ids; e < build_ids_end;) {
        const auto misc = at<std::uint16_t>(f, e + 4);
        const auto size = at<std::uint16_t>(f, e + 6);
        REQUIRE(size > 36);
        CHECK(at<std::int32_t>(f, e + 8) == -1);
        CHECK((misc & (1U << 15)) != 0);  // the size byte is set
        const auto id_size = at<std::uint8_t>(f, e + 12 + 20);
        CHECK((id_size > 0 && id_size <= 20));
        names.emplace_back(reinterpret_cast<const char*>(f.data() + e + 36));
        CHECK((misc & PERF_RECORD_MISC_CPUMODE_MASK) == (names.back() == "[kernel.kallsyms]"
                                                             ? PERF_RECORD_MISC_KERNEL
                                                             : PERF_RECORD_MISC_USER));
        if (names.back() == own_path())
            own_id = hex_of(f.data() + e + 12, id_size);
        e += size;
    }
    CHECK(std::find(names.begin(), names.end(), "/nonexistent/synthbin") == names.end());
    REQUIRE(!own_build_id().empty());
    CHECK(own_id == own_build_id());
}

TEST_CASE("a ring span larger than the writer's buffer goes to the file whole", "[perf_data]")
{
    const std::string path = temp_path("span.data");
    FakeRing ring(std::size_t{1} << 18);
    std::vector<Record> samples;
    for (std::uint64_t i = 0; i < 3000; ++i)  // 192,000 bytes, from 200,000: wraps
        samples.push_back(sample(1000 + i, 0x401000 + i, 2));
    ring.place(200000, samples);
    {
        archpmu::PerfDataWriter w(path, {}, archpmu::host_perf_data_info({"archpmu"}));
        w.write(samples[0]);  // something in the buffer first
        const archpmu::RingMemory memory = ring.memory();
        CHECK(archpmu::read_ring_span(
                  memory, [&](const archpmu::RingSpan& span) { w.write(span); }) == 3000);
        CHECK(w.samples() == 3001);
        CHECK(w.data_bytes() == 3001 * 64);
        w.finish();
    }
    const auto f = slurp(path);
    std::remove(path.c_str());
    const auto data_off = at<std::uint64_t>(f, 40);
    REQUIRE(at<std::uint64_t>(f, 48) == 3001 * 64);
    bool same = true;
    for (std::size_t i = 0; i < 3000; ++i)
        same = same && std::equal(samples[i].bytes.begin(), samples[i].bytes.end(),
                                  f.begin() + static_cast<std::ptrdiff_t>(data_off + (i + 1) * 64));
    CHECK(same);
}

TEST_CASE("perf report and perf script accept a written file", "[perf_data]")
{
    if (std::system("perf --version >/dev/null 2>&1") != 0) {
        WARN("perf is not installed: not checked");
        return;
    }
    const std::string path = temp_path("perf.data");
    write_file(path);
    int status = 0;
    const auto report = run("perf report -f -i " + path + " --stdio 2>&1", &status);
    INFO(report);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK_THAT(report, Catch::Contains("cycles:u"));
    CHECK_THAT(report, Catch::Contains("synthproc"));
    const auto script = run("perf script -f -i " + path + " 2>&1", &status);
    INFO(script);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK_THAT(script, Catch::Contains("synthproc"));
    CHECK_THAT(script, Catch::Contains("401234"));
    const auto header = run("perf report -f -i " + path + " --header-only 2>&1", &status);
    INFO(header);
    CHECK(WEXITSTATUS(status) == 0);
    CHECK_THAT(header, Catch::Contains("clockid"));
    // The build ids of the mapped files, as perf reads them from the files themselves.
    const auto ids = run("perf buildid-list -f -i " + path + " 2>&1", &status);
    INFO(ids);
    CHECK(WEXITSTATUS(status) == 0);
    const auto own = run("perf buildid-list -i " + own_path() + " 2>&1", &status);
    REQUIRE(own.size() > 20);
    CHECK_THAT(ids, Catch::Contains(own.substr(0, own.find('\n')) + " " + own_path()));
    std::remove(path.c_str());
}

TEST_CASE("perf report counts the samples a LOST_SAMPLES record says were dropped", "[perf_data]")
{
    if (std::system("perf --version >/dev/null 2>&1") != 0) {
        WARN("perf is not installed: not checked");
        return;
    }
    const std::string path = temp_path("perf.data");
    std::uint64_t bytes = 0;
    archpmu::PerfDataWriter w = start_file(path, &bytes);
    w.write(sample(1000, 0x401234, 2));
    const Record lost = archpmu::make_lost_samples_record(7, 3, kCyclesId);
    CHECK(lost.type == PERF_RECORD_LOST_SAMPLES);
    CHECK(lost.size() == 8 + 8 + archpmu::kSampleIdSize);
    const auto id = archpmu::parse_sample_id(lost);
    REQUIRE(id);
    CHECK(id->id == kCyclesId);
    CHECK(id->cpu == 3);
    w.write(lost);
    w.finish();
    int status = 0;
    const auto report = run("perf report -f -i " + path + " --stdio 2>&1", &status);
    INFO(report);
    CHECK(WEXITSTATUS(status) == 0);
    CHECK_THAT(report, Catch::Contains("# Total Lost Samples: 7\n"));
    std::remove(path.c_str());
}

TEST_CASE("a writer that never finishes leaves a file perf reads up to its checkpoint",
          "[perf_data]")
{
    const std::string path = temp_path("killed.data");
    std::uint64_t bytes = 0;
    {
        archpmu::PerfDataWriter w = start_file(path, &bytes);
        w.write(sample(1000, 0x401234, 2));
        w.write(sample(2000, 0x401238, 2));
        w.checkpoint();
        w.write(sample(3000, 0x402000, 2));  // after it: lost with the process
        // Destroyed without finish(), as when its process is killed.
    }
    const auto f = slurp(path);
    CHECK(at<std::uint64_t>(f, 48) == bytes + 2 * 64);  // the data section's size
    CHECK(std::memcmp(f.data(), "PERFILE2", 8) == 0);
    if (std::system("perf --version >/dev/null 2>&1") != 0) {
        WARN("perf is not installed: not checked");
        std::remove(path.c_str());
        return;
    }
    int status = 0;
    const auto script = run("perf script -f -i " + path + " 2>&1", &status);
    INFO(script);
    CHECK(WEXITSTATUS(status) == 0);
    CHECK_THAT(script, Catch::Contains("synthproc"));
    CHECK_THAT(script, Catch::Contains("401238"));
    CHECK_THAT(script, !Catch::Contains("402000"));
    std::remove(path.c_str());
}
