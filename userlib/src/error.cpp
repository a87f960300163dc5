// SPDX-License-Identifier: MIT
#include "archpmu/error.hpp"

namespace archpmu {

Error::Error(int errnum, const std::string& what)
    : std::system_error(errnum, std::generic_category(), what), reason_(what)
{
}

}  // namespace archpmu
