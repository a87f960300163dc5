// SPDX-License-Identifier: MIT
#include "selftest_verdict.hpp"

namespace archpmu::tool {

bool usr_os_separates(RingCounts loop, RingCounts reads)
{
    constexpr unsigned kRatioApart = 10;
    if (loop.user == 0 || loop.user <= loop.kernel || reads.kernel <= reads.user)
        return false;
    // loop.user / loop.kernel >= 10 * reads.user / reads.kernel, without
    // dividing by zero; the products of two counts can pass 64 bits.
    using Wide = unsigned __int128;
    return Wide{loop.user} * reads.kernel >= Wide{kRatioApart} * loop.kernel * reads.user;
}

}  // namespace archpmu::tool
