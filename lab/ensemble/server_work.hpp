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
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

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

/// What a row's measured part cost the server, from two readings around it
/// alone (no warm-up, no session set-up): {"measured_transactions",
/// "transactions_per_turn"} (a turn: one measured cycle or grant), each null
/// when a reading is missing, a new epoch began in between or there were no
/// turns.
nlohmann::json measured_work(const std::optional<server_counters>& before, const std::optional<server_counters>& after,
                             std::size_t turns);

/// `row` (a peer's line, which gives its measured_transactions) with its
/// transactions_per_turn over its ops.
void add_transactions_per_turn(nlohmann::json& row);

/// The readings of measured_work() around a run's measured part, taken on
/// `server` (host:port) with `timeout`: begin() as it starts, end() once it is over.
class measured_window {
public:
    measured_window(std::string server, std::chrono::milliseconds timeout)
        : server_(std::move(server)), timeout_(timeout) {}
    void begin() { before_ = read_server_counters(server_, timeout_); }
    /// measured_work() since begin(), for `turns` turns.
    nlohmann::json end(std::size_t turns) const {
        return measured_work(before_, read_server_counters(server_, timeout_), turns);
    }

private:
    std::string server_;
    std::chrono::milliseconds timeout_;
    std::optional<server_counters> before_;
};

} // namespace zklock::cli
