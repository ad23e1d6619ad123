#include "commands.hpp"

#include <zklock/error.hpp>

#include <cstdlib>
#include <iostream>

namespace zklock::cli {

std::string default_connect() {
    const char* env = std::getenv("ZKLOCK_CONNECT");
    return env && *env ? env : "127.0.0.1:2181";
}

void add_connect_option(CLI::App& cmd, std::string& connect) {
    connect = default_connect();
    cmd.add_option("-c,--connect", connect, "ZooKeeper hosts, host:port[,host:port...][/chroot] ($ZKLOCK_CONNECT)")
        ->capture_default_str();
}

void add_auth_options(CLI::App& cmd, auth_options& o, bool with_acl) {
    cmd.add_option("--auth-file", o.file,
                   "Credentials, one per line: digest:USER:PASSWORD (ZooKeeper), redis:USER:PASSWORD (Redis); "
                   "the file must be private (chmod 600). Default: $ZKLOCK_AUTH_FILE")
        ->type_name("FILE");
    if (with_acl)
        cmd.add_option("--acl", o.acl,
                       "ACL of the nodes zklock creates, in zkCli's syntax: scheme:id:perms[,...], e.g. auth::cdrwa "
                       "(only the auth file's identities) or auth::cdrwa,world:anyone:r (anyone may read the queue)")
            ->type_name("ACL")
            ->delimiter(',');
}

std::optional<credentials> load_credentials(const auth_options& o) {
    credentials c;
    std::string file = o.file;
    if (file.empty())
        if (const char* env = std::getenv(auth_file_variable); env && *env) file = env;
    if (!file.empty()) {
        std::error_code ec;
        std::string reason;
        auto entries = read_auth_file(file, ec, &reason);
        if (ec) {
            std::cerr << "zklock: " << reason << "\n";
            return std::nullopt;
        }
        for (auto& e : entries) {
            if (e.scheme != "redis") {
                c.zookeeper.push_back(std::move(e));
                continue;
            }
            const auto colon = e.credentials.find(':');
            if (colon == std::string::npos) {
                std::cerr << "zklock: auth file " << file << ": a redis line is redis:USER:PASSWORD "
                          << "(USER default for a server with requirepass)\n";
                return std::nullopt;
            }
            c.redis_user = e.credentials.substr(0, colon);
            c.redis_password = e.credentials.substr(colon + 1);
        }
    }
    if (!o.acl.empty()) {
        std::string text;
        for (const auto& part : o.acl) text += (text.empty() ? "" : ",") + part;
        std::error_code ec;
        std::string reason;
        auto acl = parse_acl(text, ec, &reason);
        if (ec) {
            std::cerr << "zklock: --acl: " << reason << "\n";
            return std::nullopt;
        }
        if (const auto bad = validate_acl(acl, !c.zookeeper.empty(), &reason)) {
            std::cerr << "zklock: --acl: " << reason << "\n";
            return std::nullopt;
        }
        c.acl = std::move(acl);
    }
    return c;
}

void apply(const credentials& c, SessionOptions& s) {
    s.auth = c.zookeeper;
    if (c.acl) s.acl = *c.acl;
}

int exit_status_for(const std::error_code& ec) {
    if (ec == errc::no_auth || ec == errc::auth_failed || ec == errc::insecure_acl) return exit_noperm;
    if (ec == errc::invalid_path || ec == errc::invalid_argument || ec == errc::invalid_acl ||
        ec == errc::permits_mismatch)
        return exit_usage;
    return exit_unavailable;
}

} // namespace zklock::cli
