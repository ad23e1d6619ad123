// What `zklock status` shows of one lock's queue: the table, the JSON object,
// the notes. Pure functions of a listing (and the time now); status.cpp reads
// the server and decides when to show them.
#pragma once

#include <zklock/mutex.hpp>
#include <zklock/queue_lock.hpp>
#include <zklock/semaphore.hpp>
#include <zklock/session.hpp>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <system_error>
#include <vector>

namespace zklock::cli {

/// Which contenders of `listing` hold now, by the rule of the recipe on the
/// path: of a semaphore (`permits`, its stored count, more than 1) the first
/// `permits` of its own nodes; of a read-write lock (a reader in the queue) the
/// readers ahead of the first writer, or that writer when it is first; else
/// the first. One flag per contender, in queue order.
std::vector<bool> holders(const queue_listing& listing, std::size_t permits);

/// The `permits` holders() takes for `listing` of `path`: a semaphore's
/// stored count (stored_permits()), read only when the queue has more than one
/// contender (with one, it alone holds whatever the count); 1 for every other
/// recipe. Errors of the read in `ec`.
std::size_t permits_of(Session& session, const std::string& path, const queue_listing& listing, std::error_code& ec);

/// The columns the status table fits in unless -o wide: POS, NODE, TOKEN,
/// SESSION, AGE and OWNER (DIALECT too when the queue mixes dialects, KIND
/// when it holds readers), a node name cut to node_column_width (its end,
/// where the sequence number is) and the owner to the rest of the line (at
/// least owner_column_min).
inline constexpr std::size_t table_width = 100;
inline constexpr std::size_t node_column_width = 24;
inline constexpr std::size_t owner_column_min = 16;

/// What status says of a lock path that does not exist on the server, after
/// "PATH: ": a mistyped path, or an idle lock whose node the server removed
/// (zklock creates a lock's node as a CONTAINER, which the server deletes
/// once it is empty).
inline constexpr const char* missing_path_text =
    "the lock path does not exist: nobody holds or waits for a lock there (mistyped? the server also removes "
    "the empty node of an idle lock)";

/// The queue of `path` as a table, holder first, ages counted to `now_ms`
/// (the server's ctime against this clock); node names and data escaped
/// (escape_control()) and, unless `wide`, shortened() so that a line fits
/// table_width; `wide` (-o wide) adds DIALECT and KIND and cuts nothing. The
/// line above it says which positions hold (holders()). `connect` goes into
/// the hint that says how to remove a persistent node. A listing whose path
/// does not exist (queue_listing::path_exists) is the line "PATH: " and
/// missing_path_text.
std::string status_text(const std::string& path, const queue_listing& listing, std::size_t permits,
                        const std::string& connect, std::int64_t now_ms, bool wide = false);

/// The same as one JSON object: {path, exists, permits (a semaphore's),
/// contenders: [{..., holds, revocation_requested}], dialects, mixed_dialects,
/// foreign}.
nlohmann::ordered_json status_json(const std::string& path, const queue_listing& listing, std::size_t permits,
                                   std::int64_t now_ms);

/// One note per persistent node in the queue: how to delete it.
std::vector<std::string> persistent_notes(const std::string& path, const queue_listing& listing,
                                          const std::string& connect);

/// One note per node with a pending revocation request (its data is the
/// request, include/zklock/revocation.hpp): whom it asks, and what follows.
std::vector<std::string> revocation_notes(const std::string& path, const queue_listing& listing, std::size_t permits);

/// True when two listings show the same queue (nodes, their data and owners,
/// the foreign children; not whether the path exists: a lock's node made or
/// removed while nobody contends is no change of its queue): a watch that
/// fired for nothing visible.
bool same_queue(const queue_listing& a, const queue_listing& b);

/// The wall clock in milliseconds since the epoch, as ctime counts.
std::int64_t now_ms();

} // namespace zklock::cli
