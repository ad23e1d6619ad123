// Faults injected into a real server's view of a session, for tests
// (zklock::testing, over the core's zklock/detail/session_seam.hpp).
//
// The rest of the fault kit: faultable_process.hpp (kill -9, pause_for,
// restart of any process the fixtures start), faulty_link.hpp (delay,
// blackhole, reset, a lost reply between a client and a server),
// packet_filter.hpp (the iptables rules behind a blackhole or a partition),
// ensemble.hpp (kill the leader, partition a node, find a session's server).
#pragma once

#include <zklock/acl.hpp>
#include <zklock/session.hpp>
#include <zklock/testing/export.hpp>

#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>

namespace zklock::testing {

/// Makes the server expire `session` (as Curator's KillSession does): opens a
/// second connection with the same session id and password and closes it, which
/// ends the session on the server. The session's own I/O is held meanwhile (as if
/// its process were paused), so it cannot take the session back first. `session`
/// then sees `expired` when it next talks to the server and opens a new session.
/// Throws zklock::error (errc::timeout) when that does not happen within `timeout`.
ZKLOCK_TESTING_EXPORT void expire_session(Session& session, std::chrono::milliseconds timeout = std::chrono::seconds(10));

/// Freezes a Session as SIGSTOP freezes the process it lives in: the thread
/// that runs the session (its strand) is held, so the session reads nothing,
/// sends nothing (no ping), runs no C callback and completes nothing (user
/// completions on a Session's own thread wait too), while its connection stays
/// open. The server hears nothing and expires the session after its timeout;
/// whatever the server sends meanwhile waits in the socket, read when thawed,
/// exactly as by a process that wakes up. For clients in the test's own
/// process, whose other threads the test freezes at points of its choosing
/// (the chaos clients, chaos.hpp); a whole client process is paused with
/// ChildProcess::pause_for() (faultable_process.hpp).
///
/// Needs a Session on its own thread (SessionOptions without an executor) or on
/// an executor that some other thread runs. Not thread-safe: use from one
/// thread (never the session's own).
class ZKLOCK_TESTING_EXPORT SessionFreeze {
public:
    /// Holds the session's strand; returns once the hold has taken effect (a
    /// handler running on the strand finishes first). Throws zklock::error
    /// (errc::session_closed) when the session is closed, errc::timeout when
    /// the strand is not free within `timeout`.
    explicit SessionFreeze(Session& session, std::chrono::milliseconds timeout = std::chrono::seconds(10));
    /// thaw().
    ~SessionFreeze();
    SessionFreeze(const SessionFreeze&) = delete;
    SessionFreeze& operator=(const SessionFreeze&) = delete;

    /// Makes the server expire the frozen session (as expire_session(), which is
    /// this with a freeze around it): a second connection attaches to the session
    /// and closes it. The session learns it when thawed. Throws zklock::error:
    /// errc::invalid_state when the session was not connected when frozen,
    /// errc::timeout when no server took the second connection within `timeout`.
    void expire(std::chrono::milliseconds timeout = std::chrono::seconds(10));
    /// Lets the session run again. Idempotent; never throws.
    void thaw() noexcept;
    /// True while the session is frozen.
    [[nodiscard]] bool frozen() const noexcept { return release_ != nullptr; }

private:
    Session& session_;
    std::shared_ptr<std::promise<void>> release_;
    std::optional<std::int64_t> client_id_;
    std::string password_;
};

/// Deletes the node at `path` through `session` (as an operator or another client
/// would), waiting for the server's answer. Throws zklock::error on failure.
ZKLOCK_TESTING_EXPORT void delete_node(Session& session, const std::string& path);

// What another client on the same ZooKeeper can do to a lock: each waits for
// the server's answer and throws zklock::error with its code (errc::no_auth
// when the session may not). `session` names who does it (its auth).

/// Creates `path` with `data` through `session`, persistent unless `ephemeral`,
/// with the session's ACL policy (SessionOptions::acl). Its parent must exist.
ZKLOCK_TESTING_EXPORT void create_node(Session& session, const std::string& path, const std::string& data = {}, bool ephemeral = false);
/// Creates a sequential node: `prefix` with the server's sequence appended (as a
/// recipe creates its queue node), ephemeral unless `ephemeral` is false; returns
/// the path the server made. Its parent must exist.
ZKLOCK_TESTING_EXPORT std::string create_sequential_node(Session& session, const std::string& prefix,
                                                         const std::string& data = {}, bool ephemeral = true);
/// Sets the ACL of `path` (any version) through `session`.
ZKLOCK_TESTING_EXPORT void set_acl(Session& session, const std::string& path, const acl_list& acl);
/// The ACL of `path`, read through `session`.
ZKLOCK_TESTING_EXPORT acl_list get_acl(Session& session, const std::string& path);

} // namespace zklock::testing
