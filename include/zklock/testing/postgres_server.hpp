// A real PostgreSQL server for tests (the PostgreSQL comparison backend).
//
// The constructor runs initdb into a fresh temp dir and starts `postgres`
// (ChildProcess: own process group, killed by the kernel if the test process
// dies; a ServerProcess, whose kill9(), pause(), pause_for(), restart() are its
// faults) listening on 127.0.0.1 only, with its Unix socket in the temp dir and
// durability off (fsync=off). It returns only once the server accepts a
// connection and is ready for queries (checked by speaking the startup
// protocol over TCP), so tests never need to sleep before connecting.
// Authentication is `trust` for everyone; the superuser is "postgres". With
// PostgresServerOptions::password, the superuser gets that password (initdb
// --pwfile, from a 0600 file removed after initdb) and every connection, TCP
// or Unix socket, must give it (scram-sha-256 in pg_hba.conf). No secret is
// ever on a command line: psql() reads it from a password file (PGPASSFILE,
// mode 0600, pgpass_path()). With PostgresServerOptions::tls the server also
// speaks TLS (ssl=on), and with require_tls only TLS on TCP; psql() and the
// readiness probe still connect (libpq's default sslmode=prefer; a refusal
// counts as ready, as with pg_isready).
//
// PostgreSQL refuses to run as root. When this process runs as root, initdb
// and postgres run as options.os_user through `setpriv --reuid --regid
// --init-groups --pdeathsig keep` (setpriv execs, so the child's pid is the
// postmaster's, and the parent-death signal survives the user switch), and
// the temp dir is chowned to that user. The temp dir's parent ($TMPDIR or
// /tmp) must then be searchable by that user.
//
// The postmaster's children (checkpointer, backends, ...) run in their own
// sessions, so kill9() and pause() find them through /proc and signal each;
// when the test process dies, the kernel kills the postmaster and its
// children exit on their own as soon as they notice (within milliseconds).
//
// Requirements: PostgreSQL server binaries (Debian: postgresql-15, in
// /usr/lib/postgresql/15/bin); util-linux setpriv when running as root.
// Library: zklock::testing_backends (its probe uses libpq).
//
// Thread-safety: PostgresServer is not thread-safe; use each object from one
// thread. Create it on a thread that outlives it (see ChildProcess).
#pragma once

#include <zklock/testing/backends_export.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

#include "zklock/testing/process.hpp"
#include "zklock/testing/server_process.hpp"
#include "zklock/testing/test_certificates.hpp"

namespace zklock::testing {

/// Options of a PostgresServer.
struct PostgresServerOptions {
    /// Port on 127.0.0.1. Default 0: a free port chosen at start.
    std::uint16_t port = 0;
    /// Directory holding initdb, postgres and psql. Default "/usr/lib/postgresql/15/bin".
    std::string bin_dir = "/usr/lib/postgresql/15/bin";
    /// The user initdb and postgres run as when this process runs as root
    /// (ignored otherwise). Default "postgres".
    std::string os_user = "postgres";
    /// How long a start may take, initdb included (constructor), or the
    /// server alone (restart()), before it fails. Default 30 s.
    std::chrono::milliseconds start_timeout{30000};
    /// Extra postgres arguments appended last, so they override the
    /// generated ones (e.g. {"-c", "log_statement=all"}). Default: none.
    std::vector<std::string> extra_args;
    /// The password of the superuser "postgres"; when set, every client must
    /// give it (scram-sha-256). Default empty: trust, no password.
    std::string password;
    /// TLS: the server's certificate and key and the CA of client
    /// certificates (server_cert_file, server_key_file, ca_file of
    /// make_test_certificates()), copied into the temp dir for the server's
    /// user (the key mode 0600); the server then runs with ssl=on. Default:
    /// none, no TLS.
    std::optional<TestCertificates> tls;
    /// With `tls`: refuse every TCP connection without TLS (pg_hba.conf's
    /// `host` lines become `hostssl`; a client without TLS is told "no
    /// pg_hba.conf entry ..., no encryption"); without `tls` the constructor
    /// throws std::invalid_argument. Default false: TLS when the client asks.
    bool require_tls = false;
};

/// True when a PostgreSQL server on 127.0.0.1:port accepts a connection as
/// user "postgres" to database "postgres" within timeout (libpq's PQping:
/// PQPING_OK); false when nothing listens, the server is still starting or
/// shutting down, or it does not answer in time. Like pg_isready, a server
/// that asks for a password also counts as ready (no password is sent).
/// libpq counts the timeout in whole seconds, at least 2: it is rounded up.
[[nodiscard]] ZKLOCK_TESTING_BACKENDS_EXPORT bool postgres_ready(std::uint16_t port, std::chrono::milliseconds timeout);

/// One PostgreSQL cluster (initdb'ed data directory) and its server.
///
/// Errors: the constructor and restart() throw std::runtime_error when initdb
/// fails or the server does not become ready within the start timeout or its
/// process exits; the message holds the exit status and the last 20 lines of
/// the log. std::system_error for failures to create files or start programs.
///
/// Destruction stops the server (fast shutdown; SIGKILL to every process of
/// the server after 10 s) and removes the temp dir with the data directory.
///
/// Thread-safety: not thread-safe; use from one thread.
class ZKLOCK_TESTING_BACKENDS_EXPORT PostgresServer : public ServerProcess {
public:
    /// Starts a PostgreSQL server on loopback and waits until it accepts connections (throws otherwise).
    explicit PostgresServer(PostgresServerOptions options = {});
    ~PostgresServer() override;

    PostgresServer(const PostgresServer&) = delete;
    PostgresServer& operator=(const PostgresServer&) = delete;
    PostgresServer(PostgresServer&&) = delete;
    PostgresServer& operator=(PostgresServer&&) = delete;

    // port(), pid() (the postmaster's, -1 when stopped), running(), paused(),
    // log_path(), log_tail() and the faults come from ServerProcess, which
    // also has connect_string() "127.0.0.1:PORT" (hidden here by the conninfo).

    /// "127.0.0.1".
    [[nodiscard]] std::string host() const;
    /// A libpq conninfo: "host=127.0.0.1 port=PORT user=postgres dbname=postgres"
    /// (never with the password: add it, or point PGPASSFILE at pgpass_path()).
    [[nodiscard]] std::string connect_string() const;
    /// With a password: a PostgreSQL password file (mode 0600) that gives it for
    /// this server, for PGPASSFILE. Empty path without a password.
    [[nodiscard]] const std::filesystem::path& pgpass_path() const noexcept;

    /// Fast shutdown: SIGINT to the postmaster (open transactions are rolled
    /// back, clients disconnected, a shutdown checkpoint written), SIGKILL to
    /// every process of the server if it has not exited after 10 s; reaps the
    /// postmaster. Afterwards the port refuses connections. No-op when stopped.
    using ServerProcess::stop;
    /// SIGKILL to the postmaster and all its children at once: a crash (the
    /// next start runs crash recovery; committed data survives). Returns once
    /// they are all gone (waits up to 10 s for the children). No-op when stopped.
    using ServerProcess::kill9;
    /// Stops the server if it runs (gracefully), then starts it again on the
    /// same port and data directory; returns once it is ready. Data survives.
    using ServerProcess::restart;
    /// SIGSTOP to the postmaster and all its children: connections stay open
    /// but nothing answers. resume() sends SIGCONT (children first). No-op when
    /// stopped; pause() of a paused server does nothing. pause_for() resumes
    /// them all by itself.
    using ServerProcess::pause;

    /// Runs `psql -X -q -A -t -v ON_ERROR_STOP=1 -d connect_string() -c sql`
    /// against this server (as the calling OS user; TCP; with a password, through
    /// PGPASSFILE=pgpass_path() in its environment) and returns
    /// the query output, e.g. "1\n" for "select 1", "a|1\nb|2\n" for two rows
    /// of two columns, "" for statements without rows (-q: no command tags).
    /// Several statements separated by ';' run in one transaction. Throws
    /// std::runtime_error with psql's stderr when psql exits non-zero (e.g. an
    /// SQL error, or the server is down) or does not finish within timeout.
    std::string psql(const std::string& sql, std::chrono::milliseconds timeout = std::chrono::seconds(30));

    /// The server's version ("15.8 (Debian 15.8-0+deb12u1)"): SHOW server_version.
    [[nodiscard]] std::string version();

    /// The temp dir: holds the data directory, the Unix socket and the logs.
    [[nodiscard]] const std::filesystem::path& directory() const noexcept;
    /// The data directory (postgres -D).
    [[nodiscard]] const std::filesystem::path& data_dir() const noexcept;
    /// The pids of the postmaster's current children (empty when stopped).
    [[nodiscard]] std::vector<pid_t> child_pids() const;

private:
    void initdb(std::chrono::steady_clock::time_point deadline);
    void install_tls();
    void spawn() override;
    [[nodiscard]] bool serving(std::chrono::milliseconds timeout) override;
    void stop_process() override;
    void kill_process() noexcept override;
    bool pause_process() noexcept override;
    [[nodiscard]] std::vector<pid_t> resume_targets() const override;

    TempDir temp_dir_;
    std::filesystem::path data_dir_;
    std::filesystem::path pgpass_path_;
    PostgresServerOptions options_;
    unsigned psql_runs_ = 0;
};

}  // namespace zklock::testing
