#include <zklock/lock_path.hpp>

#include "fsm/limits.hpp"
#include "fsm/lock_set.hpp"
#include "fsm/path.hpp"

namespace zklock {

static_assert(max_lock_path_bytes == detail::max_lock_path_length);

namespace {

std::error_code answer(const detail::check_result& check, std::string* reason) {
    if (!check && reason) *reason = check.reason;
    return check.error;
}

} // namespace

std::error_code validate_lock_path(std::string_view path, std::string* reason) {
    return answer(detail::validate_lock_path(path), reason);
}

std::error_code validate_lock_set(const std::vector<std::string>& paths, std::string* reason) {
    return answer(detail::validate_lock_set(paths), reason);
}

std::string_view connect_string_chroot(std::string_view connect) { return detail::chroot_of(connect); }

} // namespace zklock
