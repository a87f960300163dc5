// SPDX-License-Identifier: MIT
// selftest's usr-os verdict on counts seen on the model and what broken USR/OS
// filters would count.
#include <catch2/catch.hpp>

#include "selftest_verdict.hpp"

using archpmu::tool::RingCounts;
using archpmu::tool::usr_os_separates;

TEST_CASE("usr-os passes split rings, whatever the kernel's own share of the CPU", "[selftest]")
{
    const RingCounts reads{6147704, 315784452};
    CHECK(usr_os_separates({302039508, 0}, reads));
    // Seen in CI, 4 vCPUs on 2 host cores: a fifth of the loop's CPU time in
    // the kernel's interrupts. The old bound (kernel under a tenth of user) failed it.
    CHECK(usr_os_separates({254133416, 50510020}, reads));
    CHECK(usr_os_separates({254133416, 50510020}, {0, 313615780}));
    // Hardware: rep stos clears a read's buffer in few instructions.
    CHECK(usr_os_separates({600000000, 20000}, {900000, 4000000}));
    // Counts past 2^32 each: their products do not wrap.
    CHECK(usr_os_separates({30000000000, 1000}, {10000000000, 20000000000}));
    CHECK_FALSE(usr_os_separates({30000000000, 20000000000}, {10000000000, 20000000000}));
}

TEST_CASE("usr-os fails what broken USR and OS filters count", "[selftest]")
{
    const RingCounts loop{300000000, 100000};
    const RingCounts reads{6000000, 300000000};
    // Nothing counted; both filters ignored; the two swapped.
    CHECK_FALSE(usr_os_separates({0, 0}, {0, 0}));
    CHECK_FALSE(usr_os_separates({300100000, 300100000}, {306000000, 306000000}));
    CHECK_FALSE(usr_os_separates({loop.kernel, loop.user}, {reads.kernel, reads.user}));
    // OS counting every ring; USR counting every ring; OS counting nothing.
    CHECK_FALSE(usr_os_separates({loop.user, loop.user + loop.kernel}, reads));
    CHECK_FALSE(usr_os_separates(loop, {reads.user + reads.kernel, reads.kernel}));
    CHECK_FALSE(usr_os_separates(loop, {reads.user, 0}));
    // Each workload dominated by its ring, but hardly apart.
    CHECK_FALSE(usr_os_separates({200000000, 100000000}, {100000000, 150000000}));
}
