// SPDX-License-Identifier: MIT
// The VM integration suite loads and unloads archpmu.ko, so it refuses to run
// outside the guest that scripts/vm boots (which sets ARCHPMU_IN_VM).
#define CATCH_CONFIG_RUNNER
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv)
{
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
