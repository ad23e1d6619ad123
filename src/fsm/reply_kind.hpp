// One reading of a ZooKeeper request's outcome, shared by everything in zklock
// that sends requests (the queue engine, the session's owned deletes, leader
// observation, the listings) and by zklock::is_retryable. Pure.
#pragma once


#include <system_error>

namespace zklock::detail {

enum class reply_kind {
    ok,            ///< done
    retry,         ///< outcome unknown, or not executed: send again once connected
    session_gone,  ///< the session expired or its handle is dead: the session event follows
    closed,        ///< the Session was closed: give up with errc::session_closed
    answer,        ///< the server's answer (no node, node exists, not authorized, ...): the caller's to read
};

/// `retry`: the C client tore its connection down and failed every pending
/// request with the reason (connection loss, operation timeout, a reply out of
/// order: runtime inconsistency, one it could not decode: marshalling error, a
/// socket error: system error), or the server refused to run it now
/// (throttled, session moved). `session_gone`: session expired, invalid state.
/// `closed`: the handle is closing (zklock::errc::closing or session_closed).
reply_kind classify_reply(const std::error_code& ec) noexcept;
/// The same for a ZooKeeper C client return code (ZOK, ZNONODE, ...).
reply_kind classify_reply(int zoo_rc) noexcept;
/// The error to give up with after `zoo_rc`: errc::session_closed when the
/// handle was closing, from_zookeeper(zoo_rc) otherwise.
std::error_code reply_error(int zoo_rc) noexcept;

/// A request whose outcome is unknown (or that was not run): the queue engines
/// retry it once connected, as the session's owned deletes are.
inline bool connection_trouble(int zoo_rc) noexcept { return classify_reply(zoo_rc) == reply_kind::retry; }
/// The session expired or is closing: its event decides what happens next.
inline bool session_gone(int zoo_rc) noexcept {
    const auto k = classify_reply(zoo_rc);
    return k == reply_kind::session_gone || k == reply_kind::closed;
}

} // namespace zklock::detail
