// The naive Redis lock recipes zklock's docs call unsafe, written as their
// users write them, against a real redis-server: anti-examples for
// `zklock bench --safety`, never a backend. Each command goes over a fresh
// connection to 127.0.0.1:port (testing::redis_command).
//
//   SETNX then EXPIRE   SETNX key id; PEXPIRE key ttl (two commands: a client
//                       that dies between them leaves a key that never expires);
//                       release: DEL key.
//   SETNX with GETSET   the Redis SETNX documentation's "Handling deadlocks":
//                       the value is the lock's expiry time; a waiter that
//                       reads an expired time sets its own with GETSET and holds
//                       the lock when GETSET returned the expired time it read;
//                       release: DEL key, unless its own expiry has passed.
//
// Both poll (every ttl/20) and take a fencing token with INCR <key>:token
// after the grant (the recipes have none: the token only lets the bench's
// fenced copy show what a fence would have refused).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace zklock::cli::safety {

/// An integer reply (":5\r\n"), a bulk string ("$1\r\n5\r\n") or nil ("$-1\r\n"):
/// the value (nil: nullopt). Throws std::runtime_error for an error reply or
/// anything else. Pure.
std::optional<std::string> redis_value(std::string_view reply);

class naive_lock {
public:
    /// `recipe`: naive_setnx_expire or naive_setnx_getset (safety/plan.hpp).
    naive_lock(std::string_view recipe, std::uint16_t port, std::string key, std::chrono::milliseconds ttl);

    /// Polls until it holds the lock. SETNX+EXPIRE calls `between` after SETNX
    /// won and before EXPIRE. Errors (server down, partition) are retried.
    void acquire(const std::function<void()>& between);
    /// INCR <key>:token. Throws when the server cannot be reached.
    std::int64_t take_token();
    /// The holder's own view: its TTL (or expiry time) has not passed yet.
    bool lease_valid() const;
    /// Releases: "" when it did, "lost: ..." when its own expiry had passed
    /// (SETNX+GETSET does not delete then), "error: ..." when DEL failed.
    std::string release();

private:
    std::string command(const std::vector<std::string>& args) const;

    bool getset_;
    std::uint16_t port_;
    std::string key_;
    std::chrono::milliseconds ttl_;
    std::chrono::steady_clock::time_point lease_end_;  // SETNX+EXPIRE
    std::int64_t expires_ms_ = 0;                      // SETNX+GETSET: the expiry time it set (Unix ms)
};

}  // namespace zklock::cli::safety
