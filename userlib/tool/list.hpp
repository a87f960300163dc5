// SPDX-License-Identifier: MIT
// archpmu list: the events this machine can count, as perf list shows them.
#pragma once

#include <string>

namespace archpmu::tool {

// The architectural events with the CPUs (and core types) that have each, then the
// model-specific events libpfm4 knows for this CPU; only names that match `pattern`
// (a glob, or else a substring; any case) when it is not empty.
int run_list(const std::string& device, bool json, const std::string& pattern);

}  // namespace archpmu::tool
