// SPDX-License-Identifier: MIT
#include "archpmu/counter.hpp"

#include "archpmu/events.hpp"

namespace archpmu {
namespace {

SessionOptions counter_options(Counter::Scope scope, const std::string& device)
{
    SessionOptions o;
    o.device = device;
    o.multiplex = true;
    o.task = scope == Counter::Scope::thread ? TaskScope{TaskScope::Kind::thread, 0, false, false}
                                             : TaskScope{TaskScope::Kind::process, 0, true, false};
    return o;
}

}  // namespace

Counter::Counter(std::string_view events, Scope scope, const std::string& device)
    : session_(parse_event_list(events), counter_options(scope, device))
{
}

}  // namespace archpmu
