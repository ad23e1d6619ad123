// A real MariaDB server for tests (the MySQL-protocol comparison backends).
//
// The constructor runs mariadb-install-db into a fresh temp dir and starts
// `mariadbd` (a ServerProcess: its own process group, killed by the kernel if
// the test process dies; kill9(), pause(), pause_for(), restart() are its
// faults) listening on 127.0.0.1 only, with its Unix socket in the temp dir,
// no binary log, a small InnoDB buffer pool and the redo log flushed once a
// second (innodb_flush_log_at_trx_commit=2). It returns only once a client
// connection (MariaDB Connector/C) runs `SELECT 1`, so tests never sleep
// before connecting.
//
// Accounts: root@localhost without a password, reachable through the Unix
// socket only, is the fixture's own (query()). Clients use user() "zklock",
// with all privileges on database() "zklock", from 127.0.0.1; with
// MariaDBServerOptions::password it must give that password. The account is
// made by SQL over the fixture's own client connection, so the password is on
// no command line and in no file.
//
// MariaDB runs as root only when told to. When this process runs as root,
// mariadb-install-db and mariadbd run as options.os_user through
// `setpriv --reuid --regid --init-groups --pdeathsig keep` (setpriv execs,
// so the child's pid is the server's), and the temp dir is chowned to that
// user; the temp dir's parent ($TMPDIR or /tmp) must be searchable by it.
//
// Requirements: the Debian packages mariadb-server (mariadb-install-db,
// mariadbd) and, as a run-time library, libmariadb3; util-linux setpriv when
// running as root. Library: zklock::testing_backends.
//
// Thread-safety: MariaDBServer is not thread-safe; use each object from one
// thread. Create it on a thread that outlives it (see ChildProcess).
#pragma once

#include <zklock/testing/backends_export.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "zklock/testing/process.hpp"
#include "zklock/testing/server_process.hpp"
#include "zklock/testing/test_certificates.hpp"

namespace zklock::testing {

/// Options of a MariaDBServer.
struct MariaDBServerOptions {
    /// Port on 127.0.0.1. Default 0: a free port chosen at start.
    std::uint16_t port = 0;
    /// The server program. Default "/usr/sbin/mariadbd".
    std::string server = "/usr/sbin/mariadbd";
    /// The data directory initialiser. Default "/usr/bin/mariadb-install-db".
    std::string install_db = "/usr/bin/mariadb-install-db";
    /// The user the server runs as when this process runs as root (ignored
    /// otherwise). Default "mysql", the Debian package's.
    std::string os_user = "mysql";
    /// How long a start may take, mariadb-install-db included (constructor), or
    /// the server alone (restart()), before it fails. Default 60 s.
    std::chrono::milliseconds start_timeout{60000};
    /// Extra mariadbd arguments appended last, so they override the generated
    /// ones (e.g. {"--general-log=1"}). Default: none.
    std::vector<std::string> extra_args;
    /// The password of user() "zklock"; when set, clients must give it.
    /// Default empty: no password.
    std::string password;
    /// TLS: the server's certificate and key and the CA of client
    /// certificates (server_cert_file, server_key_file, ca_file of
    /// make_test_certificates()), copied into the temp dir for the server's
    /// user (--ssl-cert, --ssl-key, --ssl-ca). Default: none, no TLS.
    std::optional<TestCertificates> tls;
    /// With `tls`: require_secure_transport=ON, TCP connections over TLS only
    /// (MariaDB refuses one without TLS as "Access denied"; the Unix socket
    /// counts as secure); without `tls` the constructor throws
    /// std::invalid_argument. Default false.
    bool require_tls = false;
};

/// One MariaDB data directory and its server.
///
/// Errors: the constructor and restart() throw std::runtime_error when
/// mariadb-install-db fails or the server does not become ready within the
/// start timeout or its process exits; the message holds the exit status and
/// the last 20 lines of the log. std::system_error for failures to create
/// files or start programs.
///
/// Destruction stops the server (SIGTERM; SIGKILL after 10 s) and removes the
/// temp dir with the data directory.
///
/// Thread-safety: not thread-safe; use from one thread.
class ZKLOCK_TESTING_BACKENDS_EXPORT MariaDBServer : public ServerProcess {
public:
    /// Starts a MariaDB server on loopback and waits until it answers a query (throws otherwise).
    explicit MariaDBServer(MariaDBServerOptions options = {});
    ~MariaDBServer() override;

    MariaDBServer(const MariaDBServer&) = delete;
    MariaDBServer& operator=(const MariaDBServer&) = delete;
    MariaDBServer(MariaDBServer&&) = delete;
    MariaDBServer& operator=(MariaDBServer&&) = delete;

    // port(), pid(), running(), paused(), log_path(), log_tail() and the
    // faults come from ServerProcess (connect_string() is hidden here).

    /// "127.0.0.1".
    [[nodiscard]] std::string host() const;
    /// The clients' account: "zklock".
    [[nodiscard]] std::string user() const;
    /// The clients' database: "zklock".
    [[nodiscard]] std::string database() const;
    /// "mysql://zklock@127.0.0.1:PORT/zklock": never with the password (give it
    /// by MysqlOptions::password, or add it to the URL yourself).
    [[nodiscard]] std::string connect_string() const;
    /// The server's Unix socket (in directory()).
    [[nodiscard]] std::filesystem::path socket_path() const;

    /// SIGTERM: a clean shutdown (clients disconnected, InnoDB flushed),
    /// SIGKILL after 10 s; reaps the server. No-op when stopped.
    using ServerProcess::stop;
    /// SIGKILL: a crash (the next start runs InnoDB's recovery). No-op when stopped.
    using ServerProcess::kill9;
    /// Stops the server if it runs, then starts it again on the same port and
    /// data directory; returns once it is ready. Data survives.
    using ServerProcess::restart;
    /// SIGSTOP / SIGCONT: connections stay open but nothing answers.
    using ServerProcess::pause;

    /// Runs `sql` (several statements separated by ';' allowed) as root over
    /// the Unix socket and returns the rows of the last statement that had
    /// any: columns joined by '|', each row ended by '\n', NULL as "NULL"
    /// ("1\n" for "SELECT 1"; "" for statements without rows). Throws
    /// std::runtime_error with the server's message when a statement fails or
    /// the server does not answer within `timeout`.
    std::string query(const std::string& sql, std::chrono::milliseconds timeout = std::chrono::seconds(30));

    /// The server's version ("10.11.6-MariaDB-0+deb12u1"): SELECT VERSION().
    [[nodiscard]] std::string version();

    /// The temp dir: holds the data directory, the socket and the log.
    [[nodiscard]] const std::filesystem::path& directory() const noexcept;
    /// The data directory (mariadbd --datadir).
    [[nodiscard]] const std::filesystem::path& data_dir() const noexcept;

private:
    void install_db(std::chrono::steady_clock::time_point deadline);
    void create_account();
    void install_tls();
    void spawn() override;
    [[nodiscard]] bool serving(std::chrono::milliseconds timeout) override;
    void stop_process() override;

    TempDir temp_dir_;
    std::filesystem::path data_dir_;
    MariaDBServerOptions options_;
};

}  // namespace zklock::testing
