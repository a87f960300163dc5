// SPDX-License-Identifier: MIT
// archpmu_switch_bench: what a task session costs at a context switch. Two
// processes pinned to one CPU bounce a byte through two pipes, so every hop
// is a context switch between them; round trips per second with no session,
// with an archpmu task session on both (the gate closes for the one and
// opens for the other at each switch), and under `perf stat -e
// task-clock,context-switches` (perf's own per-task switch work), in one run.
//
//   archpmu_switch_bench [ROUND_TRIPS [RUNS]]     the table (default 20000 5)
//   archpmu_switch_bench --pingpong ROUND_TRIPS   one run, for perf stat to wrap
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "archpmu/events.hpp"
#include "archpmu/session.hpp"

namespace {

void pin_to_cpu0()
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(0, &set);
    if (::sched_setaffinity(0, sizeof(set), &set) != 0)
        throw std::runtime_error("sched_setaffinity");
}

// Round trips per second of a ping-pong between this process and a child.
double ping_pong(long round_trips)
{
    int to_child[2];
    int to_parent[2];
    if (::pipe(to_child) != 0 || ::pipe(to_parent) != 0)
        throw std::runtime_error("pipe");
    const pid_t child = ::fork();
    if (child < 0)
        throw std::runtime_error("fork");
    char byte = 0;
    if (child == 0) {
        for (long i = 0; i < round_trips; ++i)
            if (::read(to_child[0], &byte, 1) != 1 || ::write(to_parent[1], &byte, 1) != 1)
                ::_exit(1);
        ::_exit(0);
    }
    const auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < round_trips; ++i)
        if (::write(to_child[1], &byte, 1) != 1 || ::read(to_parent[0], &byte, 1) != 1)
            throw std::runtime_error("ping-pong");
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    ::waitpid(child, nullptr, 0);
    for (int fd : {to_child[0], to_child[1], to_parent[0], to_parent[1]})
        ::close(fd);
    return static_cast<double>(round_trips) / took.count();
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// `perf stat` around this program's --pingpong mode: the rate it printed.
double under_perf(const char* self, long round_trips)
{
    const std::string cmd = "perf stat -x, -e task-clock,context-switches -o /dev/null -- " +
                            std::string(self) + " --pingpong " + std::to_string(round_trips);
    FILE* pipe = ::popen(cmd.c_str(), "r");
    if (!pipe)
        return 0;
    double rate = 0;
    if (std::fscanf(pipe, "round_trips_per_s %lf", &rate) != 1)
        rate = 0;
    ::pclose(pipe);
    return rate;
}

}  // namespace

int main(int argc, char** argv)
{
    try {
        pin_to_cpu0();
        if (argc == 3 && std::string(argv[1]) == "--pingpong") {
            std::printf("round_trips_per_s %.0f\n", ping_pong(std::atol(argv[2])));
            return 0;
        }
        const long round_trips = argc > 1 ? std::atol(argv[1]) : 20000;
        const int runs = argc > 2 ? std::atoi(argv[2]) : 5;
        std::vector<double> none;
        std::vector<double> archpmu;
        std::vector<double> perf;
        for (int r = 0; r < runs; ++r) {
            none.push_back(ping_pong(round_trips));
            {
                // Both tasks: this process, and the child it forks (inherit).
                archpmu::SessionOptions so;
                so.task = archpmu::TaskScope{archpmu::TaskScope::Kind::process, 0, true};
                so.start_now = true;
                archpmu::Session session(archpmu::parse_event_list("instructions,cycles,branches"),
                                         so);
                archpmu.push_back(ping_pong(round_trips));
            }
            perf.push_back(under_perf(argv[0], round_trips));
        }
        const double base = median(none);
        const auto row = [&](const char* name, double rate) {
            const double ns_per_switch = rate > 0 ? (1e9 / rate - 1e9 / base) / 2 : 0;
            std::printf("| %s | %.0f | %.0f%% | %+.0f |\n", name, rate, 100 * rate / base,
                        ns_per_switch);
        };
        std::printf(
            "| configuration (%ld round trips, median of %d) | round trips/s | of none | "
            "ns added per switch |\n|---|---|---|---|\n",
            round_trips, runs);
        row("no session", base);
        row("archpmu task session on both tasks (3 events)", median(archpmu));
        if (median(perf) > 0)
            row("perf stat -e task-clock,context-switches", median(perf));
        else
            std::printf("| perf stat -e task-clock,context-switches | not run (no perf) | | |\n");
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "archpmu_switch_bench: %s\n", e.what());
        return 1;
    }
}
