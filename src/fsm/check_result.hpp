// The result of a check made before any server call.
#pragma once

#include <string>
#include <system_error>

namespace zklock::detail {

/// Empty `error` when the input is accepted; otherwise the error (errc::invalid_path,
/// errc::invalid_argument) and a sentence saying what is wrong.
struct check_result {
    std::error_code error;
    std::string reason;
    explicit operator bool() const noexcept { return !error; }
};

} // namespace zklock::detail
