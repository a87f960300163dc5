// SPDX-License-Identifier: MIT
#include "archpmu/records.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace archpmu {
namespace {

constexpr std::uint32_t kRecordSample = 9;  // PERF_RECORD_SAMPLE
constexpr std::uint16_t kMiscCpumodeMask = 7;
constexpr std::uint16_t kMiscKernel = 1;
constexpr std::size_t kHeaderSize = 8;
constexpr std::size_t kDataHeadOffset = 1024;
constexpr std::size_t kDataTailOffset = 1032;

template <typename T>
T load(const std::vector<std::uint8_t>& bytes, std::size_t offset)
{
    T v;
    std::memcpy(&v, bytes.data() + offset, sizeof(v));
    return v;
}

std::uint64_t* control_word(void* control, std::size_t offset)
{
    return reinterpret_cast<std::uint64_t*>(static_cast<std::uint8_t*>(control) + offset);
}

// Copies len bytes at ring position pos (modulo the size) into out.
void copy_out(const RingMemory& ring, std::uint64_t pos, std::size_t len, std::uint8_t* out)
{
    const std::uint64_t mask = ring.data_size - 1;
    const auto at = static_cast<std::size_t>(pos & mask);
    const std::size_t first = std::min<std::size_t>(len, ring.data_size - at);
    std::memcpy(out, ring.data + at, first);
    if (first < len)
        std::memcpy(out + first, ring.data, len - first);
}

}  // namespace

std::optional<Sample> parse_sample(const Record& record, bool read_group)
{
    // Without the format, what follows READ is taken for a call chain.
    SampleFormat format;
    format.read_group = read_group;
    format.callchain = true;
    return parse_sample(record, format);
}

std::optional<Sample> parse_sample(const Record& record, const SampleFormat& format)
{
    const auto& b = record.bytes;
    if (record.type != kRecordSample || b.size() < sample_offset::end)
        return std::nullopt;
    Sample s;
    s.ip = load<std::uint64_t>(b, sample_offset::ip);
    s.pid = load<std::uint32_t>(b, sample_offset::pid);
    s.tid = load<std::uint32_t>(b, sample_offset::tid);
    s.time = load<std::uint64_t>(b, sample_offset::time);
    s.id = load<std::uint64_t>(b, sample_offset::id);
    s.cpu = load<std::uint32_t>(b, sample_offset::cpu);
    s.period = load<std::uint64_t>(b, sample_offset::period);
    s.kernel = (record.misc & kMiscCpumodeMask) == kMiscKernel;
    std::size_t at = sample_offset::end;
    if (format.read_group) {
        if (b.size() < at + 8)
            return std::nullopt;
        const auto nr = load<std::uint64_t>(b, at);
        if (nr > (b.size() - at - 8) / 16)
            return std::nullopt;
        at += 8;
        for (std::uint64_t i = 0; i < nr; ++i, at += 16)
            s.values.push_back(
                GroupValue{load<std::uint64_t>(b, at), load<std::uint64_t>(b, at + 8)});
    }
    if (format.callchain && b.size() >= at + 8) {
        const auto nr = load<std::uint64_t>(b, at);
        if (nr > (b.size() - at - 8) / 8)
            return std::nullopt;
        at += 8;
        for (std::uint64_t i = 0; i < nr; ++i, at += 8)
            s.callchain.push_back(load<std::uint64_t>(b, at));
    }
    if (!format.user_stack)
        return s;
    // abi; regs (with a user context); size; data[size]; dyn_size (with a size).
    constexpr std::size_t kRegs = 20;
    if (b.size() < at + 8)
        return std::nullopt;
    const auto abi = load<std::uint64_t>(b, at);
    at += 8;
    if (abi != 0) {
        if (b.size() < at + kRegs * 8)
            return std::nullopt;
        for (std::size_t i = 0; i < kRegs; ++i, at += 8)
            s.user_regs.push_back(load<std::uint64_t>(b, at));
    }
    if (b.size() < at + 8)
        return std::nullopt;
    const auto size = load<std::uint64_t>(b, at);
    at += 8;
    if (size == 0)
        return s;
    if (size > b.size() - at || b.size() - at - size < 8)
        return std::nullopt;
    const auto dyn = load<std::uint64_t>(b, at + static_cast<std::size_t>(size));
    if (dyn > size)
        return std::nullopt;
    s.user_stack.assign(b.begin() + static_cast<std::ptrdiff_t>(at),
                        b.begin() + static_cast<std::ptrdiff_t>(at + dyn));
    return s;
}

std::optional<SampleId> parse_sample_id(const Record& record)
{
    const auto& b = record.bytes;
    if (record.type == kRecordSample || b.size() < kHeaderSize + kSampleIdSize)
        return std::nullopt;
    const std::size_t at = b.size() - kSampleIdSize;
    SampleId id;
    id.pid = load<std::uint32_t>(b, at);
    id.tid = load<std::uint32_t>(b, at + 4);
    id.time = load<std::uint64_t>(b, at + 8);
    id.id = load<std::uint64_t>(b, at + 16);
    id.cpu = load<std::uint32_t>(b, at + 24);
    return id;
}

std::uint64_t record_time(const Record& record)
{
    if (record.type == kRecordSample)
        return record.bytes.size() >= sample_offset::time + 8
                   ? load<std::uint64_t>(record.bytes, sample_offset::time)
                   : 0;
    const auto id = parse_sample_id(record);
    return id ? id->time : 0;
}

RecordRef::RecordRef(const RingMemory& ring, std::uint64_t pos) noexcept : ring_(&ring), pos_(pos)
{
    std::uint8_t hdr[kHeaderSize];
    copy_out(ring, pos, kHeaderSize, hdr);
    std::memcpy(&type_, hdr, 4);
    std::memcpy(&misc_, hdr + 4, 2);
    std::memcpy(&size_, hdr + 6, 2);
}

std::uint64_t RecordRef::u64(std::size_t offset) const noexcept
{
    std::uint64_t v = 0;
    if (offset + sizeof(v) <= size_)
        copy_out(*ring_, pos_ + offset, sizeof(v), reinterpret_cast<std::uint8_t*>(&v));
    return v;
}

std::uint32_t RecordRef::u32(std::size_t offset) const noexcept
{
    std::uint32_t v = 0;
    if (offset + sizeof(v) <= size_)
        copy_out(*ring_, pos_ + offset, sizeof(v), reinterpret_cast<std::uint8_t*>(&v));
    return v;
}

void RecordRef::copy(std::uint8_t* out) const noexcept
{
    copy_out(*ring_, pos_, size_, out);
}

Record RecordRef::record() const
{
    Record r;
    r.type = type_;
    r.misc = misc_;
    r.bytes.resize(size_);
    copy(r.bytes.data());
    return r;
}

std::uint64_t record_time(const RecordRef& record) noexcept
{
    if (record.type() == kRecordSample)
        return record.u64(sample_offset::time);
    if (record.size() < kHeaderSize + kSampleIdSize)
        return 0;
    return record.u64(record.size() - kSampleIdSize + 8);
}

RingSpan::Piece RingSpan::first() const noexcept
{
    const std::uint64_t mask = ring_->data_size - 1;
    const auto at = static_cast<std::size_t>(begin_ & mask);
    return Piece{ring_->data + at, std::min<std::size_t>(bytes(), ring_->data_size - at)};
}

RingSpan::Piece RingSpan::second() const noexcept
{
    return Piece{ring_->data, bytes() - first().size};
}

namespace {

// The end of the whole records from tail on, up to head; *count gets how many.
// A malformed record ends them (and sets *corrupt).
std::uint64_t whole_records_end(const RingMemory& ring, std::uint64_t tail, std::uint64_t head,
                                std::size_t* count, bool* corrupt)
{
    *count = 0;
    while (tail < head) {
        const std::uint16_t size = head - tail < kHeaderSize ? 0 : RecordRef(ring, tail).size();
        if (size < kHeaderSize || size > head - tail || size > ring.data_size) {
            if (corrupt)
                *corrupt = true;
            break;
        }
        tail += size;
        ++*count;
    }
    return tail;
}

}  // namespace

std::size_t read_ring_span(const RingMemory& ring, const std::function<void(const RingSpan&)>& sink,
                           bool* corrupt)
{
    std::uint64_t* head_word = control_word(ring.control, kDataHeadOffset);
    std::uint64_t* tail_word = control_word(ring.control, kDataTailOffset);
    const std::uint64_t head = __atomic_load_n(head_word, __ATOMIC_ACQUIRE);
    const std::uint64_t tail = __atomic_load_n(tail_word, __ATOMIC_RELAXED);
    std::size_t count = 0;
    // More than the ring holds: the control page is not to be believed.
    const bool overrun = head - tail > ring.data_size;
    if (overrun && corrupt)
        *corrupt = true;
    const std::uint64_t end = overrun ? tail : whole_records_end(ring, tail, head, &count, corrupt);
    if (count)
        sink(RingSpan(ring, tail, end, count));
    // Everything up to head is consumed (a corrupt rest is skipped).
    __atomic_store_n(tail_word, head, __ATOMIC_RELEASE);
    return count;
}

std::size_t read_ring(const RingMemory& ring, const std::function<void(Record&&)>& sink,
                      bool* corrupt)
{
    return read_ring_span(
        ring,
        [&](const RingSpan& span) {
            span.for_each([&](const RecordRef& ref) { sink(ref.record()); });
        },
        corrupt);
}

TimeMerge::TimeMerge(std::vector<std::vector<Record>> rings) : rings_(std::move(rings))
{
    for (std::size_t i = 0; i < rings_.size(); ++i)
        if (!rings_[i].empty())
            heap_.push(Head{record_time(rings_[i][0]), i, 0});
}

bool TimeMerge::next(Record& out)
{
    if (heap_.empty())
        return false;
    const Head h = heap_.top();
    heap_.pop();
    auto& ring = rings_[h.ring];
    out = std::move(ring[h.pos]);
    if (h.pos + 1 < ring.size())
        heap_.push(Head{record_time(ring[h.pos + 1]), h.ring, h.pos + 1});
    return true;
}

std::vector<Record> merge_by_time(std::vector<std::vector<Record>> rings)
{
    std::size_t total = 0;
    for (const auto& r : rings)
        total += r.size();
    std::vector<Record> out;
    out.reserve(total);
    TimeMerge merge(std::move(rings));
    Record r;
    while (merge.next(r))
        out.push_back(std::move(r));
    return out;
}

}  // namespace archpmu
