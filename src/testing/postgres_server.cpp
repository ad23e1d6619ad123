#include "zklock/testing/postgres_server.hpp"

#include "support/cloexec_file.hpp"
#include "testing/log_tail.hpp"
#include "testing/posix_io.hpp"
#include "testing/private_file.hpp"

#include "support/secrets.hpp"

#include <libpq-fe.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <system_error>
#include <thread>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace zklock::testing {
namespace {

using steady = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string read_file(const std::filesystem::path& path) { return detail::read_file_cloexec(path); }

// Parent pid and state of a process from /proc/<pid>/stat; nullopt when gone.
struct proc_stat {
    pid_t ppid = 0;
    char state = '?';
};

std::optional<proc_stat> read_proc_stat(pid_t pid) {
    const std::string text = read_file("/proc/" + std::to_string(pid) + "/stat");
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    const auto close = text.rfind(')');
    if (close == std::string::npos || close + 4 > text.size()) return std::nullopt;
    proc_stat st;
    st.state = text[close + 2];
    try {
        st.ppid = static_cast<pid_t>(std::stol(text.substr(close + 4)));
    } catch (const std::exception&) {
        return std::nullopt;
    }
    return st;
}

// Every process whose parent is ppid, zombies included.
std::vector<pid_t> children_of(pid_t ppid) {
    std::vector<pid_t> out;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const auto name = entry.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
        const auto pid = static_cast<pid_t>(std::stol(name));
        const auto st = read_proc_stat(pid);
        if (st && st->ppid == ppid) out.push_back(pid);
    }
    return out;
}

bool alive(pid_t pid) {
    const auto st = read_proc_stat(pid);
    return st && st->state != 'Z' && st->state != 'X';
}

// Signals a postmaster child and, as it leads its own session and process
// group, whatever it started.
void signal_child(pid_t pid, int sig) noexcept {
    if (::getpgid(pid) == pid) {
        ::kill(-pid, sig);
    } else {
        ::kill(pid, sig);
    }
}

}  // namespace

bool postgres_ready(std::uint16_t port, milliseconds timeout) {
    // libpq's connect_timeout counts whole seconds, at least 2: round up.
    const long long seconds = std::max<long long>(2, (timeout.count() + 999) / 1000);
    // No password: a server that asks for one has answered (PQPING_OK), as
    // with pg_isready. libpq marks its socket close-on-exec itself and closes
    // it before PQping returns.
    const std::string conninfo = "host=127.0.0.1 port=" + std::to_string(port) +
                                 " user=postgres dbname=postgres application_name=zklock-probe"
                                 " sslmode=disable gssencmode=disable connect_timeout=" +
                                 std::to_string(seconds);
    return PQping(conninfo.c_str()) == PQPING_OK;
}

// --- PostgresServer ----------------------------------------------------------

PostgresServer::PostgresServer(PostgresServerOptions options)
    : ServerProcess("PostgreSQL server", options.start_timeout), temp_dir_("zklock-pg-"),
      options_(std::move(options)) {
    if (options_.require_tls && !options_.tls) throw std::invalid_argument("PostgresServer: require_tls without tls");
    const auto deadline = steady::now() + options_.start_timeout;
    data_dir_ = temp_dir_.path() / "data";
    configure(options_.port != 0 ? options_.port : free_loopback_port(), temp_dir_.path() / "postgres.log", data_dir_);
    run_as(options_.os_user, temp_dir_.path());
    if (!options_.password.empty()) {
        const auto line = zklock::detail::pgpass_line(options_.password);
        if (!line) throw std::invalid_argument("PostgresServer: a password with a line break");
        pgpass_path_ = temp_dir_.path() / "pgpass";
        posix_io::write_private_file(pgpass_path_, *line);  // for psql, run as this process's user
    }
    initdb(deadline);
    if (options_.tls) install_tls();
    spawn();
    wait_until_serving(deadline);
}

PostgresServer::~PostgresServer() {
    try {
        stop();
    } catch (...) {
    }
}

void PostgresServer::initdb(steady::time_point deadline) {
    std::vector<std::string> argv{options_.bin_dir + "/initdb", "-D", data_dir_.string(), "-U", "postgres", "-E", "UTF8",
                                  "--locale=C", "--no-sync", "--no-instructions"};
    // The password: in a file only initdb's user may read, gone once initdb is done.
    const auto pwfile = temp_dir_.path() / "initdb-pwfile";
    struct remove_pwfile {
        std::filesystem::path path;
        ~remove_pwfile() {
            std::error_code ignored;
            std::filesystem::remove(path, ignored);
        }
    } cleanup{options_.password.empty() ? std::filesystem::path() : pwfile};
    if (options_.password.empty()) {
        argv.insert(argv.end(), {"-A", "trust"});
    } else {
        posix_io::write_private_file(pwfile, options_.password + "\n", server_uid(), server_gid());
        argv.insert(argv.end(), {"-A", "scram-sha-256", "--pwfile=" + pwfile.string()});
    }
    ChildProcessOptions child;
    child.working_dir = temp_dir_.path();
    child.output_path = temp_dir_.path() / "initdb.log";
    // TZ spares initdb its scan of the system's time zone files.
    child.env = {{"LC_ALL", "C"}, {"TZ", "UTC"}};
    run_setup("initdb", std::move(argv), std::move(child), deadline);
}

void PostgresServer::install_tls() {
    const auto& files = *options_.tls;
    const auto copy = [&](const std::filesystem::path& from, const char* name) {
        posix_io::write_private_file(temp_dir_.path() / name, read_file(from), server_uid(), server_gid());
    };
    copy(files.server_cert_file, "server.crt");
    copy(files.server_key_file, "server.key");  // the server refuses a key others may read
    copy(files.ca_file, "ca.crt");
    if (!options_.require_tls) return;
    // "host ..." lines (TCP, with or without TLS) become "hostssl ..." (TLS only).
    const auto hba = data_dir_ / "pg_hba.conf";
    const std::string text = read_file(hba);
    std::string out;
    std::size_t start = 0;
    while (start < text.size()) {
        auto end = text.find('\n', start);
        end = end == std::string::npos ? text.size() : end + 1;
        std::string line = text.substr(start, end - start);
        if (line.starts_with("host ") || line.starts_with("host\t")) line = "hostssl" + line.substr(4);
        out += line;
        start = end;
    }
    std::filesystem::remove(hba);
    posix_io::write_private_file(hba, out, server_uid(), server_gid());
}

void PostgresServer::spawn() {
    std::vector<std::string> argv{options_.bin_dir + "/postgres",
                                  "-D", data_dir_.string(),
                                  "-p", std::to_string(port()),
                                  "-k", temp_dir_.path().string(),
                                  "-c", "listen_addresses=127.0.0.1",
                                  "-c", "fsync=off",
                                  "-c", "max_connections=200",
                                  "-c", "shared_buffers=32MB"};
    if (options_.tls) {
        const auto& dir = temp_dir_.path();
        argv.insert(argv.end(), {"-c", "ssl=on", "-c", "ssl_cert_file=" + (dir / "server.crt").string(), "-c",
                                 "ssl_key_file=" + (dir / "server.key").string(), "-c",
                                 "ssl_ca_file=" + (dir / "ca.crt").string()});
    }
    argv.insert(argv.end(), options_.extra_args.begin(), options_.extra_args.end());
    ChildProcessOptions child;
    child.working_dir = temp_dir_.path();
    child.output_path = log_path();
    child.env = {{"LC_ALL", "C"}};
    launch(std::move(argv), std::move(child));
}

bool PostgresServer::serving(milliseconds timeout) { return postgres_ready(port(), timeout); }

void PostgresServer::kill_process() noexcept {
    auto* process = this->process();
    if (process == nullptr) return;
    try {
        if (!process->running()) return;
        // A stopped postmaster can neither start children nor reap them, so
        // the pids found below stay valid (at worst zombies) until it dies.
        process->pause();
        const auto children = children_of(process->pid());
        for (const pid_t child : children) signal_child(child, SIGKILL);
        process->kill9();
        // A new postmaster refuses to start while old children still hold the
        // shared memory; wait for them to be gone (a zombie holds nothing).
        const auto deadline = steady::now() + milliseconds(10000);  // for the children to exit
        while (std::any_of(children.begin(), children.end(), alive) && steady::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(2));  // allowed: polling interval of a deadline wait
        }
    } catch (...) {
    }
}

std::string PostgresServer::host() const { return "127.0.0.1"; }

std::string PostgresServer::connect_string() const {
    return "host=127.0.0.1 port=" + std::to_string(port()) + " user=postgres dbname=postgres";
}

// Fast shutdown (SIGTERM would wait for every client to leave).
void PostgresServer::stop_process() { stop_by_signal(SIGINT, milliseconds(10000)); }

bool PostgresServer::pause_process() noexcept {
    // The postmaster first, so that it starts no child meanwhile.
    auto* process = this->process();
    if (!process->pause()) return false;
    try {
        const auto children = children_of(process->pid());
        for (const pid_t child : children) signal_child(child, SIGSTOP);
        const auto deadline = steady::now() + milliseconds(5000);  // for every child to stop
        const auto running_child = [](pid_t pid) {
            const auto st = read_proc_stat(pid);
            return st && st->state != 'T' && st->state != 'Z' && st->state != 'X';
        };
        while (std::any_of(children.begin(), children.end(), running_child) && steady::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));  // allowed: polling interval of a deadline wait
        }
    } catch (...) {
    }
    return true;
}

std::vector<pid_t> PostgresServer::resume_targets() const {
    const pid_t postmaster = pid();
    if (postmaster <= 0) return {};
    std::vector<pid_t> targets;
    for (const pid_t child : children_of(postmaster)) targets.push_back(::getpgid(child) == child ? -child : child);
    targets.push_back(-postmaster);  // last: the children are running when it looks at them
    return targets;
}

std::string PostgresServer::version() {
    auto v = psql("SHOW server_version");
    while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
    return v;
}

std::string PostgresServer::psql(const std::string& sql, milliseconds timeout) {
    const std::string id = std::to_string(++psql_runs_);
    const auto out_path = temp_dir_.path() / ("psql-" + id + ".out");
    const auto err_path = temp_dir_.path() / ("psql-" + id + ".err");
    struct Cleanup {
        std::filesystem::path a, b;
        ~Cleanup() {
            std::error_code ignored;
            std::filesystem::remove(a, ignored);
            std::filesystem::remove(b, ignored);
        }
    } cleanup{out_path, err_path};
    ChildProcessOptions child;
    child.output_path = err_path;  // -o sends the query results to out_path; errors stay on stderr
    child.env = {{"LC_ALL", "C"}};
    if (!pgpass_path_.empty()) child.env.push_back({"PGPASSFILE", pgpass_path_.string()});
    ChildProcess process({options_.bin_dir + "/psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d",
                          connect_string(), "-o", out_path.string(), "-c", sql},
                         std::move(child));
    const auto status = process.wait_exit(timeout);
    if (!status) {
        process.kill9();
        throw std::runtime_error("psql against " + connect_string() + " did not finish within " +
                                 std::to_string(timeout.count()) + " ms: " + sql + "\n" + read_file(err_path));
    }
    if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
        throw std::runtime_error("psql against " + connect_string() + " " + describe_wait_status(*status) + ": " +
                                 sql + "\n" + read_file(err_path));
    }
    return read_file(out_path);
}

const std::filesystem::path& PostgresServer::directory() const noexcept { return temp_dir_.path(); }

const std::filesystem::path& PostgresServer::pgpass_path() const noexcept { return pgpass_path_; }

const std::filesystem::path& PostgresServer::data_dir() const noexcept { return data_dir_; }

std::vector<pid_t> PostgresServer::child_pids() const {
    const pid_t postmaster = pid();
    if (postmaster <= 0) return {};
    std::vector<pid_t> out = children_of(postmaster);
    out.erase(std::remove_if(out.begin(), out.end(), [](pid_t p) { return !alive(p); }), out.end());
    return out;
}

}  // namespace zklock::testing
