// Real ZooKeeper servers for tests: a standalone server (ZooKeeperServer) and
// a loopback ensemble (Ensemble), in the spirit of Apache Curator's
// TestingServer and TestingCluster.
//
// Each server is a `java ... QuorumPeerMain zoo.cfg` child process
// (ChildProcess: own process group, killed by the kernel if the test process
// dies), a ServerProcess: kill9(), pause(), pause_for(), restart() are its
// faults. The Ensemble (ensemble.hpp, included here) adds the faults of a
// quorum: kill the leader, partition a node, find a session's server. Every address is 127.0.0.1. A constructor returns only once the
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

#include <zklock/testing/export.hpp>

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

#include "zklock/testing/four_letter_words.hpp"
#include "zklock/testing/process.hpp"
#include "zklock/testing/server_process.hpp"
#include "zklock/testing/test_certificates.hpp"

namespace zklock::testing {

/// What every ZooKeeper server process of the fixtures is given, standalone
/// (ZooKeeperServerOptions) or a member of an Ensemble (EnsembleOptions).
struct ZooKeeperProcessOptions {
    /// tickTime in milliseconds. Default 100. Session timeouts are clamped by
    /// the server to [min_session_timeout_ms, max_session_timeout_ms].
    int tick_time_ms = 100;
    /// minSessionTimeout in milliseconds. Default 0: the server's default, 2 x tick.
    int min_session_timeout_ms = 0;
    /// maxSessionTimeout in milliseconds. Default 0: the server's default, 20 x tick.
    int max_session_timeout_ms = 0;
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

/// Options of a standalone ZooKeeperServer.
struct ZooKeeperServerOptions : ZooKeeperProcessOptions {
    /// Client port on 127.0.0.1. Default 0: a free port chosen at start.
    std::uint16_t port = 0;
    /// Snapshot and transaction log directory. Default (empty): "data" in the
    /// server's own temp dir, removed with it. A given directory is created
    /// if missing and never removed.
    std::string data_dir;
    /// How long a start (constructor, restart()) may take before it fails. Default 30 s.
    std::chrono::milliseconds start_timeout{30000};
    /// Also serve TLS on a secure client port (secure_port()): the server runs
    /// Netty's connection factory (netty-codec.jar and netty-resolver.jar are
    /// added to the class path) with certificates made at start in its temp
    /// dir (certificates()); it asks clients for a certificate signed by the
    /// same CA. The plain port keeps serving. Default false.
    bool tls = false;
    /// The certificates made when `tls` is set.
    TestCertificateOptions tls_certificates;
};

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
class ZKLOCK_TESTING_EXPORT ZooKeeperServer : public ServerProcess {
public:
    /// Starts a ZooKeeper server on loopback and waits until it answers ruok (throws otherwise).
    explicit ZooKeeperServer(ZooKeeperServerOptions options = {});
    ~ZooKeeperServer() override;

    ZooKeeperServer(const ZooKeeperServer&) = delete;
    ZooKeeperServer& operator=(const ZooKeeperServer&) = delete;
    ZooKeeperServer(ZooKeeperServer&&) = delete;
    ZooKeeperServer& operator=(ZooKeeperServer&&) = delete;

    // port(), connect_string() ("127.0.0.1:PORT"), pid() (-1 when stopped),
    // running(), paused(), log_path(), log_tail(), and the faults kill9(),
    // pause(), resume(), pause_for() come from ServerProcess. A frozen server
    // accepts TCP connections but answers nothing; its sessions time out.
    // stop() is graceful: SIGTERM, SIGKILL if still alive after 5 s.

    /// Stops the server if it runs (gracefully), then starts it again with the
    /// same port, configuration and data dir, so sessions can resume on it, and
    /// returns once it serves.
    void restart() override;
    /// restart(), but with wait false it returns as soon as the process is
    /// started: an ensemble node needs a quorum of running nodes to serve, so
    /// pass false when restarting nodes of an ensemble that lost its quorum and
    /// call Ensemble::wait_for_quorum() afterwards.
    void restart(bool wait);

    /// The TLS port on 127.0.0.1 (ZooKeeperServerOptions::tls); 0 without TLS.
    [[nodiscard]] std::uint16_t secure_port() const noexcept;
    /// "127.0.0.1:SECURE_PORT"; empty without TLS.
    [[nodiscard]] std::string secure_connect_string() const;
    /// The certificates of a TLS server (its CA, a client certificate and key
    /// it accepts, an unrelated CA). Throws std::logic_error without TLS.
    [[nodiscard]] const TestCertificates& certificates() const;

    /// An ensemble node's quorum port (where a leader accepts followers) and
    /// election port on 127.0.0.1; 0 for a standalone server.
    ///@{
    [[nodiscard]] std::uint16_t quorum_port() const noexcept;
    [[nodiscard]] std::uint16_t election_port() const noexcept;
    ///@}

    /// four_letter_word(port(), cmd, timeout).
    std::string four_letter_word(const std::string& cmd, std::chrono::milliseconds timeout = std::chrono::seconds(5));

    /// The directory holding zoo.cfg and the log (and, by default, the data).
    [[nodiscard]] const std::filesystem::path& directory() const noexcept;
    /// The data directory (dataDir=).
    [[nodiscard]] const std::filesystem::path& data_dir() const noexcept;
    /// The zoo.cfg the server was started with.
    [[nodiscard]] const std::filesystem::path& config_path() const noexcept;

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
                    std::uint16_t quorum_port, std::uint16_t election_port, std::string config, Launch launch);

    void spawn() override;
    [[nodiscard]] bool serving(std::chrono::milliseconds timeout) override;

    std::optional<TempDir> temp_dir_;
    std::filesystem::path directory_;
    std::filesystem::path data_dir_;
    std::filesystem::path config_path_;
    std::uint16_t quorum_port_ = 0;
    std::uint16_t election_port_ = 0;
    std::uint16_t secure_port_ = 0;
    std::optional<TestCertificates> certificates_;
    Launch launch_;
};

}  // namespace zklock::testing

#include "zklock/testing/ensemble.hpp"  // NOLINT: Ensemble, as before the split
