// SPDX-License-Identifier: MIT
// archpmu monitor and who: a notice as a line for people, or as one JSON object
// on one line for programs.
#pragma once

#include <string>

#include "archpmu/netlink.hpp"

namespace archpmu {

std::string notice_line(const Notice& n);
std::string notice_json(const Notice& n);

}  // namespace archpmu
