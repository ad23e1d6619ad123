// The decisions of the memcached lock recipe (add to acquire, gets + cas to
// renew, gets + cas + delete to release): pure functions over the server's
// answers and the address text, no server and no libmemcached involved.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

namespace zklock::detail::memcached {

/// A memcached server: "host:port", "host" (port 11211) or "memcached://host[:port]".
struct address {
    std::string host;  ///< without the brackets of an IPv6 literal
    int port = 11211;
    friend bool operator==(const address&, const address&) = default;
};

/// Parses `text`. errc::invalid_argument with a reason for an empty host, a
/// port that is not a number in 1..65535, another scheme than memcached://,
/// userinfo ("user:password@": this backend has no authentication, and the
/// reason never quotes it) or a path.
address parse_address(std::string_view text, std::error_code& ec, std::string* reason = nullptr);

/// What one storage or retrieval command answered.
enum class answer {
    done,       ///< add/cas stored, delete deleted, gets found the key
    refused,    ///< add: the key exists; cas: the key changed since the gets
    not_found,  ///< gets, cas, delete: no such key
    failed,     ///< no answer, or an error (the error code says which)
};

/// The ttl memcached is given: whole seconds, rounded up.
std::uint32_t ttl_seconds(std::chrono::milliseconds ttl) noexcept;

/// How long a lease set at one instant surely lasts: memcached counts expiry on
/// a clock that ticks once a second, so a key set with N seconds may expire
/// after N-1 of them.
std::chrono::milliseconds lease_validity(std::chrono::milliseconds ttl) noexcept;

/// After an add() of an acquire.
enum class after_add {
    grant,           ///< stored: the lock is ours
    fail,            ///< the server could not be used, and the acquire may not wait for it
    retry_on_error,  ///< the server could not be used: try again after a backoff, until the deadline
    give_up,         ///< taken, and the acquire may not (no_wait) or no longer (deadline) wait
    poll,            ///< taken: ask again after a backoff
};
after_add next_after_add(answer a, bool no_wait, bool has_deadline, bool deadline_passed, bool closed) noexcept;

/// After the gets of a renewal or a release: is the key still ours?
enum class ownership {
    ours,        ///< the value is our owner id: go on with cas
    gone,        ///< no such key (expired, deleted, evicted, server restarted)
    taken,       ///< another owner's value
    unknown,     ///< the gets failed
};
ownership owner_of(answer gets, std::string_view value, std::string_view our_owner) noexcept;

/// After the cas of a renewal.
enum class renewal {
    extended,      ///< the lease runs a full ttl from the gets on
    lost,          ///< the key is gone or no longer ours
    retry_sooner,  ///< no answer: try again sooner, until the lease runs out
};
renewal after_renew(ownership o, answer cas) noexcept;

/// What a release (gets, cas, delete) tells the user: {} when our key was
/// deleted; errc::node_deleted when the key was gone or another owner's (the
/// lock was lost before); the failure of the step that failed otherwise.
std::error_code after_release(ownership o, answer cas, answer del, std::error_code failure) noexcept;

/// The wait before the next poll: a random point in [cap/2, cap], cap =
/// min(backoff, ttl); `backoff` then doubles up to max_poll.
inline constexpr std::chrono::milliseconds first_poll{10};
inline constexpr std::chrono::milliseconds max_poll{200};
std::chrono::milliseconds poll_cap(std::chrono::milliseconds backoff, std::chrono::milliseconds ttl) noexcept;
std::chrono::milliseconds next_backoff(std::chrono::milliseconds backoff) noexcept;

} // namespace zklock::detail::memcached
