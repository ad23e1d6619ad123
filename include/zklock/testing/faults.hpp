// Faults injected into a real server's view of a session, for tests.
#pragma once

#include <zklock/session.hpp>

#include <chrono>
#include <string>

namespace zklock::testing {

/// Makes the server expire `session` (as Curator's KillSession does): opens a
/// second connection with the same session id and password and closes it, which
/// ends the session on the server. The session's own I/O is held meanwhile (as if
/// its process were paused), so it cannot take the session back first. `session`
/// then sees `expired` when it next talks to the server and opens a new session.
/// Throws zklock::error (errc::timeout) when that does not happen within `timeout`.
void expire_session(Session& session, std::chrono::milliseconds timeout = std::chrono::seconds(10));

/// Deletes the node at `path` through `session` (as an operator or another client
/// would), waiting for the server's answer. Throws zklock::error on failure.
void delete_node(Session& session, const std::string& path);

} // namespace zklock::testing
