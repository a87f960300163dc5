// SPDX-License-Identifier: MIT
// Session's rings (session.hpp), and the mapping they live in (sampling.hpp).
#include "archpmu/sampling.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include "archpmu.h"
#include "archpmu/error.hpp"
#include "archpmu/session.hpp"
#include "archpmu/sideband.hpp"
#include "archpmu/unique_fd.hpp"

namespace archpmu {

static_assert(offsetof(archpmu_ring_page, data_head) == 1024, "perf's data_head offset");
static_assert(offsetof(archpmu_ring_page, data_tail) == 1032, "perf's data_tail offset");

Mapping::Mapping(int fd, std::size_t length, std::uint64_t offset, const std::string& what)
{
    void* p =
        ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(offset));
    if (p == MAP_FAILED)
        throw Error(errno, what);
    addr_ = static_cast<std::uint8_t*>(p);
    length_ = length;
}

Mapping::Mapping(Mapping&& other) noexcept
    : addr_(std::exchange(other.addr_, nullptr)), length_(std::exchange(other.length_, 0))
{
}

Mapping& Mapping::operator=(Mapping&& other) noexcept
{
    if (this != &other) {
        reset();
        addr_ = std::exchange(other.addr_, nullptr);
        length_ = std::exchange(other.length_, 0);
    }
    return *this;
}

Mapping::~Mapping()
{
    reset();
}

void Mapping::reset() noexcept
{
    if (addr_)
        ::munmap(addr_, length_);
    addr_ = nullptr;
    length_ = 0;
}

RingMemory Mapping::ring(std::size_t page_size) const noexcept
{
    RingMemory r;
    r.control = addr_;
    r.data = addr_ + page_size;
    r.data_size = length_ - page_size;
    return r;
}

void Session::map_rings(std::uint32_t pages)
{
    page_size_ = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t length = (1 + static_cast<std::size_t>(pages)) * page_size_;
    for (std::uint32_t i = 0; i < cpu_count_; ++i) {
        rings_.emplace_back(fd_.get(), length, static_cast<std::uint64_t>(i) * length,
                            "mmap of the ring of the session's CPU number " + std::to_string(i));
        const auto* page = reinterpret_cast<const archpmu_ring_page*>(rings_.back().data());
        cpus_.push_back(page->cpu);
    }
}

void Session::need_rings(const char* what) const
{
    if (rings_.empty())
        throw Error(EINVAL,
                    std::string(what) + ": the session has no rings (SessionOptions::sampling)");
}

bool Session::wait(int timeout_ms) const
{
    need_rings("wait");
    pollfd p{fd_.get(), POLLIN, 0};
    const int n = ::poll(&p, 1, timeout_ms);
    if (n < 0 && errno != EINTR)
        throw Error(errno, "poll on the sampling session");
    return n > 0 && (p.revents & POLLIN);
}

std::size_t Session::drain(const std::function<void(std::size_t ring, Record&&)>& sink)
{
    need_rings("drain");
    return drain_spans([&](std::size_t ring, const RingSpan& span) {
        span.for_each([&](const RecordRef& ref) { sink(ring, ref.record()); });
    });
}

std::size_t Session::drain_spans(const std::function<void(std::size_t ring, const RingSpan&)>& sink)
{
    need_rings("drain_spans");
    std::size_t total = 0;
    for (std::size_t i = 0; i < rings_.size(); ++i) {
        bool corrupt = false;
        total += read_ring_span(
            rings_[i].ring(page_size_), [&](const RingSpan& span) { sink(i, span); }, &corrupt);
        corrupt_ += corrupt ? 1 : 0;
    }
    return total;
}

std::vector<Record> Session::drain_merged()
{
    std::vector<std::vector<Record>> per_ring(rings_.size());
    drain([&](std::size_t ring, Record&& r) { per_ring[ring].push_back(std::move(r)); });
    return merge_by_time(std::move(per_ring));
}

std::vector<std::uint64_t> Session::cpu_ids(std::size_t event) const
{
    need_rings("cpu_ids");
    if (event >= ids_.size())
        throw Error(EINVAL, "cpu_ids: no event " + std::to_string(event) + " in the session");
    std::vector<std::uint64_t> out;
    out.reserve(cpus_.size());
    for (const std::uint32_t cpu : cpus_)
        out.push_back(ids_[event] + cpu);
    return out;
}

std::vector<RingStats> Session::ring_stats() const
{
    std::vector<RingStats> out;
    for (const auto& m : rings_) {
        const auto* page = reinterpret_cast<const archpmu_ring_page*>(m.data());
        RingStats s;
        s.cpu = __atomic_load_n(&page->cpu, __ATOMIC_RELAXED);
        s.samples = __atomic_load_n(&page->samples, __ATOMIC_RELAXED);
        s.lost = __atomic_load_n(&page->lost, __ATOMIC_RELAXED);
        s.throttled = __atomic_load_n(&page->throttled, __ATOMIC_RELAXED);
        out.push_back(s);
    }
    return out;
}

namespace {

// A decimal file of the CPU's archpmu directory; nothing when it is not there, or
// went away as it was read (the CPU went offline, the module was unloaded).
std::optional<std::uint64_t> cpu_total(std::uint32_t cpu, const char* name)
{
    const std::string path =
        "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/archpmu/" + name;
    const auto gone = [](int err) { return err == ENOENT || err == ENODEV; };
    const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) {
        if (gone(errno))
            return std::nullopt;
        throw Error(errno, "reading " + path);
    }
    char text[32] = {};
    const ssize_t n = ::read(fd.get(), text, sizeof(text) - 1);
    if (n < 0) {
        if (gone(errno))
            return std::nullopt;
        throw Error(errno, "reading " + path);
    }
    char* end = nullptr;
    errno = 0;
    const unsigned long long value = std::strtoull(text, &end, 10);
    if (n == 0 || end == text || (*end != '\n' && *end != '\0') || errno != 0)
        throw Error(EIO, "reading " + path + ": not a number");
    return value;
}

}  // namespace

std::vector<CpuSamplingTotals> sampling_totals()
{
    std::vector<CpuSamplingTotals> out;
    for (const std::uint32_t cpu : online_cpus()) {
        const auto throttled = cpu_total(cpu, "throttled");
        const auto lost = cpu_total(cpu, "lost_samples");
        // A CPU going offline or the module leaving between the two reads.
        if (throttled && lost)
            out.push_back({cpu, *throttled, *lost});
    }
    return out;
}

}  // namespace archpmu
