// What the servers did for one row of a mutex bench: the requests the serving
// server received, the transactions committed, and the fsyncs of the
// transaction log on the serving server and on the leader, read with the
// four-letter words mntr (zk_packets_received, zk_cnt_fsynctime) and srvr
// (Zxid) before and after the row's run.
//
// Per transaction, so that rows of different clients compare without knowing
// their warm-ups: a lock cycle is two transactions for every client measured
// (the create, and the delete or the release's transaction). Transactions per
// fsync is how many writes the server's group commit put into one sync: with
// fsync on, the syncs a cycle waits for are what an ensemble's cycle costs.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace zklock::cli {

struct server_counters {
    std::int64_t requests = 0;  ///< zk_packets_received
    std::int64_t fsyncs = 0;    ///< zk_cnt_fsynctime
    std::int64_t zxid = 0;      ///< srvr's Zxid
};

/// The counters in mntr's and srvr's answers; nothing when one is missing.
std::optional<server_counters> parse_server_counters(std::string_view mntr, std::string_view srvr);

/// Asks `server` (host:port, a chroot after it ignored) mntr and srvr, each
/// within `timeout`; nothing when either goes unanswered.
std::optional<server_counters> read_server_counters(const std::string& server, std::chrono::milliseconds timeout);

/// The work between two readings of the serving server (and of the leader,
/// when it is another server): {"transactions", "requests_per_transaction",
/// "transactions_per_fsync", "leader_transactions_per_fsync"}; null when no
/// transaction was committed or a new leader's epoch began in between.
nlohmann::json work_between(const server_counters& before, const server_counters& after,
                            const std::optional<server_counters>& leader_before = std::nullopt,
                            const std::optional<server_counters>& leader_after = std::nullopt);

} // namespace zklock::cli
