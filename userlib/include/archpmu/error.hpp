// SPDX-License-Identifier: MIT
// archpmu: the library's one error type.
#pragma once

#include <string>
#include <system_error>

namespace archpmu {

// Every failure of the library: a std::system_error carrying the errno, whose
// message says what failed and, where there is one, what to do about it.
class Error : public std::system_error {
public:
    Error(int errnum, const std::string& what);
    // The message alone, without the errno text std::system_error appends to what().
    [[nodiscard]] const std::string& reason() const noexcept { return reason_; }

private:
    std::string reason_;
};

}  // namespace archpmu
