// The seam through which zklock::testing's fault kit (zklock/testing/faults.hpp)
// reaches a Session: run code on its strand, read the identity a second
// connection attaches with, and send the few requests another client would
// send. Exported by libzklock on purpose, so that the fault kit lives in
// libzklock_testing without a second copy of the session (two copies of one
// class in two shared libraries would break the one-definition rule). Not for
// applications: the names and signatures follow the fault kit's needs.
#pragma once

#include <zklock/acl.hpp>
#include <zklock/export.hpp>
#include <zklock/session.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <system_error>

namespace zklock::seam {

/// What identifies a connected session to the server: a second connection
/// given these attaches to the same session.
struct session_identity {
    std::int64_t client_id = 0;  ///< the session id
    std::string password;        ///< the session's password, as the server sent it (binary)
};

/// What a handler given to run_on_strand() learns on the strand.
struct strand_turn {
    /// True when the handler runs on a thread that runs the session's I/O
    /// (false once the Session's own thread has ended: the handler then runs
    /// on the caller's thread, where it must not wait).
    bool on_session_thread = false;
    /// The session's identity while connected; nothing otherwise.
    std::optional<session_identity> identity;
};

/// Runs `fn` on the session's strand (keeping the session's internals alive
/// until it returns). Thread-safe.
ZKLOCK_EXPORT void run_on_strand(Session& session, std::function<void(const strand_turn&)> fn);

/// Once the session is connected, deletes `path` (any version); `done` gets
/// the server's answer, or errc::closing when the session closes first.
/// `done` runs on the session's strand. Thread-safe.
ZKLOCK_EXPORT void remove_node(Session& session, std::string path, std::function<void(std::error_code)> done);

/// Once connected, creates `path` with `data` and the session's ACL policy:
/// ephemeral or persistent, with the server's sequence appended when
/// `sequential`. `done` gets the answer and the path the server made. As
/// remove_node.
ZKLOCK_EXPORT void create_node(Session& session, std::string path, std::string data, bool ephemeral,
                               bool sequential, std::function<void(std::error_code, std::string)> done);

/// Once connected, sets the ACL of `path` (any version). As remove_node.
ZKLOCK_EXPORT void set_acl(Session& session, std::string path, acl_list acl,
                           std::function<void(std::error_code)> done);

/// Once connected, reads the ACL of `path`. As remove_node.
ZKLOCK_EXPORT void get_acl(Session& session, std::string path,
                           std::function<void(std::error_code, acl_list)> done);

} // namespace zklock::seam
