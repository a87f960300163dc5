// SPDX-License-Identifier: MIT
// The test program's operator new, counting: for the tests that a path of the
// library allocates nothing (the library is linked in statically).
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

#include "harness.hpp"

namespace {
std::atomic<std::uint64_t> allocations{0};
}  // namespace

std::uint64_t archpmu::itest::heap_allocations()
{
    return allocations.load(std::memory_order_relaxed);
}

void* operator new(std::size_t n)
{
    allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(n ? n : 1))
        return p;
    throw std::bad_alloc();
}

void operator delete(void* p) noexcept
{
    std::free(p);
}

void operator delete(void* p, std::size_t /*n*/) noexcept
{
    std::free(p);
}
