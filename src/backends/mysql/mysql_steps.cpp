#include "backends/mysql/mysql_steps.hpp"

#include <zklock/error.hpp>

#include <charconv>
#include <string>
#include <string_view>

namespace zklock::detail::mysql_steps {
namespace {

class category_impl : public std::error_category {
public:
    const char* name() const noexcept override { return "zklock.mysql"; }
    std::string message(int value) const override { return "MySQL error " + std::to_string(value); }
};

} // namespace

const std::error_category& mysql_category() noexcept {
    static const category_impl c;
    return c;
}

std::error_code error_from_mysql(unsigned number) {
    switch (number) {
    case 1045: return make_error_code(errc::auth_failed);
    case 1044: case 1142: case 1143: case 1227: return make_error_code(errc::no_auth);
    case 1146: case 1049: return make_error_code(errc::no_node);
    case 1054: return make_error_code(errc::invalid_argument);
    case 2002: case 2003: case 2006: case 2013: case 2055: case 1927: case 1053:
        return make_error_code(errc::connection_loss);
    default: return {static_cast<int>(number), mysql_category()};
    }
}

std::error_code error_from_connect(unsigned number, std::string_view message) {
    const auto says = [&](std::string_view words) { return message.find(words) != std::string_view::npos; };
    if (number == 3159) return make_error_code(errc::tls_required);
    if (number != 2026) return error_from_mysql(number);
    if (says("Validation of SSL server certificate failed")) return make_error_code(errc::tls_wrong_host);
    if (says("certificate has expired") || says("certificate is not yet valid"))
        return make_error_code(errc::tls_certificate_expired);
    if (says("self-signed certificate") || says("self signed certificate") || says("unable to get local issuer") ||
        says("certificate verify failed") || says("unable to verify the first certificate"))
        return make_error_code(errc::tls_untrusted_server);
    return make_error_code(errc::tls_handshake_failed);
}

after_attempt_step after_attempt(method m, const attempt_result& r) noexcept {
    using action = after_attempt_step::action;
    using reason = after_attempt_step::reason;
    const bool rollback = m == method::row;
    if (r.connection_lost) return {action::finish, r.aborted ? reason::abort : reason::error, false, true};
    if (r.granted)
        return r.aborted ? after_attempt_step{action::undo_grant, reason::abort} : after_attempt_step{action::grant};
    const bool cancelled_by_us = r.aborted && (r.canceled || !r.failed);
    switch (m) {
    case method::lease:
    case method::version:
        // A duplicate key: another holds it. A deadlock: contenders inserted the
        // same key at once and InnoDB rolled this one back; someone else won.
        if (r.failed && !r.busy && !r.deadlock) return {action::finish, reason::error};
        if (r.aborted) return {action::finish, reason::abort};
        if (r.row_missing) return {action::retry_new_row};
        if (r.no_wait) return {action::finish, reason::not_acquired};
        return {action::wait_for_release};
    case method::advisory:
        if (cancelled_by_us) return {action::finish, reason::abort};
        if (r.failed) return {action::finish, reason::error};
        if (r.no_wait) return {action::finish, reason::not_acquired};
        return {action::retry};  // GET_LOCK's own (long) timeout ran out
    case method::row:
        if (cancelled_by_us) return {action::finish, reason::abort, rollback};
        if (!r.failed) return {action::retry_new_row, reason::not_acquired, rollback};
        if (r.lock_not_available || r.deadlock)
            return r.no_wait ? after_attempt_step{action::finish, reason::not_acquired, rollback}
                             : after_attempt_step{action::retry, reason::not_acquired, rollback};
        return {action::finish, reason::error, rollback};
    }
    return {action::finish, reason::error};
}

version_read read_version(std::optional<std::string_view> version, std::optional<std::string_view> free) noexcept {
    version_read r;
    if (!version) return r;
    std::int64_t v = 0;
    const auto res = std::from_chars(version->data(), version->data() + version->size(), v);
    if (res.ec != std::errc{} || res.ptr != version->data() + version->size()) return r;
    r.row_found = true;
    r.version = v;
    r.free = free && *free == "1";
    return r;
}

bool waits_on_server(method m) noexcept { return m == method::advisory || m == method::row; }

} // namespace zklock::detail::mysql_steps
