// SPDX-License-Identifier: MIT
#include "archpmu/sampling.hpp"

#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <utility>

#include "archpmu.h"
#include "archpmu/device.hpp"
#include "archpmu/error.hpp"
#include "ioctl_cmd.hpp"
#include "session_detail.hpp"

namespace archpmu {
namespace {

static_assert(offsetof(archpmu_ring_page, data_head) == 1024, "perf's data_head offset");
static_assert(offsetof(archpmu_ring_page, data_tail) == 1032, "perf's data_tail offset");

// The refusals only sampling has, else the counting ones.
std::string sampling_refusal(int err, const archpmu_count_open& cmd,
                             const std::vector<SampledEvent>& events,
                             const std::vector<archpmu_event>& evs)
{
    const bool named = cmd.bad_event < events.size();
    const std::string ev = named ? "event '" + events[cmd.bad_event].event.name + "'" : "";
    const std::string on = cmd.bad_cpu == ~0U ? "" : " on CPU " + std::to_string(cmd.bad_cpu);
    if (err == ERANGE)
        return (named ? ev : std::string("an event")) + on +
               ": the sampling period is above what its counter takes, or the frequency above "
               "the module's sample_max_rate";
    if (err == EINVAL && !named)
        return "the sampling request was refused: ring pages must be a power of 2 up to " +
               std::to_string(ARCHPMU_RING_MAX_PAGES) +
               ", a frequency more than 0, and group reads need a sampling event";
    return detail::open_refusal(err, cmd, named ? events[cmd.bad_event].event.name : "?",
                                named ? &evs[cmd.bad_event] : nullptr);
}

}  // namespace

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

SamplingSession::SamplingSession(const std::string& device_path, std::vector<SampledEvent> events,
                                 const SamplingOptions& options)
    : events_(std::move(events)), read_group_(options.read_group)
{
    UniqueFd device = open_device_file(device_path);
    const std::uint64_t caps = detail::capabilities(device.get());
    if ((caps & ARCHPMU_CAP_SAMPLE) == 0 || (caps & ARCHPMU_CAP_SESSION_FD) == 0)
        throw Error(EOPNOTSUPP,
                    "the archpmu module cannot sample (no ARCHPMU_CAP_SAMPLE); load a newer "
                    "module");
    const std::uint32_t pages =
        options.ring_pages ? options.ring_pages : ARCHPMU_RING_DEFAULT_PAGES;
    if ((pages & (pages - 1)) != 0 || pages > ARCHPMU_RING_MAX_PAGES)
        throw Error(EINVAL, "ring pages must be a power of 2 up to " +
                                std::to_string(ARCHPMU_RING_MAX_PAGES));

    std::vector<EventSpec> specs;
    for (const auto& e : events_)
        specs.push_back(e.event);
    std::vector<archpmu_event> evs = detail::module_events(device.get(), caps, specs, options.cpus);
    std::vector<archpmu_sample_event> sevs(events_.size());
    for (std::size_t i = 0; i < events_.size(); ++i) {
        const auto& e = events_[i];
        if (e.sample.period && e.sample.freq_hz)
            throw Error(EINVAL, "event '" + e.event.name + "': give a period or a frequency");
        sevs[i].period = e.sample.freq_hz ? e.sample.freq_hz : e.sample.period;
        sevs[i].flags = e.sample.freq_hz ? ARCHPMU_SAMPLE_FREQ : 0;
        sevs[i].id = e.sample.id.value_or(kSampleIdBase + (i + 1) * kSampleIdStride);
        ids_.push_back(sevs[i].id);
    }
    auto cmd = detail::zeroed_cmd<archpmu_count_open>();
    cmd.flags = ARCHPMU_COUNT_OPEN_FD;
    cmd.nr_events = static_cast<std::uint32_t>(evs.size());
    cmd.nr_cpus = static_cast<std::uint32_t>(options.cpus.size());
    cmd.events = reinterpret_cast<std::uintptr_t>(evs.data());
    cmd.cpus = reinterpret_cast<std::uintptr_t>(options.cpus.data());
    cmd.sample_events = reinterpret_cast<std::uintptr_t>(sevs.data());
    cmd.sample_flags = options.read_group ? ARCHPMU_SAMPLE_READ : 0;
    cmd.ring_pages = pages;
    cmd.wakeup_bytes = options.wakeup_bytes;
    const int ret = ::ioctl(device.get(), ARCHPMU_IOC_COUNT_OPEN, &cmd);
    if (ret < 0) {
        const int err = errno;
        throw Error(err, sampling_refusal(err, cmd, events_, evs));
    }
    fd_ = UniqueFd(ret);

    page_size_ = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t length = (1 + static_cast<std::size_t>(pages)) * page_size_;
    for (std::uint32_t i = 0; i < cmd.nr_cpus_opened; ++i) {
        rings_.emplace_back(fd_.get(), length, static_cast<std::uint64_t>(i) * length,
                            "mmap of the ring of the session's CPU number " + std::to_string(i));
        const auto* page = reinterpret_cast<const archpmu_ring_page*>(rings_.back().data());
        cpus_.push_back(page->cpu);
    }
}

void SamplingSession::control(unsigned long request, const char* what)
{
    auto cmd = detail::zeroed_cmd<archpmu_count_ctl>();
    detail::checked_ioctl(fd_.get(), request, &cmd, what);
}

void SamplingSession::start()
{
    control(ARCHPMU_IOC_COUNT_START, "ARCHPMU_IOC_COUNT_START");
}

void SamplingSession::stop()
{
    control(ARCHPMU_IOC_COUNT_STOP, "ARCHPMU_IOC_COUNT_STOP");
}

void SamplingSession::reset()
{
    control(ARCHPMU_IOC_COUNT_RESET, "ARCHPMU_IOC_COUNT_RESET");
}

Snapshot SamplingSession::read() const
{
    std::vector<archpmu_count_value> raw(cpus_.size() * events_.size());
    auto cmd = detail::zeroed_cmd<archpmu_count_read>();
    cmd.nr_values = static_cast<std::uint32_t>(raw.size());
    cmd.values = reinterpret_cast<std::uintptr_t>(raw.data());
    detail::checked_ioctl(fd_.get(), ARCHPMU_IOC_COUNT_READ, &cmd, "ARCHPMU_IOC_COUNT_READ");
    Snapshot snap;
    snap.timestamp_ns = cmd.timestamp_ns;
    for (std::uint32_t i = 0; i < cmd.nr_values; ++i) {
        const auto& r = raw[i];
        snap.values.push_back(
            CountValue{r.cpu, r.event, r.counter, (r.flags & ARCHPMU_VALUE_OFFLINE) != 0, r.value,
                       r.time_enabled, r.time_running, (r.flags & ARCHPMU_VALUE_INCOMPLETE) != 0});
    }
    return snap;
}

bool SamplingSession::wait(int timeout_ms) const
{
    pollfd p{fd_.get(), POLLIN, 0};
    const int n = ::poll(&p, 1, timeout_ms);
    if (n < 0 && errno != EINTR)
        throw Error(errno, "poll on the sampling session");
    return n > 0 && (p.revents & POLLIN);
}

std::size_t SamplingSession::drain(const std::function<void(std::size_t ring, Record&&)>& sink)
{
    std::size_t total = 0;
    for (std::size_t i = 0; i < rings_.size(); ++i) {
        bool corrupt = false;
        total += read_ring(
            rings_[i].ring(page_size_), [&](Record&& r) { sink(i, std::move(r)); }, &corrupt);
        corrupt_ += corrupt ? 1 : 0;
    }
    return total;
}

std::vector<Record> SamplingSession::drain_merged()
{
    std::vector<std::vector<Record>> per_ring(rings_.size());
    drain([&](std::size_t ring, Record&& r) { per_ring[ring].push_back(std::move(r)); });
    return merge_by_time(std::move(per_ring));
}

std::vector<std::uint64_t> SamplingSession::cpu_ids(std::size_t event) const
{
    std::vector<std::uint64_t> out;
    out.reserve(cpus_.size());
    for (const std::uint32_t cpu : cpus_)
        out.push_back(ids_.at(event) + cpu);
    return out;
}

std::vector<RingStats> SamplingSession::ring_stats() const
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

}  // namespace archpmu
