// The servers of a mutex bench: the throwaway standalone server or loopback
// ensemble the bench starts, or the user's (-c), whose roles it asks with the
// four-letter word srvr; and the passes of the scenarios over them (the first
// follower, then the leader: plan.hpp).
#pragma once

#include "ensemble/plan.hpp"

#include <zklock/testing/ensemble.hpp>
#include <zklock/testing/zookeeper_server.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zklock::cli {

struct bench_servers_options {
    std::string connect;                       ///< -c
    bool connect_given = false;                ///< the user's servers (-c, $ZKLOCK_CONNECT); else the bench's own
    int ensemble = 1;                          ///< the bench's own: 1 (a standalone server), 3 or 5
    std::vector<std::string> config;           ///< extra zoo.cfg lines of every node of the bench's own
    std::chrono::milliseconds srvr_timeout{2000};  ///< each of the user's servers has this long to answer srvr
};

/// Starts the bench's own servers (tickTime 200 ms, maxSessionTimeout 20 s,
/// the config lines last), or asks each of the user's srvr, and says on
/// stderr what it started or found (and any note of the plan). Destruction
/// stops the servers it started and removes their directories.
/// Throws std::runtime_error (std::system_error) when its servers do not start.
class bench_servers {
public:
    explicit bench_servers(const bench_servers_options& options);
    ~bench_servers();
    bench_servers(const bench_servers&) = delete;
    bench_servers& operator=(const bench_servers&) = delete;

    /// The passes, in the order they run.
    [[nodiscard]] const std::vector<serving_node>& nodes() const noexcept { return nodes_; }
    /// The version the servers' srvr states, or "" when none was told.
    [[nodiscard]] const std::string& version() const noexcept { return version_; }

private:
    void start_standalone(const bench_servers_options& o);
    void start_ensemble(const bench_servers_options& o);
    void ask(const bench_servers_options& o);

    std::unique_ptr<testing::ZooKeeperServer> standalone_;
    std::unique_ptr<testing::Ensemble> ensemble_;
    std::vector<serving_node> nodes_;
    std::string version_;
};

/// Sends the four-letter word `word` to `server` (host:port; every address
/// its host resolves to, in turn) through a close-on-exec socket, the whole
/// exchange within `timeout`: the answer, or nothing and why (in `why`).
std::optional<std::string> ask_word(const std::string& server, std::string_view word, std::chrono::milliseconds timeout,
                                    std::string& why);

/// Sends srvr to `server` (host:port; every address its host resolves to, in
/// turn) through a close-on-exec socket, the whole exchange within `timeout`:
/// the server's mode, or why there is none ("Connection refused", "'This
/// ZooKeeper instance is not currently serving requests'"). `answer`
/// receives the whole answer when there is one.
server_answer ask_srvr(const std::string& server, std::chrono::milliseconds timeout, std::string* answer = nullptr);

} // namespace zklock::cli
