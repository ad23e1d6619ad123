// The safe-time budget of a ZooKeeper hold (Lock::safe_for()): how long the
// server certainly keeps the session, and so the hold's ephemeral node, alive.
// Pure functions, no server involved.
//
// The rule: the server expires a session no earlier than its negotiated
// timeout after it last heard from the client (it rounds expiry up to its next
// tick, never down). A request answered by the server was heard at some
// instant after it was sent, so the send time of the newest answered request
// is a moment the server certainly heard us: the session lives at least until
// that send time plus the timeout, on the server's clock. Only requests the
// leader answers count (writes, multi, sync): a follower cut off from the
// leader still answers reads for a while, but the leader, which expires
// sessions, hears nothing of them. The budget ends a
// margin earlier (safe_margin()) for a server clock that runs faster than
// ours. Until that instant no other contender can hold our lock, unless
// someone deletes our node (an operator, a peer with the rights to): no time
// bound covers that.
#pragma once

#include <chrono>

namespace zklock::detail {

/// True when `rc` (a ZooKeeper C client code) is the server's answer to the
/// request: ZOK, or an error the server gave about the request itself (no
/// node, bad version, ...); false for what the client says of a request no
/// server answered (connection loss, timeout, closing, a dead or moved
/// session).
bool server_answered(int rc) noexcept;

/// The part of `session_timeout` the budget gives up: 1%, rounded up to the
/// clock's tick (a server clock may run that much faster than ours, which NTP
/// keeps far below), at least 1 ms.
std::chrono::steady_clock::duration safe_margin(std::chrono::milliseconds session_timeout) noexcept;

/// Until when a session last certainly heard at `heard` (the send time of
/// its newest answered request; our steady clock) with `session_timeout` is
/// alive on the server: heard + timeout - safe_margin(). The epoch (nothing
/// safe) when nothing was heard or the timeout is unknown.
std::chrono::steady_clock::time_point safe_until(std::chrono::steady_clock::time_point heard,
                                                 std::chrono::milliseconds session_timeout) noexcept;

} // namespace zklock::detail
