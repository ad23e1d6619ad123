// ZooKeeper's four-letter words (ruok, srvr, mntr, stat, cons: the ones the
// fixtures whitelist) and what the fault kit reads from their answers: a
// server's mode (leader or follower) and the connections it serves.
//
// The parsers are pure functions; four_letter_word() is the only I/O.
// Thread-safety: every function here is safe to call concurrently.
#pragma once

#include <zklock/testing/export.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zklock::testing {

/// Sends a four-letter word to 127.0.0.1:port and returns everything the
/// server wrote until it closed the connection. Throws std::system_error:
/// errc::timed_out when the whole exchange does not finish within timeout (a
/// paused server accepts the connection but never answers),
/// errc::connection_refused when nothing listens, other errno values for other
/// failures.
ZKLOCK_TESTING_EXPORT std::string four_letter_word(std::uint16_t port, std::string_view command, std::chrono::milliseconds timeout);

/// The value of the "Mode:" line of a `srvr` answer ("standalone", "leader",
/// "follower", "observer"), or nullopt when there is none (the server is not
/// serving, e.g. while it looks for a leader).
ZKLOCK_TESTING_EXPORT std::optional<std::string> server_mode(std::string_view srvr_answer);

/// One client connection as a `cons` answer lists it.
struct ServedConnection {
    /// The client's port (the remote end of the server's socket).
    std::uint16_t client_port = 0;
    /// The session the connection carries (`sid=0x...`), nullopt before the
    /// session is established (e.g. the `cons` connection itself).
    std::optional<std::int64_t> session_id;
};

/// The connections of a `cons` answer, one per line of the form
/// ` /127.0.0.1:54321[1](queued=0,recved=5,sent=5,sid=0x100000a2b3c0000,...)`.
/// Lines that do not have that shape are skipped.
ZKLOCK_TESTING_EXPORT std::vector<ServedConnection> served_connections(std::string_view cons_answer);

}  // namespace zklock::testing
