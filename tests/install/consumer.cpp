// SPDX-License-Identifier: MIT
// A program built against an installed libarchpmu (pkg-config or CMake).
#include <archpmu/uapi/archpmu.h>
#include <archpmu/device.hpp>
#include <archpmu/error.hpp>
#include <iostream>

int main()
{
    try {
        archpmu::Device dev("/nonexistent/archpmu");
    } catch (const archpmu::Error& e) {
        std::cout << "errno " << e.code().value() << " abi " << ARCHPMU_ABI_VERSION << "\n";
        return 0;
    }
    return 1;
}
