// SPDX-License-Identifier: MIT
// archpmu exporter: one counting session served to Prometheus over HTTP (docs/exporter.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "archpmu/events.hpp"

namespace archpmu::tool {

// Not PCM's 9738, nor in the range 9100-9999 that Prometheus' exporters have used up.
inline constexpr std::uint16_t kExporterPort = 10738;

struct ExporterOptions {
    std::string listen = "127.0.0.1:" + std::to_string(kExporterPort);  // civetweb's form
    std::vector<EventSpec> events;    // checked: check_family_names()
    std::vector<std::uint32_t> cpus;  // empty: every online CPU
    std::string device;
    unsigned threads = 4;  // scrapes served at once; the rest wait in a queue
};

// The exit status when a session is refused for good before one has counted (the events,
// the CPUs, the privilege, the device's mode for 10 s): sysexits' EX_CONFIG, which the
// service does not restart on.
inline constexpr int kExporterConfigStatus = 78;

// Serves until SIGTERM or SIGINT (0); SIGHUP opens the session afresh. 1 when it cannot
// listen; kExporterConfigStatus when a session is refused for good before one has counted,
// at the start or once the module has come. Afterwards every refusal is tried again:
// archpmu_up 0.
int run_exporter(const ExporterOptions& options);

}  // namespace archpmu::tool
