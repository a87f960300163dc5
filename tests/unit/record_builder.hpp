// SPDX-License-Identifier: MIT
// Records built as the module writes them, for the unit tests.
#pragma once

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "archpmu.h"
#include "archpmu/records.hpp"

inline void put64(std::vector<std::uint8_t>& b, std::uint64_t v)
{
    const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
    b.insert(b.end(), p, p + 8);
}

inline void put32x2(std::vector<std::uint8_t>& b, std::uint32_t lo, std::uint32_t hi)
{
    put64(b, static_cast<std::uint64_t>(hi) << 32 | lo);
}

// A sample record as the module writes it; with group values when given.
inline archpmu::Record sample_record(std::uint64_t id, std::uint64_t time, std::uint32_t cpu,
                                     std::uint64_t ip = 0x1000,
                                     const std::vector<archpmu::GroupValue>* group = nullptr,
                                     std::uint32_t pid = 42, std::uint32_t tid = 43)
{
    std::vector<std::uint8_t> b(8);
    put64(b, id);
    put64(b, ip);
    put32x2(b, pid, tid);
    put64(b, time);
    put64(b, id);
    put32x2(b, cpu, 0);
    put64(b, 100000);
    if (group) {
        put64(b, group->size());
        for (const auto& g : *group) {
            put64(b, g.value);
            put64(b, g.id);
        }
    }
    archpmu::Record r;
    r.type = ARCHPMU_RECORD_SAMPLE;
    r.misc = ARCHPMU_RECORD_MISC_USER;
    const auto size = static_cast<std::uint16_t>(b.size());
    std::memcpy(b.data(), &r.type, 4);
    std::memcpy(b.data() + 4, &r.misc, 2);
    std::memcpy(b.data() + 6, &size, 2);
    r.bytes = std::move(b);
    return r;
}

// A ring in memory: control page and data, with records placed from `tail`.
struct FakeRing {
    explicit FakeRing(std::size_t data_size) : control(4096 / 8, 0), data(data_size, 0xee) {}

    void place(std::uint64_t tail, const std::vector<archpmu::Record>& records)
    {
        std::uint64_t pos = tail;
        for (const auto& r : records)
            for (const auto byte : r.bytes)
                data[pos++ % data.size()] = byte;
        control[1024 / 8] = pos;   // data_head
        control[1032 / 8] = tail;  // data_tail
    }
    archpmu::RingMemory memory()
    {
        return archpmu::RingMemory{control.data(), data.data(), data.size()};
    }
    std::vector<std::uint64_t> control;
    std::vector<std::uint8_t> data;
};
