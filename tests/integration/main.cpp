// SPDX-License-Identifier: MIT
// The VM integration suite loads and unloads archpmu.ko, so it refuses to run
// outside the guest that scripts/vm boots (which sets ARCHPMU_IN_VM).
#define CATCH_CONFIG_RUNNER
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "harness.hpp"

int main(int argc, char** argv)
{
    // archpmu_itest --inject CPU CODE COUNT: inject events, as a command for `archpmu stat`.
    if (argc == 5 && std::string(argv[1]) == "--inject") {
        archpmu::itest::inject_events(static_cast<unsigned>(std::stoul(argv[2])),
                                      static_cast<uint32_t>(std::stoul(argv[3], nullptr, 0)),
                                      std::stoull(argv[4]));
        return 0;
    }
    if (!std::getenv("ARCHPMU_IN_VM") && !std::getenv("ARCHPMU_ITEST_ON_HOST")) {
        std::fprintf(stderr,
                     "archpmu_itest loads kernel modules: run it in the test VM "
                     "(scripts/vm -- %s), or set ARCHPMU_ITEST_ON_HOST=1 on a disposable "
                     "machine\n",
                     argv[0]);
        return 2;
    }
    if (::geteuid() != 0) {
        std::fprintf(stderr, "archpmu_itest must run as root\n");
        return 2;
    }
    return Catch::Session().run(argc, argv);
}
