// SPDX-License-Identifier: MIT
// Watch the module's events over generic netlink: sessions opening and closing,
// refusals, throttling, as they happen.
//   watch_events [N]     (stop after N events; default: run until killed)
#include <poll.h>

#include <archpmu/error.hpp>
#include <archpmu/netlink.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv)
{
    char* end = nullptr;
    const long limit = argc > 1 ? std::strtol(argv[1], &end, 10) : -1;
    if (argc > 1 && (*end != '\0' || limit < 1)) {
        std::fprintf(stderr, "watch_events: '%s' is not a number of events\n", argv[1]);
        return 2;
    }
    try {
        archpmu::Monitor monitor;
        std::printf("watching (netlink family %d)\n", monitor.family_id());
        std::fflush(stdout);
        for (long seen = 0; limit < 0 || seen < limit;) {
            pollfd p{monitor.fd(), POLLIN, 0};
            if (::poll(&p, 1, -1) < 0) {
                if (errno == EINTR)
                    continue;
                throw archpmu::Error(errno, "poll on the netlink socket");
            }
            for (const archpmu::Notice& n : monitor.receive()) {
                std::printf("%s", std::string(archpmu::notice_name(n.cmd)).c_str());
                if (n.session_id)
                    std::printf(" session %llu", static_cast<unsigned long long>(*n.session_id));
                if (n.pid)
                    std::printf(" pid %u (%s)", *n.pid, archpmu::printable(n.comm).c_str());
                if (n.cpu)
                    std::printf(" cpu %u", *n.cpu);
                std::printf("\n");
                std::fflush(stdout);
                ++seen;
            }
        }
        return 0;
    } catch (const archpmu::Error& e) {
        std::fprintf(stderr, "watch_events: %s\n", e.what());
        return 1;
    }
}
