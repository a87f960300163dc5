// SPDX-License-Identifier: MIT
#include "archpmu/perf_data.hpp"

#include <fcntl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <utility>

#include "archpmu.h"
#include "archpmu/error.hpp"
#include "build_id.hpp"

namespace archpmu {
namespace {

constexpr std::size_t kBufferSize = 1 << 16;
constexpr std::size_t kNameAlign = 64;  // perf pads header strings to this
// Where an MMAP and an MMAP2 record have the file's name.
constexpr std::size_t kMmapName = 40;
constexpr std::size_t kMmap2Name = 72;
// perf's struct perf_record_header_build_id, before the name.
constexpr std::uint16_t kBuildIdEventSize = 36;
// perf_record_header_build_id's header.misc: its size byte is set (perf 5.12 on).
constexpr std::uint16_t kMiscBuildIdSize = 1U << 15;
constexpr std::uint32_t kRecordSample = PERF_RECORD_SAMPLE;

struct FileSection {
    std::uint64_t offset;
    std::uint64_t size;
};

struct FileHeader {
    char magic[8];
    std::uint64_t size;
    std::uint64_t attr_size;
    FileSection attrs;
    FileSection data;
    FileSection event_types;
    std::uint64_t flags[4];  // the feature bitmap: flags and flags1[3]
};
static_assert(sizeof(FileHeader) == kPerfFileHeaderSize, "struct perf_file_header");

// A feature section's content, built in memory.
class Blob {
public:
    template <typename T>
    void put(const T& v)
    {
        const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
        bytes.insert(bytes.end(), p, p + sizeof(v));
    }
    // What a name takes in perf's header: its NUL, padded to kNameAlign.
    static std::size_t padded_size(const std::string& s)
    {
        return (s.size() + 1 + kNameAlign - 1) / kNameAlign * kNameAlign;
    }
    // The name NUL-padded to padded_size().
    void put_padded(const std::string& s)
    {
        bytes.insert(bytes.end(), s.begin(), s.end());
        bytes.resize(bytes.size() + padded_size(s) - s.size(), 0);
    }
    // struct perf_header_string: u32 len, then the string NUL-padded to len.
    void put_string(const std::string& s)
    {
        put(static_cast<std::uint32_t>(padded_size(s)));
        put_padded(s);
    }
    std::vector<std::uint8_t> bytes;
};

utsname host_uname()
{
    utsname u{};
    if (::uname(&u) != 0)
        std::strcpy(u.nodename, "unknown");
    return u;
}

std::uint64_t clock_ns(clockid_t clock)
{
    timespec ts{};
    ::clock_gettime(clock, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ULL +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

// The value of the first "key<tabs>: value" line of /proc/cpuinfo.
std::string cpuinfo(const std::string& key)
{
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos)
            continue;
        auto name = line.substr(0, colon);
        name.erase(name.find_last_not_of(" \t") + 1);
        if (name == key)
            return line.substr(std::min(line.size(), colon + 2));
    }
    return {};
}

// The generic perf event an architectural event is, or -1.
long hardware_config(std::uint64_t config)
{
    constexpr std::uint64_t kRing = ARCHPMU_EVTSEL_USR | ARCHPMU_EVTSEL_OS;
    if ((config & ~(kRing | ARCHPMU_EVTSEL_EVENT | ARCHPMU_EVTSEL_UMASK)) != 0)
        return -1;
    switch (config & 0xffff) {
        case 0x003c:
            return PERF_COUNT_HW_CPU_CYCLES;
        case 0x00c0:
            return PERF_COUNT_HW_INSTRUCTIONS;
        case 0x013c:
            return PERF_COUNT_HW_REF_CPU_CYCLES;
        case 0x4f2e:
            return PERF_COUNT_HW_CACHE_REFERENCES;
        case 0x412e:
            return PERF_COUNT_HW_CACHE_MISSES;
        case 0x00c4:
            return PERF_COUNT_HW_BRANCH_INSTRUCTIONS;
        case 0x00c5:
            return PERF_COUNT_HW_BRANCH_MISSES;
        default:
            return -1;
    }
}

// perf's PERF_TYPE_HW_CACHE config of a cache event (cache_events.hpp's names):
// cache | operation << 8 | result << 16, as perf writes its cache events' attrs.
std::uint64_t hw_cache_config(std::string_view name)
{
    const auto at = [&](std::string_view prefix) { return name.rfind(prefix, 0) == 0; };
    const std::uint64_t cache = at("L1-dcache")   ? PERF_COUNT_HW_CACHE_L1D
                                : at("L1-icache") ? PERF_COUNT_HW_CACHE_L1I
                                : at("LLC")       ? PERF_COUNT_HW_CACHE_LL
                                : at("dTLB")      ? PERF_COUNT_HW_CACHE_DTLB
                                                  : PERF_COUNT_HW_CACHE_ITLB;
    const bool prefetch = name.find("-prefetch") != std::string_view::npos;
    const bool miss = name.find("-misses") != std::string_view::npos;
    return cache |
           static_cast<std::uint64_t>(prefetch ? PERF_COUNT_HW_CACHE_OP_PREFETCH
                                               : PERF_COUNT_HW_CACHE_OP_READ)
               << 8 |
           static_cast<std::uint64_t>(miss ? PERF_COUNT_HW_CACHE_RESULT_MISS
                                           : PERF_COUNT_HW_CACHE_RESULT_ACCESS)
               << 16;
}

UniqueFd create_file(const std::string& path)
{
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (!fd.valid())
        throw Error(errno, "cannot create " + path);
    return fd;
}

}  // namespace

PerfDataInfo host_perf_data_info(std::vector<std::string> cmdline)
{
    PerfDataInfo info;
    const utsname u = host_uname();
    info.hostname = u.nodename;
    info.os_release = u.release;
    info.arch = u.machine;
    info.cpu_desc = cpuinfo("model name");
    const std::string vendor = cpuinfo("vendor_id");
    if (!vendor.empty())
        info.cpu_id = vendor + "," + cpuinfo("cpu family") + "," + cpuinfo("model") + "," +
                      cpuinfo("stepping");
    info.nr_cpus_available = static_cast<std::uint32_t>(::sysconf(_SC_NPROCESSORS_CONF));
    info.nr_cpus_online = static_cast<std::uint32_t>(::sysconf(_SC_NPROCESSORS_ONLN));
    info.cmdline = std::move(cmdline);
    info.monotonic_ns = clock_ns(CLOCK_MONOTONIC);
    info.wall_clock_ns = clock_ns(CLOCK_REALTIME);
    return info;
}

perf_event_attr perf_attr_for(const EventSpec& event, bool read_group, bool callchain)
{
    perf_event_attr a{};
    a.size = sizeof(a);
    const std::uint64_t config = event.config;
    const long hw = hardware_config(config);
    if (!event.cache_event.empty()) {
        a.type = PERF_TYPE_HW_CACHE;
        a.config = hw_cache_config(event.cache_event);
    } else if (hw >= 0) {
        a.type = PERF_TYPE_HARDWARE;
        a.config = static_cast<std::uint64_t>(hw);
    } else {
        a.type = PERF_TYPE_RAW;
        a.config = config & ~(ARCHPMU_EVTSEL_USR | ARCHPMU_EVTSEL_OS | ARCHPMU_EVTSEL_INT |
                              ARCHPMU_EVTSEL_EN);
    }
    if (event.sample.freq_hz) {
        a.freq = 1;
        a.sample_freq = event.sample.freq_hz;
    } else {
        a.sample_period = event.sample.period;
    }
    a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                    PERF_SAMPLE_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
    if (read_group) {
        a.sample_type |= PERF_SAMPLE_READ;
        a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
    }
    if (callchain)
        a.sample_type |= PERF_SAMPLE_CALLCHAIN;
    // Neither USR nor OS counts at both.
    const bool usr = (config & ARCHPMU_EVTSEL_USR) != 0;
    const bool os = (config & ARCHPMU_EVTSEL_OS) != 0;
    a.exclude_user = (!usr && os) ? 1 : 0;
    a.exclude_kernel = (usr && !os) ? 1 : 0;
    a.exclude_hv = a.exclude_kernel;
    a.sample_id_all = 1;
    a.use_clockid = 1;
    a.clockid = CLOCK_MONOTONIC;
    return a;
}

perf_event_attr perf_attr_for(const EventSpec& event, const SamplingOptions& sampling)
{
    perf_event_attr a = perf_attr_for(event, sampling.read_group, sampling.callchain);
    if (sampling.user_stack) {
        a.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
        a.sample_regs_user = ARCHPMU_SAMPLE_REGS_USER_MASK;
        a.sample_stack_user = sampling.user_stack;
        a.exclude_callchain_user = sampling.callchain ? 1 : 0;
    }
    return a;
}

PerfDataWriter::PerfDataWriter(const std::string& path, std::vector<PerfEventDesc> events,
                               PerfDataInfo info)
    : PerfDataWriter(create_file(path), path, std::move(events), std::move(info))
{
}

PerfDataWriter::PerfDataWriter(UniqueFd fd, std::string name, std::vector<PerfEventDesc> events,
                               PerfDataInfo info)
    : path_(std::move(name)), events_(std::move(events)), info_(std::move(info)), fd_(std::move(fd))
{
    buf_.reserve(kBufferSize);
    // The header (rewritten at finish), each event's ids, the attributes, the data.
    const FileHeader placeholder{};
    put(&placeholder, sizeof(placeholder));
    std::vector<FileSection> id_sections;
    for (const auto& e : events_) {
        id_sections.push_back(FileSection{offset_, e.ids.size() * sizeof(std::uint64_t)});
        put(e.ids.data(), e.ids.size() * sizeof(std::uint64_t));
    }
    attrs_offset_ = offset_;
    for (std::size_t i = 0; i < events_.size(); ++i) {
        perf_event_attr a = events_[i].attr;
        a.size = sizeof(a);
        events_[i].attr = a;
        put(&a, sizeof(a));
        put(&id_sections[i], sizeof(FileSection));
    }
    data_offset_ = offset_;
}

void PerfDataWriter::put(const void* data, std::size_t size)
{
    const auto* p = static_cast<const std::uint8_t*>(data);
    offset_ += size;
    if (buf_.size() + size > kBufferSize)
        flush();
    if (size >= kBufferSize) {  // straight from where it lies
        write_all(p, size);
        return;
    }
    buf_.insert(buf_.end(), p, p + size);
}

void PerfDataWriter::flush()
{
    write_all(buf_.data(), buf_.size());
    buf_.clear();
}

void PerfDataWriter::write_all(const std::uint8_t* data, std::size_t size)
{
    std::size_t done = 0;
    while (done < size) {
        const ssize_t n = ::write(fd_.get(), data + done, size - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throw Error(errno, "cannot write " + path_);
        done += static_cast<std::size_t>(n);
    }
}

void PerfDataWriter::pwrite_all(const void* data, std::size_t size, std::uint64_t offset)
{
    const auto* p = static_cast<const std::uint8_t*>(data);
    std::size_t done = 0;
    while (done < size) {
        const ssize_t n =
            ::pwrite(fd_.get(), p + done, size - done, static_cast<off_t>(offset + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throw Error(errno, "cannot write " + path_);
        done += static_cast<std::size_t>(n);
    }
}

void PerfDataWriter::note_mapping(std::uint32_t type, std::uint16_t misc, const std::uint8_t* bytes,
                                  std::size_t size)
{
    if ((misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL) {
        kernel_mapped_ = true;
        return;
    }
    const std::size_t name = type == PERF_RECORD_MMAP2 ? kMmap2Name : kMmapName;
    if (size <= name)
        return;
    const auto* text = reinterpret_cast<const char*>(bytes + name);
    const std::string file(text, ::strnlen(text, size - name));
    // Files only: not [vdso], [stack], //anon or a memfd.
    if (file.size() > 1 && file[0] == '/' && file[1] != '/')
        mapped_files_.insert(file);
}

void PerfDataWriter::write(const Record& record)
{
    if (finished_)
        throw Error(EINVAL, path_ + ": the perf.data writer is finished");
    if (record.bytes.size() < 8 || record.bytes.size() % 8 != 0)
        throw Error(EINVAL, path_ + ": a record of " + std::to_string(record.bytes.size()) +
                                " bytes (not a multiple of 8)");
    put(record.bytes.data(), record.bytes.size());
    data_size_ += record.bytes.size();
    if (record.type == kRecordSample)
        count_sample(record_time(record));
    else if (record.type == PERF_RECORD_MMAP || record.type == PERF_RECORD_MMAP2)
        note_mapping(record.type, record.misc, record.bytes.data(), record.bytes.size());
}

void PerfDataWriter::count_sample(std::uint64_t time) noexcept
{
    ++samples_;
    first_time_ = std::min(first_time_, time);
    last_time_ = std::max(last_time_, time);
}

void PerfDataWriter::write(const RingSpan& span)
{
    if (finished_)
        throw Error(EINVAL, path_ + ": the perf.data writer is finished");
    span.for_each([&](const RecordRef& r) {
        if (r.type() == kRecordSample) {
            count_sample(record_time(r));
        } else if (r.type() == PERF_RECORD_MMAP || r.type() == PERF_RECORD_MMAP2) {
            const Record copy = r.record();
            note_mapping(copy.type, copy.misc, copy.bytes.data(), copy.bytes.size());
        }
    });
    const RingSpan::Piece first = span.first();
    const RingSpan::Piece second = span.second();
    put(first.data, first.size);
    put(second.data, second.size);
    data_size_ += span.bytes();
}

void PerfDataWriter::write(const std::vector<Record>& records)
{
    for (const auto& r : records)
        write(r);
}

void PerfDataWriter::write_header(const std::uint64_t (&features)[4])
{
    FileHeader h{};
    std::memcpy(h.magic, "PERFILE2", 8);
    h.size = sizeof(FileHeader);
    h.attr_size = sizeof(perf_event_attr) + sizeof(FileSection);
    h.attrs = FileSection{attrs_offset_, events_.size() * h.attr_size};
    h.data = FileSection{data_offset_, data_size_};
    std::memcpy(h.flags, features, sizeof(h.flags));
    pwrite_all(&h, sizeof(h), 0);
}

void PerfDataWriter::checkpoint()
{
    if (finished_)
        throw Error(EINVAL, path_ + ": the perf.data writer is finished");
    flush();
    write_header({});
}

void PerfDataWriter::finish()
{
    if (finished_)
        return;
    finished_ = true;
    // Feature contents, by bit.
    std::vector<std::pair<unsigned, Blob>> features;
    const auto add = [&](unsigned bit) -> Blob& {
        features.emplace_back(bit, Blob{});
        return features.back().second;
    };
    {
        // perf's build_id_event: header, pid, the id in 20 bytes and its size, the name.
        Blob& b = add(kFeatBuildId);
        const auto put_build_id = [&b](const std::string& id, std::uint16_t misc,
                                       const std::string& name) {
            b.put(std::uint32_t{0});
            b.put(static_cast<std::uint16_t>(misc | kMiscBuildIdSize));
            b.put(static_cast<std::uint16_t>(kBuildIdEventSize + Blob::padded_size(name)));
            b.put(std::int32_t{-1});  // perf's HOST_KERNEL_ID: this machine's
            std::uint8_t data[24] = {};
            std::copy(id.begin(), id.end(), data);
            data[20] = static_cast<std::uint8_t>(id.size());
            b.put(data);
            b.put_padded(name);
        };
        const std::string kernel = kernel_mapped_ ? detail::kernel_build_id() : std::string();
        if (!kernel.empty())
            put_build_id(kernel, PERF_RECORD_MISC_KERNEL, "[kernel.kallsyms]");
        for (const auto& file : mapped_files_) {
            const std::string id = detail::elf_build_id(file);
            // A name perf's u16 record size cannot hold is left out.
            if (!id.empty() && file.size() < 60000)
                put_build_id(id, PERF_RECORD_MISC_USER, file);
        }
    }
    add(kFeatHostname).put_string(info_.hostname);
    add(kFeatOsRelease).put_string(info_.os_release);
    add(kFeatVersion).put_string(info_.version);
    add(kFeatArch).put_string(info_.arch);
    {
        Blob& b = add(kFeatNrCpus);
        b.put(info_.nr_cpus_available);
        b.put(info_.nr_cpus_online);
    }
    if (!info_.cpu_desc.empty())
        add(kFeatCpuDesc).put_string(info_.cpu_desc);
    if (!info_.cpu_id.empty())
        add(kFeatCpuId).put_string(info_.cpu_id);
    {
        Blob& b = add(kFeatCmdline);
        b.put(static_cast<std::uint32_t>(info_.cmdline.size()));
        for (const auto& arg : info_.cmdline)
            b.put_string(arg);
    }
    {
        Blob& b = add(kFeatEventDesc);
        b.put(static_cast<std::uint32_t>(events_.size()));
        b.put(static_cast<std::uint32_t>(sizeof(perf_event_attr)));
        for (const auto& e : events_) {
            b.put(e.attr);
            b.put(static_cast<std::uint32_t>(e.ids.size()));
            b.put_string(e.name);
            for (const auto id : e.ids)
                b.put(id);
        }
    }
    {
        Blob& b = add(kFeatSampleTime);
        b.put(samples_ ? first_time_ : std::uint64_t{0});
        b.put(last_time_);
    }
    add(kFeatClockId).put(std::uint64_t{1});  // the clock's resolution in ns
    {
        Blob& b = add(kFeatClockData);
        b.put(std::uint32_t{1});  // version
        b.put(static_cast<std::uint32_t>(CLOCK_MONOTONIC));
        b.put(info_.wall_clock_ns);
        b.put(info_.monotonic_ns);
    }

    // The section table follows the data, then the contents.
    std::uint64_t flags[4] = {};
    std::uint64_t at = offset_ + features.size() * sizeof(FileSection);
    std::vector<FileSection> table;
    for (const auto& [bit, blob] : features) {
        flags[bit / 64] |= 1ULL << (bit % 64);
        table.push_back(FileSection{at, blob.bytes.size()});
        at += blob.bytes.size();
    }
    put(table.data(), table.size() * sizeof(FileSection));
    for (const auto& f : features)
        put(f.second.bytes.data(), f.second.bytes.size());
    flush();
    write_header(flags);
    if (::fsync(fd_.get()) != 0 && errno != EINVAL)
        throw Error(errno, "cannot write " + path_);
    fd_.reset();
}

}  // namespace archpmu
