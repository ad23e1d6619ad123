#include "backends/memcached/memcached_steps.hpp"

#include <zklock/error.hpp>

#include <algorithm>
#include <charconv>

namespace zklock::detail::memcached {

namespace {

address refuse(std::error_code& ec, std::string* reason, std::string why) {
    ec = make_error_code(errc::invalid_argument);
    if (reason) *reason = std::move(why);
    return {};
}

} // namespace

address parse_address(std::string_view text, std::error_code& ec, std::string* reason) {
    ec = {};
    std::string_view rest = text;
    const auto scheme = rest.find("://");
    if (scheme != std::string_view::npos) {
        if (rest.substr(0, scheme) != "memcached")
            return refuse(ec, reason, "memcached address: unknown scheme '" + std::string(rest.substr(0, scheme)) +
                                          "' (memcached://host[:port] or host:port)");
        rest.remove_prefix(scheme + 3);
    }
    if (rest.find('@') != std::string_view::npos)
        return refuse(ec, reason, "memcached address: credentials given, but the memcached backend has no authentication");
    if (rest.find('/') != std::string_view::npos || rest.find('?') != std::string_view::npos)
        return refuse(ec, reason, "memcached address: a path or query after host:port");
    address a;
    std::string_view port;
    if (rest.starts_with('[')) {
        const auto close = rest.find(']');
        if (close == std::string_view::npos) return refuse(ec, reason, "memcached address: '[' without ']'");
        a.host = std::string(rest.substr(1, close - 1));
        rest.remove_prefix(close + 1);
        if (!rest.empty()) {
            if (rest.front() != ':') return refuse(ec, reason, "memcached address: text after ']' that is not :port");
            port = rest.substr(1);
            if (port.empty()) return refuse(ec, reason, "memcached address: an empty port");
        }
    } else {
        const auto colon = rest.rfind(':');
        if (colon != std::string_view::npos) {
            if (rest.find(':') != colon)
                return refuse(ec, reason, "memcached address: an IPv6 host needs brackets ([::1]:11211)");
            port = rest.substr(colon + 1);
            if (port.empty()) return refuse(ec, reason, "memcached address: an empty port");
            rest = rest.substr(0, colon);
        }
        a.host = std::string(rest);
    }
    if (a.host.empty()) return refuse(ec, reason, "memcached address: no host");
    if (!port.empty()) {
        int p = 0;
        const auto [end, err] = std::from_chars(port.data(), port.data() + port.size(), p);
        if (err != std::errc{} || end != port.data() + port.size() || p < 1 || p > 65535)
            return refuse(ec, reason, "memcached address: port '" + std::string(port) + "' is not in 1..65535");
        a.port = p;
    }
    return a;
}

std::uint32_t ttl_seconds(std::chrono::milliseconds ttl) noexcept {
    const auto s = (std::max<std::int64_t>(ttl.count(), 1) + 999) / 1000;
    return static_cast<std::uint32_t>(std::min<std::int64_t>(s, 60 * 60 * 24 * 30));  // more: a Unix time to memcached
}

std::chrono::milliseconds lease_validity(std::chrono::milliseconds ttl) noexcept {
    return std::chrono::seconds(ttl_seconds(ttl)) - std::chrono::seconds(1);
}

after_add next_after_add(answer a, bool no_wait, bool has_deadline, bool deadline_passed, bool closed) noexcept {
    switch (a) {
    case answer::done: return after_add::grant;
    case answer::failed:
    case answer::not_found:  // add never answers it: treat as a failure
        return no_wait || !has_deadline || closed || deadline_passed ? after_add::fail : after_add::retry_on_error;
    case answer::refused: break;
    }
    if (no_wait || deadline_passed || closed) return after_add::give_up;
    return after_add::poll;
}

ownership owner_of(answer gets, std::string_view value, std::string_view our_owner) noexcept {
    switch (gets) {
    case answer::done: return value == our_owner ? ownership::ours : ownership::taken;
    case answer::not_found: return ownership::gone;
    case answer::refused:
    case answer::failed: break;
    }
    return ownership::unknown;
}

renewal after_renew(ownership o, answer cas) noexcept {
    switch (o) {
    case ownership::gone:
    case ownership::taken: return renewal::lost;
    case ownership::unknown: return renewal::retry_sooner;
    case ownership::ours: break;
    }
    switch (cas) {
    case answer::done: return renewal::extended;
    case answer::not_found: return renewal::lost;
    // Changed since the gets: only a new owner's add (after our key vanished) changes it.
    case answer::refused: return renewal::lost;
    case answer::failed: break;
    }
    return renewal::retry_sooner;
}

std::error_code after_release(ownership o, answer cas, answer del, std::error_code failure) noexcept {
    switch (o) {
    case ownership::gone:
    case ownership::taken: return make_error_code(errc::node_deleted);
    case ownership::unknown: return failure;
    case ownership::ours: break;
    }
    if (cas == answer::not_found || cas == answer::refused) return make_error_code(errc::node_deleted);
    if (cas == answer::failed) return failure;
    if (del == answer::done) return {};
    if (del == answer::not_found) return make_error_code(errc::node_deleted);
    return failure;
}

std::chrono::milliseconds poll_cap(std::chrono::milliseconds backoff, std::chrono::milliseconds ttl) noexcept {
    return std::max(std::chrono::milliseconds(1), std::min(backoff, ttl));
}

std::chrono::milliseconds next_backoff(std::chrono::milliseconds backoff) noexcept {
    return std::min(backoff * 2, max_poll);
}

} // namespace zklock::detail::memcached
