// Real ZooKeeper servers for tests: a standalone server (ZooKeeperServer) and
// a loopback ensemble (Ensemble), in the spirit of Apache Curator's
// TestingServer and TestingCluster.
//
// Each server is a `java ... QuorumPeerMain zoo.cfg` child process
// (ChildProcess: own process group, killed by the kernel if the test process
// dies). Every address is 127.0.0.1. A constructor returns only once the
// server serves requests, checked with the four-letter words `ruok` and
// `srvr`, so tests never need to sleep before connecting.
//
// Requirements: a Java runtime and the ZooKeeper server jar (the Debian
// `zookeeper` package installs everything the defaults point at).
//
// Thread-safety: ZooKeeperServer and Ensemble are not thread-safe; use each
// object from one thread. Create them on a thread that outlives them (see
// ChildProcess: the kernel kills the server when the creating thread exits).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

#include "zklock/testing/process.hpp"

namespace zklock::testing {

/// Options of a standalone ZooKeeperServer.
struct ZooKeeperServerOptions {
    /// Client port on 127.0.0.1. Default 0: a free port chosen at start.
    std::uint16_t port = 0;
    /// Snapshot and transaction log directory. Default (empty): "data" in the
    /// server's own temp dir, removed with it. A given directory is created
    /// if missing and never removed.
    std::string data_dir;
    /// tickTime in milliseconds. Default 100. Session timeouts are clamped by
    /// the server to [min_session_timeout_ms, max_session_timeout_ms].
    int tick_time_ms = 100;
    /// minSessionTimeout in milliseconds. Default 0: the server's default, 2 x tick.
    int min_session_timeout_ms = 0;
    /// maxSessionTimeout in milliseconds. Default 0: the server's default, 20 x tick.
    int max_session_timeout_ms = 0;
    /// How long a start (constructor, restart()) may take before it fails. Default 30 s.
    std::chrono::milliseconds start_timeout{30000};
    /// The java executable, looked up in PATH unless it contains '/'. Default "java".
    std::string java = "java";
    /// Class path holding the server jar and, first, the log4j configuration.
    /// Default "/etc/zookeeper/conf:/usr/share/java/zookeeper.jar" (Debian).
    std::string classpath = "/etc/zookeeper/conf:/usr/share/java/zookeeper.jar";
    /// Appended to classpath: an SLF4J binding and log4j, without which the
    /// Debian server logs nothing at all. Missing entries are ignored by
    /// java. Default "/usr/share/java/slf4j-log4j12.jar:/usr/share/java/log4j-1.2.jar";
    /// empty appends nothing.
    std::string logging_classpath = "/usr/share/java/slf4j-log4j12.jar:/usr/share/java/log4j-1.2.jar";
    /// true (default): the server's stdout and stderr go to log_path() only.
    /// false: they go to this process's stdout/stderr, and log4j also writes
    /// log_path().
    bool quiet = true;
    /// Extra JVM flags placed before -cp. Default: none.
    std::vector<std::string> jvm_flags;
    /// Extra zoo.cfg lines ("key=value"), appended last so they override the
    /// generated ones (e.g. "forceSync=no"). Default: none.
    std::vector<std::string> extra_config;
};

/// Options of an Ensemble. Every node gets the same settings.
struct EnsembleOptions {
    /// Number of servers. Default 3. 1 runs a single server in standalone mode.
    std::size_t size = 3;
    /// tickTime in milliseconds. Default 100.
    int tick_time_ms = 100;
    /// initLimit in ticks: how long a follower may take to connect and sync
    /// to a leader. Default 50 (5 s at the default tick).
    int init_limit = 50;
    /// syncLimit in ticks: how far a follower may lag before the leader drops
    /// it. Default 20 (2 s at the default tick).
    int sync_limit = 20;
    /// As in ZooKeeperServerOptions. Default 0: 2 x tick.
    int min_session_timeout_ms = 0;
    /// As in ZooKeeperServerOptions. Default 0: 20 x tick.
    int max_session_timeout_ms = 0;
    /// How long the constructor may take to get a quorum (and a restart() of
    /// one node to rejoin it). Default 60 s.
    std::chrono::milliseconds start_timeout{60000};
    /// As in ZooKeeperServerOptions. Default "java".
    std::string java = "java";
    /// As in ZooKeeperServerOptions. Default "/etc/zookeeper/conf:/usr/share/java/zookeeper.jar".
    std::string classpath = "/etc/zookeeper/conf:/usr/share/java/zookeeper.jar";
    /// As in ZooKeeperServerOptions. Default: SLF4J log4j binding and log4j.
    std::string logging_classpath = "/usr/share/java/slf4j-log4j12.jar:/usr/share/java/log4j-1.2.jar";
    /// As in ZooKeeperServerOptions. Default true.
    bool quiet = true;
    /// As in ZooKeeperServerOptions. Default: none.
    std::vector<std::string> jvm_flags;
    /// As in ZooKeeperServerOptions. Default: none.
    std::vector<std::string> extra_config;
};

/// Sends a four-letter word (ruok, srvr, mntr, stat, cons: the whitelisted
/// ones) to 127.0.0.1:port and returns everything the server wrote until it
/// closed the connection. Throws std::system_error: errc::timed_out when the
/// whole exchange does not finish within timeout (a paused server accepts the
/// connection but never answers), errc::connection_refused when nothing
/// listens, other errno values for other failures.
std::string four_letter_word(std::uint16_t port, std::string_view command, std::chrono::milliseconds timeout);

/// The value of the "Mode:" line of a `srvr` answer ("standalone", "leader",
/// "follower", "observer"), or nullopt when there is none (the server is not
/// serving, e.g. while it looks for a leader).
std::optional<std::string> server_mode(std::string_view srvr_answer);

class Ensemble;

/// One ZooKeeper server process.
///
/// Standalone: constructed from ZooKeeperServerOptions, it writes zoo.cfg
/// into its own temp dir (see directory()), starts the server and returns
/// once `ruok` answers `imok` and `srvr` reports a Mode. As an Ensemble node
/// (Ensemble::node()) the same object controls one member of the ensemble.
///
/// Errors: the constructor and restart() throw std::runtime_error when the
/// server does not come up within the start timeout or its process exits;
/// the message holds the exit status and the last 20 lines of log_path().
/// std::system_error for failures to create files or start java.
///
/// Destruction stops the server (SIGTERM, then SIGKILL after 5 s) and removes
/// its temp dir (and the data dir when it lives there).
///
/// Thread-safety: not thread-safe; use from one thread.
class ZooKeeperServer {
public:
    explicit ZooKeeperServer(ZooKeeperServerOptions options = {});
    ~ZooKeeperServer();

    ZooKeeperServer(const ZooKeeperServer&) = delete;
    ZooKeeperServer& operator=(const ZooKeeperServer&) = delete;
    ZooKeeperServer(ZooKeeperServer&&) = delete;
    ZooKeeperServer& operator=(ZooKeeperServer&&) = delete;

    /// The client port on 127.0.0.1; the same across restart().
    [[nodiscard]] std::uint16_t port() const noexcept;
    /// "127.0.0.1:PORT".
    [[nodiscard]] std::string connect_string() const;

    /// Graceful stop: SIGTERM, SIGKILL if still alive after 5 s; reaps the
    /// process. Afterwards the port refuses connections. No-op when stopped.
    void stop();
    /// SIGKILL and reap: a crash. No-op when stopped.
    void kill9();
    /// Stops the server if it runs (gracefully), then starts it again with the
    /// same port, configuration and data dir, so sessions can resume on it.
    /// With wait (the default), returns once the server serves again; an
    /// ensemble node needs a quorum of running nodes for that, so pass false
    /// when restarting nodes of an ensemble that lost its quorum and call
    /// Ensemble::wait_for_quorum() afterwards.
    void restart(bool wait = true);
    /// SIGSTOP / SIGCONT to the server's process group: a frozen server
    /// accepts TCP connections but answers nothing, its sessions time out.
    /// No-op when stopped; pause() of a paused server does nothing.
    void pause();
    void resume();
    /// True while the process exists (paused counts as running).
    [[nodiscard]] bool running();
    /// True between pause() and resume() (or stop/kill9/restart).
    [[nodiscard]] bool paused() const noexcept;

    /// four_letter_word(port(), cmd, timeout).
    std::string four_letter_word(const std::string& cmd, std::chrono::milliseconds timeout = std::chrono::seconds(5));

    /// The file that holds the server's output and log.
    [[nodiscard]] const std::filesystem::path& log_path() const noexcept;
    /// The directory holding zoo.cfg and the log (and, by default, the data).
    [[nodiscard]] const std::filesystem::path& directory() const noexcept;
    /// The data directory (dataDir=).
    [[nodiscard]] const std::filesystem::path& data_dir() const noexcept;
    /// The zoo.cfg the server was started with.
    [[nodiscard]] const std::filesystem::path& config_path() const noexcept;
    /// The server's pid, or -1 when it is stopped.
    [[nodiscard]] pid_t pid() const noexcept;
    /// The last n lines of log_path() ("" if it cannot be read).
    [[nodiscard]] std::string log_tail(std::size_t lines = 20) const;

private:
    friend class Ensemble;
    struct Launch {
        std::string java;
        std::string classpath;
        std::vector<std::string> jvm_flags;
        bool quiet = true;
        std::chrono::milliseconds start_timeout{30000};
    };
    ZooKeeperServer(std::filesystem::path directory, std::filesystem::path data_dir, std::uint16_t port,
                    std::string config, Launch launch);

    void spawn();
    void wait_until_serving(std::chrono::steady_clock::time_point deadline);
    [[nodiscard]] bool serving(std::chrono::milliseconds timeout);
    [[noreturn]] void fail_start(const std::string& why);

    std::optional<TempDir> temp_dir_;
    std::filesystem::path directory_;
    std::filesystem::path data_dir_;
    std::filesystem::path config_path_;
    std::filesystem::path log_path_;
    std::uint16_t port_ = 0;
    Launch launch_;
    std::optional<ChildProcess> process_;
    bool paused_ = false;
};

/// N ZooKeeper servers forming one ensemble on 127.0.0.1, each with its own
/// directory, myid, client port and quorum/election ports. The servers start
/// concurrently; the constructor returns once every node answers `ruok` and
/// reports a Mode, with exactly one leader and the others followers.
///
/// Errors: the constructor throws std::runtime_error (with every node's last
/// log lines) when no quorum forms within start_timeout or a node exits.
///
/// Destruction stops every node and removes all directories.
///
/// Thread-safety: not thread-safe; use from one thread.
class Ensemble {
public:
    explicit Ensemble(EnsembleOptions options = {});
    ~Ensemble();

    Ensemble(const Ensemble&) = delete;
    Ensemble& operator=(const Ensemble&) = delete;
    Ensemble(Ensemble&&) = delete;
    Ensemble& operator=(Ensemble&&) = delete;

    [[nodiscard]] std::size_t size() const noexcept;
    /// "127.0.0.1:P1,127.0.0.1:P2,..." in node order.
    [[nodiscard]] std::string connect_string() const;
    /// Node i (0-based; its myid is i + 1). Throws std::out_of_range.
    [[nodiscard]] ZooKeeperServer& node(std::size_t i);

    /// Index of the node whose `srvr` says "Mode: leader" ("standalone" for a
    /// single-node ensemble), asking every running, unpaused node; nullopt
    /// when none does right now.
    [[nodiscard]] std::optional<std::size_t> leader_index();

    /// Waits until a majority of the nodes serve, every running unpaused node
    /// reports a Mode, and exactly one of them is the leader. Returns false
    /// if that does not happen within timeout. Does not throw for a down node.
    [[nodiscard]] bool wait_for_quorum(std::chrono::milliseconds timeout);

    /// The ensemble's root directory (one subdirectory per node).
    [[nodiscard]] const std::filesystem::path& directory() const noexcept;

private:
    enum class quorum_state { forming, ready, node_exited };
    // With exited == nullptr a node whose process died on its own counts as
    // down; otherwise it ends the check with node_exited and a description.
    quorum_state check_quorum(std::chrono::milliseconds per_node_timeout, std::string* exited);

    TempDir root_;
    std::vector<std::unique_ptr<ZooKeeperServer>> nodes_;
};

}  // namespace zklock::testing
