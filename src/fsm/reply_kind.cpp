#include "fsm/reply_kind.hpp"

#include <zklock/error.hpp>

namespace zklock::detail {

reply_kind classify_reply(const std::error_code& ec) noexcept {
    if (!ec) return reply_kind::ok;
    if (ec.category() != error_category()) return reply_kind::answer;
    switch (static_cast<errc>(ec.value())) {
    case errc::connection_loss:
    case errc::operation_timeout:
    case errc::runtime_inconsistency:
    case errc::marshalling_error:
    case errc::system_error:
    case errc::throttled_op:
    case errc::session_moved: return reply_kind::retry;
    case errc::session_expired:
    case errc::invalid_state: return reply_kind::session_gone;
    case errc::closing:
    case errc::session_closed: return reply_kind::closed;
    default: return reply_kind::answer;
    }
}

reply_kind classify_reply(int zoo_rc) noexcept { return classify_reply(from_zookeeper(zoo_rc)); }

std::error_code reply_error(int zoo_rc) noexcept {
    const auto ec = from_zookeeper(zoo_rc);
    return classify_reply(ec) == reply_kind::closed ? make_error_code(errc::session_closed) : ec;
}

} // namespace zklock::detail
