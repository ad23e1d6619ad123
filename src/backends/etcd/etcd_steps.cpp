#include "backends/etcd/etcd_steps.hpp"

#include <zklock/error.hpp>

#include <algorithm>
#include <charconv>
#include <cstdio>

namespace zklock::detail::etcd {

namespace {

endpoints refuse(std::error_code& ec, std::string* reason, std::string why) {
    ec = make_error_code(errc::invalid_argument);
    if (reason) *reason = "etcd endpoint: " + std::move(why);
    return {};
}

bool ipv4_literal(std::string_view h) {
    int dots = 0;
    for (const char c : h) {
        if (c == '.') ++dots;
        else if (c < '0' || c > '9') return false;
    }
    return dots == 3;
}

struct one_endpoint {
    std::string host;  // brackets kept for IPv6
    int port = 2379;
    bool tls = false;
    bool plain = false;
    bool ipv6 = false;
};

std::optional<one_endpoint> parse_one(std::string_view rest, std::string& why) {
    one_endpoint e;
    const auto scheme = rest.find("://");
    if (scheme != std::string_view::npos) {
        const auto s = rest.substr(0, scheme);
        if (s == "https") e.tls = true;
        else if (s == "http") e.plain = true;
        else {
            why = "unknown scheme '" + std::string(s) + "' (http://, https:// or host:port)";
            return std::nullopt;
        }
        rest.remove_prefix(scheme + 3);
    }
    if (rest.find('@') != std::string_view::npos) {
        why = "credentials in the address (give EtcdOptions::user and password instead)";
        return std::nullopt;
    }
    if (rest.ends_with('/')) rest.remove_suffix(1);
    if (rest.find('/') != std::string_view::npos || rest.find('?') != std::string_view::npos) {
        why = "a path or query after host:port";
        return std::nullopt;
    }
    std::string_view port;
    if (rest.starts_with('[')) {
        const auto close = rest.find(']');
        if (close == std::string_view::npos) {
            why = "'[' without ']'";
            return std::nullopt;
        }
        e.host = std::string(rest.substr(0, close + 1));
        e.ipv6 = true;
        rest.remove_prefix(close + 1);
        if (!rest.empty()) {
            if (rest.front() != ':') {
                why = "text after ']' that is not :port";
                return std::nullopt;
            }
            port = rest.substr(1);
            if (port.empty()) {
                why = "an empty port";
                return std::nullopt;
            }
        }
    } else {
        const auto colon = rest.rfind(':');
        if (colon != std::string_view::npos) {
            if (rest.find(':') != colon) {
                why = "an IPv6 host needs brackets ([::1]:2379)";
                return std::nullopt;
            }
            port = rest.substr(colon + 1);
            if (port.empty()) {
                why = "an empty port";
                return std::nullopt;
            }
            rest = rest.substr(0, colon);
        }
        e.host = std::string(rest);
    }
    if (e.host.empty() || e.host == "[]") {
        why = "no host";
        return std::nullopt;
    }
    if (!port.empty()) {
        int p = 0;
        const auto [end, err] = std::from_chars(port.data(), port.data() + port.size(), p);
        if (err != std::errc{} || end != port.data() + port.size() || p < 1 || p > 65535) {
            why = "port '" + std::string(port) + "' is not in 1..65535";
            return std::nullopt;
        }
        e.port = p;
    }
    return e;
}

} // namespace

endpoints parse_endpoints(std::string_view text, std::error_code& ec, std::string* reason) {
    ec = {};
    std::vector<one_endpoint> all;
    std::string why;
    for (std::size_t start = 0;;) {
        const auto comma = text.find(',', start);
        const auto piece = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
        auto e = parse_one(piece, why);
        if (!e) return refuse(ec, reason, why);
        all.push_back(std::move(*e));
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    endpoints out;
    out.tls = all.front().tls;
    for (const auto& e : all) {
        if (e.tls != out.tls) return refuse(ec, reason, "http:// and https:// mixed in one list");
        out.plain = out.plain || e.plain;
    }
    if (all.size() == 1) {
        out.target = "dns:///" + all.front().host + ":" + std::to_string(all.front().port);
        return out;
    }
    const bool v6 = all.front().ipv6;
    for (const auto& e : all)
        if (e.ipv6 != v6 || (!v6 && !ipv4_literal(e.host)))
            return refuse(ec, reason, "several endpoints must all be IPv4 or all IPv6 literals (one host name at most)");
    out.target = v6 ? "ipv6:" : "ipv4:";
    for (std::size_t i = 0; i < all.size(); ++i) {
        if (i) out.target += ',';
        out.target += all[i].host + ":" + std::to_string(all[i].port);
    }
    return out;
}

std::string queue_prefix(std::string_view key_prefix, std::string_view name) {
    return std::string(key_prefix) + std::string(name) + "/";
}

std::string contender_key(std::string_view prefix, std::int64_t lease) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(lease));
    return std::string(prefix) + buf;
}

std::string prefix_range_end(std::string_view prefix) {
    std::string end(prefix);
    while (!end.empty()) {
        auto& last = end.back();
        if (static_cast<unsigned char>(last) < 0xff) {
            last = static_cast<char>(static_cast<unsigned char>(last) + 1);
            return end;
        }
        end.pop_back();
    }
    return std::string(1, '\0');
}

void lease_clock::answered(time_point sent, std::int64_t ttl_seconds) noexcept {
    if (ttl_seconds <= 0) {
        gone = true;
        return;
    }
    const auto until = sent + std::chrono::seconds(ttl_seconds);
    if (!valid_until || until > *valid_until) valid_until = until;
}

bool lease_clock::lost(time_point now) const noexcept { return gone || !valid_until || now >= *valid_until; }

after_txn next_after_txn(std::int64_t my_revision, std::optional<std::int64_t> first_revision, bool no_wait) noexcept {
    if (!first_revision || *first_revision == my_revision) return after_txn::held;
    return no_wait ? after_txn::taken : after_txn::wait;
}

after_wait next_after_wait(bool predecessor_found, bool own_key_present) noexcept {
    if (!own_key_present) return after_wait::key_gone;
    return predecessor_found ? after_wait::watch : after_wait::held;
}

std::error_code from_grpc(int code, std::string_view message, bool tls) noexcept {
    if (code == 0) return {};
    const auto says = [&](std::string_view words) { return message.find(words) != std::string_view::npos; };
    // gRPC's words for a connection it could not make (1.51's pick_first):
    // "failed to connect to all addresses; last error: ...".
    if (code == 14 && says("failed to connect to all addresses")) {
        if (says("is not in peer certificate")) return make_error_code(errc::tls_wrong_host);  // "Peer name X is not..."
        if (says("certificate verify failed")) return make_error_code(errc::tls_untrusted_server);
        if (says("andshake failed")) return make_error_code(errc::tls_handshake_failed);
        // A TLS server closes a connection that does not speak TLS at once;
        // over TLS 1.3 a server that refuses our certificate (or its absence)
        // does so right after the handshake, which the client had finished.
        if (says("Socket closed") || says("Endpoint read failed"))
            return make_error_code(tls ? errc::tls_handshake_failed : errc::tls_required);
    }
    if (message.find("lease not found") != std::string_view::npos) return make_error_code(errc::session_expired);
    if (message.find("invalid auth token") != std::string_view::npos ||
        message.find("authentication failed") != std::string_view::npos ||
        message.find("user name is empty") != std::string_view::npos)  // auth enabled, none given
        return make_error_code(errc::auth_failed);
    switch (code) {
    case 1:   // CANCELLED
    case 14:  // UNAVAILABLE
        return make_error_code(errc::connection_loss);
    case 4: return make_error_code(errc::operation_timeout);  // DEADLINE_EXCEEDED
    case 16: return make_error_code(errc::auth_failed);       // UNAUTHENTICATED
    case 7: return make_error_code(errc::no_auth);            // PERMISSION_DENIED
    case 3:                                                   // INVALID_ARGUMENT
    case 9:                                                   // FAILED_PRECONDITION
        return make_error_code(errc::bad_arguments);
    case 5: return make_error_code(errc::no_node);  // NOT_FOUND
    default: return make_error_code(errc::system_error);
    }
}

bool token_expired(int code, std::string_view message) noexcept {
    return code == 16 || message.find("invalid auth token") != std::string_view::npos;
}

std::chrono::milliseconds keepalive_period(std::chrono::milliseconds ttl) noexcept {
    return std::max(std::chrono::milliseconds(100), ttl / 3);
}

} // namespace zklock::detail::etcd
