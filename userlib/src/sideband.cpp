// SPDX-License-Identifier: MIT
#include "archpmu/sideband.hpp"

#include <dirent.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <utility>

#include "archpmu/error.hpp"
#include "archpmu/pmu.hpp"

namespace archpmu {
namespace {

// Builds one record: header, fields, then the sample_id trailer.
class Builder {
public:
    Builder(std::uint32_t type, std::uint16_t misc) : type_(type), misc_(misc) { bytes_.resize(8); }
    template <typename T>
    void put(const T& v)
    {
        const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
        bytes_.insert(bytes_.end(), p, p + sizeof(v));
    }
    // A NUL-terminated string padded with NULs to 8 bytes.
    void put_string(const std::string& s)
    {
        bytes_.insert(bytes_.end(), s.begin(), s.end());
        bytes_.resize((bytes_.size() + 1 + 7) / 8 * 8, 0);
    }
    Record finish(std::uint32_t pid, std::uint32_t tid, std::uint64_t time, std::uint64_t id,
                  std::uint32_t cpu = 0)
    {
        put(pid);
        put(tid);
        put(time);
        put(id);
        put(cpu);
        put(std::uint32_t{0});  // res
        put(id);                // identifier
        const auto size = static_cast<std::uint16_t>(bytes_.size());
        std::memcpy(bytes_.data(), &type_, 4);
        std::memcpy(bytes_.data() + 4, &misc_, 2);
        std::memcpy(bytes_.data() + 6, &size, 2);
        Record r;
        r.type = type_;
        r.misc = misc_;
        r.bytes = std::move(bytes_);
        return r;
    }

private:
    std::uint32_t type_;
    std::uint16_t misc_;
    std::vector<std::uint8_t> bytes_;
};

std::string read_file(const std::string& path)
{
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

bool all_digits(const char* s)
{
    if (!*s)
        return false;
    for (; *s; ++s)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

// The numeric entries of a /proc directory.
std::vector<std::uint32_t> numeric_entries(const std::string& dir)
{
    std::vector<std::uint32_t> out;
    DIR* d = ::opendir(dir.c_str());
    if (!d)
        return out;
    while (const dirent* e = ::readdir(d))
        if (all_digits(e->d_name))
            out.push_back(static_cast<std::uint32_t>(std::stoul(e->d_name)));
    ::closedir(d);
    return out;
}

// The address of _text (or _stext) in /proc/kallsyms, 0 when hidden.
std::uint64_t kernel_text()
{
    std::ifstream in("/proc/kallsyms");
    std::string addr;
    std::string kind;
    std::string name;
    std::uint64_t stext = 0;
    while (in >> addr >> kind >> name) {
        in.ignore(1 << 20, '\n');
        if (name == "_text")
            return std::stoull(addr, nullptr, 16);
        if (name == "_stext")
            stext = std::stoull(addr, nullptr, 16);
    }
    return stext;
}

}  // namespace

perf_event_attr sideband_attr()
{
    perf_event_attr a{};
    a.size = sizeof(a);
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_DUMMY;
    a.sample_period = 1;
    a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
                    PERF_SAMPLE_CPU;
    a.comm = 1;
    a.comm_exec = 1;
    a.mmap = 1;
    a.mmap2 = 1;
    a.task = 1;
    a.sample_id_all = 1;
    a.use_clockid = 1;
    a.clockid = CLOCK_MONOTONIC;
    a.watermark = 1;
    a.wakeup_watermark = 4096;
    return a;
}

Sideband::Sideband(std::vector<std::uint32_t> cpus, std::uint32_t ring_pages,
                   const std::vector<SidebandTarget>& targets, bool data_maps)
    : cpus_(std::move(cpus)), page_size_(static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)))
{
    const std::vector<SidebandTarget> everyone{SidebandTarget{-1, false}};
    const std::vector<SidebandTarget>& whom = targets.empty() ? everyone : targets;
    const bool tasks = !targets.empty();
    const std::size_t length = (1 + static_cast<std::size_t>(ring_pages)) * page_size_;
    for (const auto cpu : cpus_) {
        int owner = -1;
        for (const auto& target : whom) {
            perf_event_attr attr = sideband_attr();
            attr.mmap_data = data_maps ? 1 : 0;
            if (tasks) {
                attr.inherit = 1;
                attr.exclude_kernel = 1;  // a dummy counts nothing: this lets paranoid 2 allow it
                attr.enable_on_exec = target.enable_on_exec ? 1 : 0;
                attr.disabled = attr.enable_on_exec;
            }
            if (owner < 0)
                attr_ = attr;
            const long fd = ::syscall(SYS_perf_event_open, &attr, target.tid, static_cast<int>(cpu),
                                      -1, PERF_FLAG_FD_CLOEXEC);
            if (fd < 0 && tasks && errno == ESRCH)
                continue;  // a thread that has exited since it was listed
            if (fd < 0) {
                const int err = errno;
                throw Error(err, "perf_event_open of the side-band dummy event on CPU " +
                                     std::to_string(cpu) +
                                     (tasks ? " for thread " + std::to_string(target.tid) +
                                                  " (needs kernel.perf_event_paranoid <= 2, or "
                                                  "CAP_PERFMON)"
                                            : std::string(" (needs CAP_PERFMON or "
                                                          "kernel.perf_event_paranoid <= 0)")));
            }
            fds_.emplace_back(static_cast<int>(fd));
            std::uint64_t id = 0;
            if (::ioctl(static_cast<int>(fd), PERF_EVENT_IOC_ID, &id) != 0)
                throw Error(errno, "PERF_EVENT_IOC_ID of the side-band event");
            ids_.push_back(id);
            if (owner >= 0) {
                if (::ioctl(static_cast<int>(fd), PERF_EVENT_IOC_SET_OUTPUT, owner) != 0)
                    throw Error(errno, "PERF_EVENT_IOC_SET_OUTPUT of the side-band event");
                continue;
            }
            owner = static_cast<int>(fd);
            owners_.push_back(owner);
            rings_.emplace_back(owner, length, 0,
                                "mmap of the side-band ring of CPU " + std::to_string(cpu));
        }
    }
}

std::vector<int> Sideband::fds() const
{
    return owners_;
}

std::size_t Sideband::drain(const std::function<void(Record&&)>& sink)
{
    return drain_spans([&](const RingSpan& span) {
        span.for_each([&](const RecordRef& ref) { sink(ref.record()); });
    });
}

std::size_t Sideband::drain_spans(const std::function<void(const RingSpan&)>& sink)
{
    std::size_t n = 0;
    for (const auto& m : rings_)
        n += read_ring_span(m.ring(page_size_), sink);
    return n;
}

Record make_comm_record(std::uint32_t pid, std::uint32_t tid, const std::string& comm,
                        std::uint64_t time, std::uint64_t id)
{
    Builder b(PERF_RECORD_COMM, 0);
    b.put(pid);
    b.put(tid);
    b.put_string(comm.substr(0, 15));
    return b.finish(pid, tid, time, id);
}

Record make_mmap2_record(std::uint32_t pid, std::uint32_t tid, const MapEntry& map,
                         std::uint64_t time, std::uint64_t id)
{
    Builder b(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
    b.put(pid);
    b.put(tid);
    b.put(map.start);
    b.put(map.end - map.start);
    b.put(map.pgoff);
    b.put(map.maj);
    b.put(map.min);
    b.put(map.ino);
    b.put(std::uint64_t{0});  // ino_generation
    b.put(map.prot);
    b.put(map.flags);
    b.put_string(map.path);
    return b.finish(pid, tid, time, id);
}

Record make_kernel_mmap_record(std::uint64_t text, std::uint64_t time, std::uint64_t id)
{
    Builder b(PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL);
    const std::uint32_t pid = ~0U;  // perf's HOST_KERNEL_ID
    b.put(pid);
    b.put(std::uint32_t{0});
    b.put(text);
    b.put(~0ULL - text);
    b.put(text);  // pgoff: the reference symbol's address, for relocation
    b.put_string("[kernel.kallsyms]_text");
    return b.finish(pid, 0, time, id);
}

Record make_lost_samples_record(std::uint64_t lost, std::uint32_t cpu, std::uint64_t id)
{
    Builder b(PERF_RECORD_LOST_SAMPLES, 0);
    b.put(lost);
    return b.finish(0, 0, 0, id, cpu);
}

namespace {

std::vector<MapEntry> parse_maps(const std::string& maps_text, bool data);

}  // namespace

std::vector<MapEntry> parse_exec_maps(const std::string& maps_text)
{
    return parse_maps(maps_text, false);
}

std::vector<MapEntry> parse_file_maps(const std::string& maps_text)
{
    return parse_maps(maps_text, true);
}

namespace {

std::vector<MapEntry> parse_maps(const std::string& maps_text, bool data)
{
    std::vector<MapEntry> out;
    std::istringstream in(maps_text);
    std::string line;
    while (std::getline(in, line)) {
        // start-end perms offset maj:min inode [path]
        std::istringstream f(line);
        std::string range;
        std::string perms;
        std::string offset;
        std::string dev;
        MapEntry m;
        if (!(f >> range >> perms >> offset >> dev >> m.ino) || perms.size() < 4 ||
            (perms[2] != 'x' && !data))
            continue;
        std::string path;
        std::getline(f, path);
        path.erase(0, path.find_first_not_of(" \t"));
        if (path.empty() || (path[0] != '/' && path[0] != '['))
            continue;  // anonymous code (JITs): nothing to symbolise
        if (perms[2] != 'x' && path[0] != '/')
            continue;  // [heap], [stack]: no file to read
        const auto dash = range.find('-');
        const auto colon = dev.find(':');
        if (dash == std::string::npos || colon == std::string::npos)
            continue;
        try {
            m.start = std::stoull(range.substr(0, dash), nullptr, 16);
            m.end = std::stoull(range.substr(dash + 1), nullptr, 16);
            m.pgoff = std::stoull(offset, nullptr, 16);
            m.maj = static_cast<std::uint32_t>(std::stoul(dev.substr(0, colon), nullptr, 16));
            m.min = static_cast<std::uint32_t>(std::stoul(dev.substr(colon + 1), nullptr, 16));
        } catch (const std::exception&) {
            continue;
        }
        m.prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
                 (perms[2] == 'x' ? PROT_EXEC : 0);
        m.flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
        m.path = std::move(path);
        out.push_back(std::move(m));
    }
    return out;
}

}  // namespace

namespace {

void synthesize_kernel(std::vector<Record>& out, std::uint64_t time, std::uint64_t id,
                       std::vector<std::string>* warnings)
{
    const std::uint64_t text = kernel_text();
    if (text)
        out.push_back(make_kernel_mmap_record(text, time, id));
    else if (warnings)
        warnings->push_back(
            "the kernel's _text is hidden in /proc/kallsyms (kernel.kptr_restrict): kernel "
            "samples will not be symbolised");
}

// Every thread's COMM and the process's executable mappings; nothing if it is gone.
void synthesize_process(std::vector<Record>& out, std::uint32_t pid, std::uint64_t time,
                        std::uint64_t id, bool data_maps)
{
    const std::string dir = "/proc/" + std::to_string(pid);
    for (const auto tid : numeric_entries(dir + "/task")) {
        std::string comm = read_file(dir + "/task/" + std::to_string(tid) + "/comm");
        if (!comm.empty() && comm.back() == '\n')
            comm.pop_back();
        if (!comm.empty())
            out.push_back(make_comm_record(pid, tid, comm, time, id));
    }
    const std::string maps = read_file(dir + "/maps");
    for (const auto& m : data_maps ? parse_file_maps(maps) : parse_exec_maps(maps))
        out.push_back(make_mmap2_record(pid, pid, m, time, id));
}

}  // namespace

std::vector<Record> synthesize_system(std::uint64_t time, std::uint64_t id,
                                      std::vector<std::string>* warnings, bool data_maps)
{
    std::vector<Record> out;
    synthesize_kernel(out, time, id, warnings);
    for (const auto pid : numeric_entries("/proc"))
        synthesize_process(out, pid, time, id, data_maps);
    return out;
}

std::vector<Record> synthesize_processes(const std::vector<pid_t>& pids, std::uint64_t time,
                                         std::uint64_t id, std::vector<std::string>* warnings,
                                         bool data_maps)
{
    std::vector<Record> out;
    synthesize_kernel(out, time, id, warnings);
    for (const auto pid : pids)
        if (pid > 0)
            synthesize_process(out, static_cast<std::uint32_t>(pid), time, id, data_maps);
    return out;
}

std::vector<std::uint32_t> online_cpus()
{
    std::ifstream in("/sys/devices/system/cpu/online");
    std::string text;
    if (!std::getline(in, text))
        throw Error(errno ? errno : EIO, "reading /sys/devices/system/cpu/online");
    return parse_cpu_list(text);
}

}  // namespace archpmu
