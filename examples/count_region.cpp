// SPDX-License-Identifier: MIT
// Count a region of one's own code: instructions, cycles and branches of the
// calling thread around a loop, and its instructions per cycle. Needs the
// archpmu module, and CAP_PERFMON or its unprivileged=own-user (user mode only).
#include <archpmu/counter.hpp>
#include <archpmu/error.hpp>
#include <cstdio>

namespace {

double harmonic(int n)
{
    double sum = 0;
    for (int i = 1; i <= n; ++i)
        sum += 1.0 / i;
    return sum;
}

}  // namespace

int main()
{
    try {
        archpmu::Counter counter{"instructions,cycles,branches"};
        counter.start();
        const double h = harmonic(10'000'000);
        counter.stop();

        const archpmu::Results r = counter.result();
        for (const archpmu::Result& e : r.events)
            std::printf("%-14s %15llu%s\n", e.name.c_str(),
                        static_cast<unsigned long long>(e.scaled()),
                        e.multiplexed ? "  (scaled: it took turns on the counters)" : "");
        const auto cycles = r.get("cycles");
        if (cycles)
            std::printf("%-14s %15.2f\n", "IPC",
                        static_cast<double>(r.get("instructions")) / static_cast<double>(cycles));
        std::printf("(H(10^7) = %.6f)\n", h);
        return 0;
    } catch (const archpmu::Error& e) {
        std::fprintf(stderr, "count_region: %s\n", e.what());
        return 1;
    }
}
