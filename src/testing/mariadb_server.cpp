#include "zklock/testing/mariadb_server.hpp"

#include "support/cloexec_file.hpp"
#include "testing/private_file.hpp"

#include <mysql.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <stdexcept>

#include <fcntl.h>
#include <signal.h>

namespace zklock::testing {
namespace {

using steady = std::chrono::steady_clock;
using std::chrono::milliseconds;

struct mariadb_closer {
    void operator()(MYSQL* m) const noexcept { mysql_close(m); }
};
using mariadb_handle = std::unique_ptr<MYSQL, mariadb_closer>;

struct mariadb_result_freer {
    void operator()(MYSQL_RES* r) const noexcept { mysql_free_result(r); }
};

// mysql_library_init is not thread-safe: once, before any connection.
void mariadb_library_init() {
    static std::once_flag once;
    std::call_once(once, [] { mysql_library_init(0, nullptr, nullptr); });
}

// A blocking connection of the fixture's own: `socket` non-empty for root over
// the Unix socket, else TCP to 127.0.0.1:port as `user`. Every wait bounded by
// `timeout` (whole seconds, at least 1). Throws std::runtime_error with the
// client's message.
mariadb_handle mariadb_connection(const std::string& socket, std::uint16_t port, const std::string& user,
                             const std::string& password, milliseconds timeout) {
    mariadb_library_init();
    mariadb_handle m(mysql_init(nullptr));
    if (!m) throw std::runtime_error("MariaDBServer: mysql_init failed");
    const unsigned seconds = static_cast<unsigned>(std::max<long long>(1, (timeout.count() + 999) / 1000));
    mysql_optionsv(m.get(), MYSQL_OPT_CONNECT_TIMEOUT, &seconds);
    mysql_optionsv(m.get(), MYSQL_OPT_READ_TIMEOUT, &seconds);
    mysql_optionsv(m.get(), MYSQL_OPT_WRITE_TIMEOUT, &seconds);
    const unsigned protocol = socket.empty() ? MYSQL_PROTOCOL_TCP : MYSQL_PROTOCOL_SOCKET;
    mysql_optionsv(m.get(), MYSQL_OPT_PROTOCOL, &protocol);
    if (!mysql_real_connect(m.get(), socket.empty() ? "127.0.0.1" : "localhost", user.c_str(),
                            password.empty() ? nullptr : password.c_str(), nullptr, port,
                            socket.empty() ? nullptr : socket.c_str(), CLIENT_MULTI_STATEMENTS)) {
        throw std::runtime_error(std::string("MariaDBServer: cannot connect: ") + mysql_error(m.get()));
    }
    // Connector/C opens a Unix socket without SOCK_CLOEXEC (its TCP sockets have it).
    const int fd = static_cast<int>(mysql_get_socket(m.get()));
    if (fd >= 0) ::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) | FD_CLOEXEC);
    return m;
}

std::string mariadb_query(MYSQL* m, const std::string& sql) {
    if (mysql_real_query(m, sql.data(), sql.size()) != 0)
        throw std::runtime_error("MariaDBServer: " + sql + ": " + mysql_error(m));
    std::string out;
    while (true) {
        std::unique_ptr<MYSQL_RES, mariadb_result_freer> res(mysql_store_result(m));
        if (res) {
            std::string rows;
            const unsigned n = mysql_num_fields(res.get());
            while (MYSQL_ROW row = mysql_fetch_row(res.get())) {
                const unsigned long* lengths = mysql_fetch_lengths(res.get());
                for (unsigned i = 0; i < n; ++i) {
                    if (i > 0) rows += '|';
                    rows += row[i] ? std::string(row[i], lengths[i]) : std::string("NULL");
                }
                rows += '\n';
            }
            out = std::move(rows);
        } else if (mysql_field_count(m) != 0) {
            throw std::runtime_error("MariaDBServer: " + sql + ": " + mysql_error(m));
        }
        const int next = mysql_next_result(m);
        if (next < 0) break;
        if (next > 0) throw std::runtime_error("MariaDBServer: " + sql + ": " + mysql_error(m));
    }
    return out;
}

// A string literal for SQL: quotes and backslashes escaped (the fixture's own
// account statements; no connection needed).
std::string mariadb_literal(const std::string& s) {
    std::string out = "'";
    for (const char c : s) {
        if (c == '\'' || c == '\\') out += '\\';
        out += c;
    }
    return out + "'";
}

}  // namespace

MariaDBServer::MariaDBServer(MariaDBServerOptions options)
    : ServerProcess("MariaDB server", options.start_timeout), temp_dir_("zklock-mariadb-"),
      options_(std::move(options)) {
    if (options_.require_tls && !options_.tls) throw std::invalid_argument("MariaDBServer: require_tls without tls");
    const auto deadline = steady::now() + options_.start_timeout;
    data_dir_ = temp_dir_.path() / "data";
    configure(options_.port != 0 ? options_.port : free_loopback_port(), temp_dir_.path() / "mariadbd.log", data_dir_);
    run_as(options_.os_user, temp_dir_.path());
    install_db(deadline);
    if (options_.tls) install_tls();
    spawn();
    wait_until_serving(deadline);
    try {
        create_account();
    } catch (const std::exception& e) {
        fail_start(e.what());
    }
}

MariaDBServer::~MariaDBServer() {
    try {
        stop();
    } catch (...) {
    }
}

void MariaDBServer::install_db(steady::time_point deadline) {
    // No test database, no host name lookups, root with the plain (empty)
    // password: the fixture's own account, over the socket only (below).
    std::vector<std::string> argv{options_.install_db,
                                  "--no-defaults",
                                  "--datadir=" + data_dir_.string(),
                                  // temporary tables in the server's own directory: bootstraps
                                  // that share /tmp under load fail now and then ("Could not
                                  // remove temporary table", then 1051 on mysql.tmp_user_sys)
                                  "--tmpdir=" + temp_dir_.path().string(),
                                  "--auth-root-authentication-method=normal",
                                  "--skip-test-db",
                                  "--skip-name-resolve",
                                  "--innodb-buffer-pool-size=16M",
                                  "--innodb-log-file-size=16M",
                                  // no buffer pool dump, and a shutdown that leaves
                                  // the redo log to the next start: 1.3 s instead of 4.5
                                  "--innodb-buffer-pool-dump-at-shutdown=0",
                                  "--innodb-buffer-pool-load-at-startup=0",
                                  "--innodb-fast-shutdown=2"};
    ChildProcessOptions child;
    child.working_dir = temp_dir_.path();
    child.output_path = temp_dir_.path() / "install-db.log";
    child.env = {{"LC_ALL", "C"}, {"TZ", "UTC"}};
    run_setup("mariadb-install-db", std::move(argv), std::move(child), deadline);
}

// The clients' account and database, made over root's socket connection: the
// password goes to the server in this statement only. Root keeps its socket
// account alone (install-db also makes TCP-reachable ones for the host name).
void MariaDBServer::create_account() {
    std::string sql = "CREATE DATABASE IF NOT EXISTS zklock; "
                      "CREATE USER IF NOT EXISTS 'zklock'@'127.0.0.1'";
    if (!options_.password.empty()) sql += " IDENTIFIED BY " + mariadb_literal(options_.password);
    sql += "; GRANT ALL ON zklock.* TO 'zklock'@'127.0.0.1'; "
           "DELETE FROM mysql.global_priv WHERE User = 'root' AND Host <> 'localhost'; "
           "DELETE FROM mysql.global_priv WHERE User = ''; FLUSH PRIVILEGES";
    auto m = mariadb_connection(socket_path().string(), 0, "root", "", start_timeout());
    (void)mariadb_query(m.get(), sql);
}

void MariaDBServer::install_tls() {
    const auto copy = [&](const std::filesystem::path& from, const char* name) {
        posix_io::write_private_file(temp_dir_.path() / name, detail::read_file_cloexec(from), server_uid(), server_gid());
    };
    copy(options_.tls->server_cert_file, "server.crt");
    copy(options_.tls->server_key_file, "server.key");
    copy(options_.tls->ca_file, "ca.crt");
}

void MariaDBServer::spawn() {
    std::vector<std::string> argv{options_.server,
                                  "--no-defaults",
                                  "--datadir=" + data_dir_.string(),
                                  "--tmpdir=" + temp_dir_.path().string(),
                                  "--port=" + std::to_string(port()),
                                  "--bind-address=127.0.0.1",
                                  "--socket=" + socket_path().string(),
                                  "--pid-file=" + (temp_dir_.path() / "mariadbd.pid").string(),
                                  "--skip-name-resolve",
                                  "--skip-log-bin",
                                  "--skip-performance-schema",
                                  "--innodb-buffer-pool-size=16M",
                                  "--innodb-log-file-size=16M",
                                  "--innodb-flush-log-at-trx-commit=2",
                                  "--innodb-buffer-pool-dump-at-shutdown=0",
                                  "--innodb-buffer-pool-load-at-startup=0",
                                  "--innodb-fast-shutdown=2",
                                  "--max-connections=500",
                                  "--max-connect-errors=1000000",
                                  "--log-warnings=1"};
    if (options_.tls) {
        const auto& dir = temp_dir_.path();
        argv.insert(argv.end(), {"--ssl-cert=" + (dir / "server.crt").string(), "--ssl-key=" + (dir / "server.key").string(),
                                 "--ssl-ca=" + (dir / "ca.crt").string()});
        if (options_.require_tls) argv.emplace_back("--require-secure-transport=ON");
    }
    argv.insert(argv.end(), options_.extra_args.begin(), options_.extra_args.end());
    ChildProcessOptions child;
    child.working_dir = temp_dir_.path();
    child.output_path = log_path();
    child.env = {{"LC_ALL", "C"}, {"TZ", "UTC"}};
    launch(std::move(argv), std::move(child));
}

bool MariaDBServer::serving(milliseconds timeout) {
    try {
        auto m = mariadb_connection(socket_path().string(), 0, "root", "", timeout);
        return mariadb_query(m.get(), "SELECT 1") == "1\n";
    } catch (const std::exception&) {
        return false;
    }
}

// SIGTERM: a clean shutdown (InnoDB flushed, clients disconnected).
void MariaDBServer::stop_process() { stop_by_signal(SIGTERM, milliseconds(10000)); }

std::string MariaDBServer::host() const { return "127.0.0.1"; }
std::string MariaDBServer::user() const { return "zklock"; }
std::string MariaDBServer::database() const { return "zklock"; }

std::string MariaDBServer::connect_string() const {
    return "mysql://zklock@127.0.0.1:" + std::to_string(port()) + "/zklock";
}

std::filesystem::path MariaDBServer::socket_path() const { return temp_dir_.path() / "mariadbd.sock"; }

std::string MariaDBServer::query(const std::string& sql, milliseconds timeout) {
    auto m = mariadb_connection(socket_path().string(), 0, "root", "", timeout);
    if (mysql_select_db(m.get(), "zklock") != 0)
        throw std::runtime_error(std::string("MariaDBServer: USE zklock: ") + mysql_error(m.get()));
    return mariadb_query(m.get(), sql);
}

std::string MariaDBServer::version() {
    auto v = query("SELECT VERSION()");
    while (!v.empty() && v.back() == '\n') v.pop_back();
    return v;
}

const std::filesystem::path& MariaDBServer::directory() const noexcept { return temp_dir_.path(); }

const std::filesystem::path& MariaDBServer::data_dir() const noexcept { return data_dir_; }

}  // namespace zklock::testing
