// SPDX-License-Identifier: MIT
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>

int main(int argc, char* argv[])
{
    // libpfm4 sees a Skylake client (the VM guest's CPU) on any build machine,
    // before the first event name reaches it: the model-specific names are tested here.
    (void)::setenv("LIBPFM_FORCE_PMU", "skl", 0);
    return Catch::Session().run(argc, argv);
}
