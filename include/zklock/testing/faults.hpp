// Faults injected into a real server's view of a session, for tests.
//
// The rest of the fault kit: faultable_process.hpp (kill -9, pause_for,
// restart of any process the fixtures start), faulty_link.hpp (delay,
// blackhole, reset, a lost reply between a client and a server),
// packet_filter.hpp (the iptables rules behind a blackhole or a partition),
// ensemble.hpp (kill the leader, partition a node, find a session's server).
#pragma once

#include <zklock/acl.hpp>
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

// What another client on the same ZooKeeper can do to a lock: each waits for
// the server's answer and throws zklock::error with its code (errc::no_auth
// when the session may not). `session` names who does it (its auth).

/// Creates `path` with `data` through `session`, persistent unless `ephemeral`,
/// with the session's ACL policy (SessionOptions::acl). Its parent must exist.
void create_node(Session& session, const std::string& path, const std::string& data = {}, bool ephemeral = false);
/// Sets the ACL of `path` (any version) through `session`.
void set_acl(Session& session, const std::string& path, const acl_list& acl);
/// The ACL of `path`, read through `session`.
acl_list get_acl(Session& session, const std::string& path);

} // namespace zklock::testing
