// SPDX-License-Identifier: MIT
// Register names and fields as `archpmu regs` and netlink's usage dump give them.
#include <catch2/catch.hpp>

#include "archpmu/regs.hpp"

TEST_CASE("registers are named as the SDM names them, v6's range too", "[regs]")
{
    using archpmu::register_name;
    CHECK(register_name(0x186) == "IA32_PERFEVTSEL0");
    CHECK(register_name(0xc8) == "IA32_PMC7");
    CHECK(register_name(0x1920) == "IA32_PMC_GP8_CTR");
    CHECK(register_name(0x1925) == "IA32_PMC_GP9_CFG_A");
    CHECK(register_name(0x1926) == "MSR 0x1926");  // GP 9's CFG_B: archpmu never reads it
    const auto fields = archpmu::decode_register(0x1925, 0x4300c4);
    REQUIRE(fields.size() >= 2);
    CHECK(fields[0] == std::make_pair(std::string("event"), std::uint64_t{0xc4}));
    CHECK(archpmu::decode_register(0x1924, 0x4300c4).empty());  // a count has no fields
}
