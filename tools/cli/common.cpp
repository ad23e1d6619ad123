#include "common.hpp"

#include "arguments.hpp"
#include "connect_string.hpp"
#include "reachability.hpp"
#include "terminal_text.hpp"

#include <zklock/error.hpp>
#include <zklock/lock_path.hpp>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <utility>

namespace zklock::cli {

std::string default_connect() {
    const char* env = std::getenv("ZKLOCK_CONNECT");
    return env && *env ? env : "127.0.0.1:2181";
}

void add_connect_option(CLI::App& cmd, std::string& connect, bool flock_hint) {
    connect = default_connect();
    cmd.add_option("-c,--connect", connect,
                   "ZooKeeper hosts, host:port[,host:port...][/chroot] (default: $ZKLOCK_CONNECT, else 127.0.0.1:2181)")
        ->type_name("HOSTS")
        ->check(CLI::Validator(
            [flock_hint](std::string& value) {
                if (!looks_like_a_command(value)) return std::string();
                if (flock_hint) return flock_command_hint("zklock run", "", value);
                return std::string("-c is the ZooKeeper connect string (host:port,...), not a command");
            },
            ""));
}

CLI::Validator duration_check(duration_range range) {
    return CLI::Validator(
        [range](std::string& text) {
            const auto r = parse_duration_in(text, range);
            return r ? std::string() : r.error;
        },
        "");
}

CLI::Validator duration_check(bool allow_zero) {
    return duration_check(duration_range{std::chrono::milliseconds(allow_zero ? 0 : 1), max_wait});
}

namespace {

template <class Store>
CLI::Option* add_duration(CLI::App& cmd, const std::string& names, std::chrono::milliseconds now, Store store,
                          const std::string& description, duration_range range, bool show_default) {
    // The name a note calls it by: the long one ("-w,--timeout": "--timeout").
    const auto name = names.substr(names.rfind(',') + 1);
    auto* option = cmd.add_option_function<std::string>(
                          names,
                          [store, name, range](const std::string& text) {
                              store(parse_wait_duration(text).value);
                              if (const auto hint = duration_unit_hint(name, text, range); !hint.empty()) notice(hint);
                          },
                          description + duration_forms)
                       ->type_name("TIME")
                       ->check(duration_check(range));
    if (show_default) option->default_str(duration_text(now));
    return option;
}

} // namespace

CLI::Option* add_duration_option(CLI::App& cmd, const std::string& names, int& ms, const std::string& description,
                                 duration_range range, bool show_default) {
    return add_duration(
        cmd, names, std::chrono::milliseconds(ms),
        [&ms](std::chrono::milliseconds v) { ms = static_cast<int>(v.count()); }, description, range, show_default);
}

CLI::Option* add_duration_option(CLI::App& cmd, const std::string& names, std::chrono::milliseconds& ms,
                                 const std::string& description, duration_range range, bool show_default) {
    return add_duration(
        cmd, names, ms, [&ms](std::chrono::milliseconds v) { ms = v; }, description, range, show_default);
}

void add_connect_timeout_option(CLI::App& cmd, std::chrono::milliseconds& timeout) {
    timeout = default_connect_timeout;
    add_duration_option(cmd, "--connect-timeout", timeout,
                        "Give up when no server gives a session within TIME (2s here, as etcdctl's --dial-timeout: a "
                        "command fails fast; the library's SessionOptions::connect_timeout defaults to 15s)",
                        {std::chrono::milliseconds(1), max_wait});
}

void add_names_option(CLI::App& cmd, std::string& names, const std::string& what) {
    cmd.add_option("--names", names,
                   "Name the " + what + " as zklock, Curator or kazoo does, so that the peer's recipe on the path "
                   "waits for it (zklock waits for every peer's nodes whatever this says)")
        ->type_name("NAMING")
        ->capture_default_str()
        ->check(CLI::IsMember({"zklock", "curator", "kazoo"}));
}

void add_auth_options(CLI::App& cmd, auth_options& o, bool with_acl) {
    cmd.add_option("--auth-file", o.file,
                   "Credentials, one per line: digest:USER:PASSWORD (ZooKeeper), redis:USER:PASSWORD (Redis), "
                   "mysql:USER:PASSWORD (MySQL); "
                   "the file must be private (chmod 600). Default: $ZKLOCK_AUTH_FILE")
        ->type_name("FILE");
    cmd.add_option("--tls-ca", o.tls.ca_file,
                   "Connect over TLS to the servers' secure client port (the connect string names it), trusting the "
                   "CA certificates of this PEM file; the server's certificate must name the host connected to")
        ->type_name("FILE");
    cmd.add_option("--tls-cert", o.tls.cert_file, "Client certificate (PEM) presented over TLS, with --tls-key")
        ->type_name("FILE");
    cmd.add_option("--tls-key", o.tls.key_file,
                   "Private key (PEM, unencrypted) of --tls-cert; the file must be private (chmod 600)")
        ->type_name("FILE");
    cmd.add_flag("--tls-insecure", o.tls.insecure,
                 "TLS without checking the server's certificate at all: for tests only (anyone on the path can read "
                 "and change the traffic)");
    if (with_acl)
        cmd.add_option("--acl", o.acl,
                       "ACL of the nodes zklock creates, in zkCli's syntax: scheme:id:perms[,...], e.g. auth::cdrwa "
                       "(only the auth file's identities) or auth::cdrwa,world:anyone:r (anyone may read the queue)")
            ->type_name("ACL")
            ->allow_extra_args(false);  // one value per --acl: LOCK_PATH follows
}

credentials_or_problem credentials_of(std::vector<auth_entry> entries, const std::string& file,
                                      const std::vector<std::string>& acl_words) {
    const auto refuse = [](std::string why) { return credentials_or_problem{std::nullopt, std::move(why)}; };
    credentials c;
    for (auto& e : entries) {
        if (e.scheme == "mysql") {
            const auto colon = e.credentials.find(':');
            if (colon == std::string::npos) return refuse("auth file " + file + ": a mysql line is mysql:USER:PASSWORD");
            c.mysql_user = e.credentials.substr(0, colon);
            c.mysql_password = e.credentials.substr(colon + 1);
            continue;
        }
        if (e.scheme != "redis") {
            c.zookeeper.push_back(std::move(e));
            continue;
        }
        const auto colon = e.credentials.find(':');
        if (colon == std::string::npos)
            return refuse("auth file " + file + ": a redis line is redis:USER:PASSWORD "
                          "(USER default for a server with requirepass)");
        c.redis_user = e.credentials.substr(0, colon);
        c.redis_password = e.credentials.substr(colon + 1);
    }
    if (!acl_words.empty()) {
        std::string text;
        for (const auto& part : acl_words) text += (text.empty() ? "" : ",") + part;
        std::error_code ec;
        std::string reason;
        auto acl = parse_acl(text, ec, &reason);
        if (ec) return refuse("--acl: " + reason);
        if (validate_acl(acl, !c.zookeeper.empty(), &reason)) return refuse("--acl: " + reason);
        c.acl = std::move(acl);
    }
    return {std::move(c), {}};
}

std::optional<credentials> load_credentials(const auth_options& o) {
    std::string file = o.file;
    if (file.empty())
        if (const char* env = std::getenv(auth_file_variable); env && *env) file = env;
    std::vector<auth_entry> entries;
    if (!file.empty()) {
        std::error_code ec;
        std::string reason;
        entries = read_auth_file(file, ec, &reason);
        if (ec) {
            notice(reason);
            return std::nullopt;
        }
    }
    auto c = credentials_of(std::move(entries), file, o.acl);
    if (!c.value) {
        notice(c.problem);
        return std::nullopt;
    }
    std::string reason;
    if (validate_tls(o.tls, &reason)) {
        notice(reason);
        return std::nullopt;
    }
    c.value->tls = o.tls;
    return std::move(c.value);
}

void apply(const credentials& c, SessionOptions& s) {
    s.auth = c.zookeeper;
    s.tls = c.tls;
    if (c.acl) s.acl = *c.acl;
}

bool load_into(const auth_options& o, SessionOptions& s) {
    const auto c = load_credentials(o);
    if (!c) return false;
    apply(*c, s);
    return true;
}

std::optional<SessionOptions> session_options_of(const std::string& connect,
                                                 std::chrono::milliseconds connect_timeout, const auth_options& auth) {
    SessionOptions so;
    so.connect = connect;
    so.connect_timeout = connect_timeout;
    if (!load_into(auth, so)) return std::nullopt;
    return so;
}

int exit_status_for(const std::error_code& ec) {
    if (ec == errc::tls_handshake_failed) return exit_tls_handshake;
    if (ec == errc::tls_untrusted_server) return exit_tls_untrusted;
    if (ec == errc::tls_certificate_expired) return exit_tls_expired;
    if (ec == errc::tls_wrong_host) return exit_tls_wrong_host;
    if (ec == errc::tls_required) return exit_tls_required;
    if (ec == errc::no_auth || ec == errc::auth_failed || ec == errc::insecure_acl) return exit_noperm;
    if (ec == errc::invalid_path || ec == errc::invalid_argument || ec == errc::invalid_acl ||
        ec == errc::permits_mismatch || ec == errc::foreign_recipe)
        return exit_usage;
    if (ec == errc::no_node) return exit_config;
    if (ec == errc::blocked_by_persistent_node) return exit_not_acquired;
    return exit_unavailable;
}

std::string lock_path_problem(const std::string& path) {
    std::string reason;
    if (!validate_lock_path(path, &reason)) return {};
    return reason + ": '" + shortened(path) + "'";
}

std::string notice_text(const std::string& what) { return "zklock: " + escape_control(what) + "\n"; }

void notice(const std::string& what) { std::cerr << notice_text(what) << std::flush; }

std::string connect_timeout_text(const SessionOptions& o) {
    // The C client retries quietly: a connect of our own says what is wrong.
    constexpr std::chrono::milliseconds probe_budget{1000};
    return "could not connect to " + o.connect + " within " + std::to_string(o.connect_timeout.count()) +
           " ms: " + probe_servers(o.connect, std::min(probe_budget, o.connect_timeout));
}

connect_failure describe_connect_failure(const SessionOptions& o, const std::error_code& ec) {
    // A refusal by every server ends the wait early; what each server gave is
    // told the same way as for a wait that ran out.
    if (ec == errc::timeout || ec == errc::connection_refused) return {connect_timeout_text(o), exit_unavailable, ec};
    if (ec == errc::invalid_argument) {
        const auto shown = "'" + shortened(o.connect) + "'";
        if (const auto problem = connect_string_problem(o.connect); !problem.empty())
            return {"invalid connect string: " + problem, exit_usage, ec};
        // Well formed, refused all the same: the C client found no host that resolves.
        if (const auto unresolved = unresolved_hosts(o.connect); !unresolved.empty()) {
            std::string hosts;
            for (const auto& h : unresolved) hosts += (hosts.empty() ? "" : "; ") + h;
            return {"could not connect to " + shown + ": " +
                        (unresolved.size() == 1 ? "the host did not resolve: " : "no host resolved: ") + hosts,
                    exit_unavailable, std::make_error_code(std::errc::host_unreachable)};
        }
        return {"invalid connect string " + shown + " (the ZooKeeper client refused it)", exit_usage, ec};
    }
    if (ec == errc::tls_untrusted_server)
        return {"could not connect to " + o.connect + " over TLS: " + ec.message() + " (--tls-ca names the CA)",
                exit_status_for(ec), ec};
    if (ec == errc::tls_handshake_failed || ec == errc::tls_certificate_expired || ec == errc::tls_wrong_host)
        return {"could not connect to " + o.connect + " over TLS: " + ec.message(), exit_status_for(ec), ec};
    if (ec == errc::auth_failed)
        return {o.connect + " refused the authentication as " + identity(o.auth) +
                    " (a scheme the server does not accept; check the auth file)",
                exit_noperm, ec};
    return {"could not connect to " + o.connect + ": " + ec.message(), exit_status_for(ec), ec};
}

std::string connect_failure_text(const SessionOptions& o, const std::error_code& ec) {
    return describe_connect_failure(o, ec).text;
}

std::string missing_chroot_text(const std::string& connect) {
    const auto chroot = connect_string_chroot(connect);
    if (chroot.empty()) return {};
    return "the chroot " + std::string(chroot) + " of the connect string does not exist on the server";
}

std::string failure_text(const std::error_code& ec, const std::string& connect) {
    if (ec == errc::no_node)
        if (auto chroot = missing_chroot_text(connect); !chroot.empty()) return chroot;
    return ec.message();
}

int report_connect_failure(const Session& session, const std::error_code& ec) {
    const auto failure = describe_connect_failure(session.options(), ec);
    notice(failure.text);
    return failure.status;
}

void connect_or_throw(Session& session) {
    std::error_code ec;
    session.connect(ec);
    if (!ec) return;
    auto failure = describe_connect_failure(session.options(), ec);
    throw said_error(failure.code, std::move(failure.text));
}

int report_failure(const Session& session, const std::string& doing, const std::error_code& ec,
                   const std::string& detail) {
    std::string why = detail;
    if (why.empty()) {
        const auto& o = session.options();
        if (ec == errc::no_auth) why = "not authorized: " + session.identity() + " may not do that";
        else if (ec == errc::auth_failed) why = o.connect + " refused the authentication as " + session.identity();
        else why = failure_text(ec, o.connect);
    }
    notice("could not " + doing + ": " + why);
    return exit_status_for(ec);
}

} // namespace zklock::cli
