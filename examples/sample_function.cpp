// SPDX-License-Identifier: MIT
// Sample a function into a perf.data file that `perf report` reads: cycles on
// the CPU this thread is kept on, sampled 1000 times a second, while spin() runs.
//   sample_function [FILE]     (default perf.data)
#include <sched.h>

#include <archpmu/error.hpp>
#include <archpmu/events.hpp>
#include <archpmu/perf_data.hpp>
#include <archpmu/session.hpp>
#include <archpmu/sideband.hpp>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

// Not inlined, so that perf report shows it by name; the clock is read seldom,
// so that the samples fall in spin() itself.
__attribute__((noinline)) unsigned long spin(std::chrono::milliseconds how_long)
{
    const auto end = std::chrono::steady_clock::now() + how_long;
    volatile unsigned long n = 0;
    while (std::chrono::steady_clock::now() < end)
        for (int i = 0; i < 100000; ++i)
            n = n + 1;
    return n;
}

}  // namespace

int main(int argc, char** argv)
{
    const std::string path = argc > 1 ? argv[1] : "perf.data";
    try {
        // Stay on one CPU: the session samples that CPU.
        const int cpu = ::sched_getcpu();
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (::sched_setaffinity(0, sizeof(set), &set) != 0)
            throw archpmu::Error(errno, "sched_setaffinity");

        archpmu::EventSpec cycles = archpmu::parse_event("cycles:u");
        cycles.sample.freq_hz = 1000;
        archpmu::SessionOptions options;
        options.cpus = {static_cast<std::uint32_t>(cpu)};
        options.sampling = archpmu::SamplingOptions{};
        archpmu::Session session({cycles}, options);

        std::vector<archpmu::PerfEventDesc> events(1);
        events[0].attr = archpmu::perf_attr_for(cycles, false);
        events[0].name = cycles.name;
        events[0].ids = session.cpu_ids(0);
        archpmu::PerfDataWriter writer(path, events, archpmu::host_perf_data_info({argv[0], path}));
        // What runs now, from /proc (this program's mappings among it), so that
        // perf report finds spin()'s name.
        writer.write(archpmu::synthesize_system(0, events[0].ids[0]));

        session.start();
        const unsigned long n = spin(std::chrono::milliseconds(500));
        session.stop();
        writer.write(session.drain_merged());
        writer.finish();
        std::printf("%llu samples in %s (spin: %lu turns); perf report -i %s\n",
                    static_cast<unsigned long long>(writer.samples()), path.c_str(), n,
                    path.c_str());
        return 0;
    } catch (const archpmu::Error& e) {
        std::fprintf(stderr, "sample_function: %s\n", e.what());
        return 1;
    }
}
