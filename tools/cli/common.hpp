// What zklock's commands and zklock-bench's share: exit statuses, the connect,
// timeout and credential options, and what a failure is called.
#pragma once

#include "arguments.hpp"

#include <zklock/acl.hpp>
#include <zklock/error.hpp>
#include <zklock/session.hpp>
#include <zklock/tls_options.hpp>

#include <CLI/CLI.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace zklock::cli {

/// Exit statuses shared by the subcommands (flock(1) and consul lock conventions).
inline constexpr int exit_not_acquired = 75;  ///< EX_TEMPFAIL: lock not acquired, command not run
inline constexpr int exit_lock_lost = 76;     ///< the lock was lost while the command ran
inline constexpr int exit_usage = 64;         ///< EX_USAGE: bad arguments or lock path
inline constexpr int exit_no_lock_path = 66;  ///< EX_NOINPUT: zklock status: a lock path does not exist
inline constexpr int exit_unavailable = 69;   ///< EX_UNAVAILABLE: no server reachable (or no zklock-bench)
inline constexpr int exit_noperm = 77;        ///< EX_NOPERM: not authorized, authentication refused, insecure ACL
inline constexpr int exit_config = 78;        ///< EX_CONFIG: the connect string's chroot does not exist
/// The lock was revoked while the command ran (zklock run --revocable): a
/// revocation request asked the holder to let go; the command was stopped and
/// the lock released. Past sysexits' range, so that no script mistakes it.
inline constexpr int exit_revoked = 79;
/// TLS failed (--tls-ca ...), one status per reason, past sysexits' range as
/// exit_revoked: the handshake (not a TLS port, our certificate refused), a
/// server certificate no trusted CA signed, an expired one, one for another
/// host, and (etcd) a TLS-only server reached without TLS.
inline constexpr int exit_tls_handshake = 80;
inline constexpr int exit_tls_untrusted = 81;
inline constexpr int exit_tls_expired = 82;
inline constexpr int exit_tls_wrong_host = 83;
inline constexpr int exit_tls_required = 84;

/// The lines that describe zklock-bench's commands, in zklock's list of
/// commands as in zklock-bench's.
inline constexpr const char* bench_description = "Measure acquire/release latency and contended throughput";
inline constexpr const char* chaos_description =
    "Safety soak: clients loop on one lock under random faults; checks and prints a summary";

/// Adds `-c/--connect HOSTS` (default $ZKLOCK_CONNECT, else 127.0.0.1:2181,
/// which the help says in those words: the value of the variable when the help
/// was printed is nobody else's business) to `cmd`. A value that is a shell
/// command (looks_like_a_command(): flock's `-c CMD`) is refused; with
/// `flock_hint` the refusal shows how zklock run writes it (`-- sh -c CMD`).
void add_connect_option(CLI::App& cmd, std::string& connect, bool flock_hint = false);
/// How long a command tries to reach a server unless told (etcdctl's --dial-timeout).
inline constexpr std::chrono::milliseconds default_connect_timeout{2000};
/// Adds `--connect-timeout TIME` (milliseconds, or with a unit: 500ms, 2s; more
/// than 0) to `cmd`; `timeout` starts at default_connect_timeout.
void add_connect_timeout_option(CLI::App& cmd, std::chrono::milliseconds& timeout);
/// A CLI11 check of a duration as parse_duration_in() reads it.
CLI::Validator duration_check(duration_range range);
/// The same from 0 (`allow_zero`) or from 1 ms to max_wait.
CLI::Validator duration_check(bool allow_zero);

/// What the help of every duration option ends with: how its value is written.
inline constexpr const char* duration_forms =
    "; TIME is milliseconds, or a number with a unit: 500ms, 1.5s, 2m, 1h (a plain 1-999 gets a note)";

/// Adds a duration option `names` ("--grace") to `cmd`, stored in `ms` as
/// milliseconds: a plain integer is milliseconds, or a number with a unit
/// (parse_wait_duration()), within `range` (parse_duration_in()'s message
/// otherwise). A plain integer from 1 to 999 gets duration_unit_hint()'s note
/// on stderr, as run's -w gets one: --connect-timeout 5 is 5 ms, and says so.
/// The help shows TIME, `description` and, with `show_default`, the value
/// `ms` holds now as duration_text() writes it. One of these for
/// every duration option of every command, so that all take the same forms.
///@{
CLI::Option* add_duration_option(CLI::App& cmd, const std::string& names, int& ms, const std::string& description,
                                 duration_range range, bool show_default = true);
CLI::Option* add_duration_option(CLI::App& cmd, const std::string& names, std::chrono::milliseconds& ms,
                                 const std::string& description, duration_range range, bool show_default = true);
///@}
/// --names zklock|curator|kazoo: how the `what` zklock creates is named
/// (zklock::node_names); `names` keeps the text, checked by CLI11.
void add_names_option(CLI::App& cmd, std::string& names, const std::string& what);
/// The default connect string: $ZKLOCK_CONNECT, else 127.0.0.1:2181.
std::string default_connect();

// --- credentials and ACLs (--auth-file, $ZKLOCK_AUTH_FILE, --acl) -----------------------

/// The environment variable naming the auth file when --auth-file is not given.
/// zklock removes it from the environment of the commands it runs.
inline constexpr const char* auth_file_variable = "ZKLOCK_AUTH_FILE";

struct auth_options {
    std::string file;              ///< --auth-file; empty: $ZKLOCK_AUTH_FILE, if set
    std::vector<std::string> acl;  ///< --acl entries (zkCli syntax), joined with ','
    TlsOptions tls;                ///< --tls-ca, --tls-cert, --tls-key, --tls-insecure
};

/// What --auth-file and --acl give. Secrets stay in here: nothing prints them.
struct credentials {
    std::vector<auth_entry> zookeeper;  ///< every line of the auth file but redis: and mysql: ones
    std::string redis_user;             ///< from a `redis:USER:PASSWORD` line; empty: none
    std::string redis_password;
    std::string mysql_user;             ///< from a `mysql:USER:PASSWORD` line; empty: none
    std::string mysql_password;
    std::optional<acl_list> acl;        ///< --acl; none: the open default
    TlsOptions tls;                     ///< the TLS options, checked (validate_tls)
};

/// Adds --auth-file FILE, the TLS options (--tls-ca FILE, --tls-cert FILE,
/// --tls-key FILE, --tls-insecure) and, with `with_acl`, --acl ACL to `cmd`.
void add_auth_options(CLI::App& cmd, auth_options& o, bool with_acl = true);
/// Reads the auth file (lines `digest:user:password` for ZooKeeper,
/// `redis:user:password` for Redis, `mysql:user:password` for MySQL; refused when group or others may read it)
/// parses --acl and checks the TLS files (validate_tls). On bad input prints
/// "zklock: ..." (never a secret) and
/// returns nullopt: the command exits with exit_usage.
std::optional<credentials> load_credentials(const auth_options& o);
/// What load_credentials() makes of the entries read from the auth file
/// `file` (none: no file) and the --acl words: the credentials, or the
/// problem it prints instead (never a secret).
struct credentials_or_problem {
    std::optional<credentials> value;
    std::string problem;
};
credentials_or_problem credentials_of(std::vector<auth_entry> entries, const std::string& file,
                                      const std::vector<std::string>& acl_words);
/// Puts the ZooKeeper part of `c` into `s` (auth, TLS, and the ACL when given).
void apply(const credentials& c, SessionOptions& s);

/// The exit status for an error from the server or the library: exit_noperm for
/// not authorized / authentication refused / an insecure ACL, exit_usage for
/// bad input, exit_config for errc::no_node (zklock creates every missing node
/// of a lock path, so what is missing is the connect string's chroot),
/// exit_not_acquired for a persistent node blocking the queue,
/// exit_unavailable otherwise.
int exit_status_for(const std::error_code& ec);

/// Why `path` is no lock path (detail::validate_lock_path()), quoting it
/// shortened(): "lock path must be absolute (start with '/'): 'x'"; empty
/// when it is one.
std::string lock_path_problem(const std::string& path);

/// Writes "zklock: <what>" to stderr with control characters escaped
/// (escape_control()): notices quote node data, ids, paths and failure details.
void notice(const std::string& what);
/// What notice() writes for `what`, its line break included.
std::string notice_text(const std::string& what);

/// "could not connect to HOSTS within N ms: " and what each server gave
/// (probe_servers()): what a connect that timed out says.
std::string connect_timeout_text(const SessionOptions& o);

/// Why a connect failed, in words, and the exit status that goes with it.
struct connect_failure {
    std::string text;
    int status = exit_unavailable;
    /// The code to report it by (connect_or_throw()): exit_status_for(code) is `status`.
    std::error_code code;
};

/// What a connect of `o` that failed with `ec` is called:
/// - errc::timeout: connect_timeout_text() (what each server gave: connection
///   refused, ...), exit_unavailable;
/// - errc::invalid_argument (the C client refused the connect string): a
///   malformed one says what is wrong with it (connect_string_problem()),
///   exit_usage; a well-formed one whose hosts do not resolve says so
///   (unresolved_hosts(): an unknown name, or a DNS that does not answer),
///   exit_unavailable;
/// - the authentication the server refused, exit_noperm;
/// - else the error, exit_status_for(ec).
connect_failure describe_connect_failure(const SessionOptions& o, const std::error_code& ec);

/// describe_connect_failure()'s text.
std::string connect_failure_text(const SessionOptions& o, const std::error_code& ec);

/// "the chroot /app of the connect string does not exist on the server", or
/// empty when `connect` has no chroot: what errc::no_node means for a command
/// (zklock creates every missing node of a lock path).
std::string missing_chroot_text(const std::string& connect);

/// `ec` in words for a command connected with `connect`: missing_chroot_text()
/// for errc::no_node when it has a chroot, else the error's message.
std::string failure_text(const std::error_code& ec, const std::string& connect);

/// A zklock::error whose what() is the text given, said as a whole: no
/// ": <the code's message>" after it (std::system_error's what() appends one).
class said_error : public zklock::error {
public:
    said_error(std::error_code ec, std::string text) : error(ec, text), text_(std::move(text)) {}
    const char* what() const noexcept override { return text_.c_str(); }

private:
    std::string text_;
};

/// Connects `session`, or throws said_error with connect_failure_text(): what
/// report_connect_failure() says, for code that reports by exception (bench).
void connect_or_throw(Session& session);

/// Tells why connecting `session` failed and returns the exit status
/// (describe_connect_failure()): the server refused the authentication
/// (exit_noperm, naming the identity), a malformed connect string
/// (exit_usage), hosts that do not resolve or no server reachable
/// (exit_unavailable, saying what each server gave: connection refused,
/// unreachable, no answer, or a listener that is no serving ZooKeeper;
/// probe_servers()).
int report_connect_failure(const Session& session, const std::error_code& ec);

/// Tells why `doing` ("acquire lock /x", "campaign in /x", "list /x") failed
/// with `ec`, using `detail` (Mutex::failure_detail(): the path that refused
/// which identity, the too open ACL, the blocking persistent node, the missing
/// chroot) when there is one, and returns exit_status_for(ec).
int report_failure(const Session& session, const std::string& doing, const std::error_code& ec,
                   const std::string& detail = {});

/// Reads --auth-file and --acl into `s`; false (after telling why) when they
/// are refused: the command then exits with exit_usage.
bool load_into(const auth_options& o, SessionOptions& s);

/// A command's Session options: `connect`, `connect_timeout`, and its
/// --auth-file and --acl (load_into); nullopt (after telling why) when they
/// are refused: the command then exits with exit_usage.
std::optional<SessionOptions> session_options_of(const std::string& connect,
                                                 std::chrono::milliseconds connect_timeout, const auth_options& auth);

} // namespace zklock::cli
