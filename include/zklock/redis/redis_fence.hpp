// zklock::RedisFence: Redis keys that refuse stale lock holders.
//
// A fenced key is a plain string key (read it with GET as usual) with a
// companion key beside it, `<key>:fencing-token`, that records the token of the
// last write. One Lua script (script()) does the check and the write
// atomically on the server:
//   the stored token is absent, or the writer's token >= it
//       -> SET key value, SET key:fencing-token token; returns {1, token}
//   otherwise (a later lock holder has written)
//       -> nothing written; returns {0, stored token}
// Tokens are compared as exact decimal integers (not as Lua numbers, which
// lose precision above 2^53). So concurrent writers leave the value of the
// highest token whatever their order, and the late write of a holder that was
// paused past its session timeout is refused once a later holder has written.
//
//   zklock::RedisFence fence("redis://:secret@10.0.0.5:6379/0");
//   std::unique_lock hold(lock);                        // any zklock lock
//   auto r = fence.write("report:today", lock.fencing_token(), text);
//   if (!r.applied) { /* refused: token r.stored_token is newer; our lock was lost */ }
//
// The script is run with EVALSHA (its SHA1 learnt once with SCRIPT LOAD), and
// with EVAL when the server does not know it (first use, a restart, SCRIPT
// FLUSH: NOSCRIPT), which caches it again. Users of other clients can run
// script() themselves: EVAL script 2 key key:fencing-token token value.
//
// What it relies on: the token key must outlive every holder that could still
// write. It never expires, and SET on the value drops any TTL the value had.
// A Redis that restarts without persistence, or fails over to a replica that
// missed the last write, forgets the token and admits an older holder again:
// give the fenced keys a durable Redis (appendonly, appendfsync always). In a
// Redis Cluster both keys must be in one slot: give the key a hash tag
// ("{report:today}"), which the companion key shares. One key must only ever
// see tokens from one source (one ZooKeeper ensemble, or one backend's counter).
//
// Addresses and credentials as RedisLockService's (redis_lock_service.hpp):
// "host:port" or "redis://[user:password@]host[:port][/db]"; every connection
// sends AUTH / SELECT first; zklock never prints the password.
//
// Errors (std::error_code, or zklock::error from the throwing forms):
//   errc::invalid_argument   a token under 1 or an empty key (before any I/O);
//                            the token key holds something that is not a token
//   errc::auth_failed, errc::no_auth   credentials refused or missing (NOPERM too)
//   std::errc::connection_refused      nothing listens
//   errc::timeout, errc::connection_loss   no connection within connect_timeout,
//                            or no answer within command_timeout, or the connection
//                            broke: a write may or may not have been applied
//   errc::session_closed     the fence is being destroyed
//   errc::would_deadlock     a blocking call on the fence's own I/O thread
//   std::errc::protocol_error another error reply
// A refused stale write is none of these: it is a result with applied == false.
//
// Threads: one connection (lazily connected, reconnected after a failure) on a
// strand of `executor`, or on the fence's own thread when none is given (which
// blocks SIGPIPE; with your own executor, ignore SIGPIPE in the process).
// Members may be called from any thread. Asynchronous operations support no
// cancellation; destroy the fence after they completed.
#pragma once

#include <zklock/error.hpp>
#include <zklock/fencing.hpp>
#include <zklock/redis/connection_options.hpp>
#include <zklock/redis/export.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace zklock {

namespace detail {
struct redis_fence_state;
}

/// Options of a RedisFence: its connection's (timeouts, credentials, db, executor).
struct RedisFenceOptions : RedisConnectionOptions {};

/// Writes Redis keys that only the current lock holder may change (see the top of this file).
class ZKLOCK_REDIS_EXPORT RedisFence {
public:
    /// Throws zklock::error(errc::invalid_argument) for a malformed address
    /// (the message never quotes its credentials), a user without a password,
    /// a negative db or timeouts under 1 ms. Connects lazily.
    explicit RedisFence(const std::string& address, RedisFenceOptions options = {});
    ~RedisFence();
    RedisFence(const RedisFence&) = delete;
    RedisFence& operator=(const RedisFence&) = delete;

    /// Sets `key` to `value` when `token` is >= the token recorded beside it (or
    /// none is): applied, and `key:fencing-token` records `token`. Otherwise
    /// nothing is written: applied false, stored_token the newer token.
    fenced_write_result write(std::string_view key, std::int64_t token, std::string_view value);
    /// As above; errors in `ec` instead of thrown.
    fenced_write_result write(std::string_view key, std::int64_t token, std::string_view value, std::error_code& ec);
    /// Handler: void(std::error_code, fenced_write_result). No cancellation.
    template <class CompletionToken>
    auto async_write(std::string_view key, std::int64_t token, std::string_view value, CompletionToken&& t) {
        return boost::asio::async_initiate<CompletionToken, void(std::error_code, fenced_write_result)>(
            [this](auto handler, std::string k, std::int64_t n, std::string v) {
                async_write_impl(std::move(k), n, std::move(v), std::move(handler));
            },
            t, std::string(key), token, std::string(value));
    }

    /// The value of `key` and the token recorded beside it (one MGET); nullopt
    /// when no token is recorded (never written through a fence); an empty
    /// value when the token is there but someone deleted the key.
    std::optional<fenced_value> read(std::string_view key);
    /// As above; errors in `ec` instead of thrown.
    std::optional<fenced_value> read(std::string_view key, std::error_code& ec);
    /// Handler: void(std::error_code, std::optional<fenced_value>). No cancellation.
    template <class CompletionToken> auto async_read(std::string_view key, CompletionToken&& t) {
        return boost::asio::async_initiate<CompletionToken, void(std::error_code, std::optional<fenced_value>)>(
            [this](auto handler, std::string k) { async_read_impl(std::move(k), std::move(handler)); }, t,
            std::string(key));
    }

    /// SCRIPT LOAD: makes the server cache the script now (write() does it on
    /// first use anyway). Handy to fail early on a server that refuses scripts.
    void load();
    /// As above; errors in `ec` instead of thrown.
    void load(std::error_code& ec);

    /// The key that records the token of `key`: "<key>:fencing-token".
    static std::string token_key(std::string_view key);
    /// The Lua script: KEYS[1] the key, KEYS[2] its token key, ARGV[1] the
    /// token (decimal), ARGV[2] the value; returns {1, token} or {0, stored}.
    static std::string_view script() noexcept;

private:
    void async_write_impl(std::string key, std::int64_t token, std::string value,
                          boost::asio::any_completion_handler<void(std::error_code, fenced_write_result)> handler);
    void
    async_read_impl(std::string key,
                    boost::asio::any_completion_handler<void(std::error_code, std::optional<fenced_value>)> handler);

    std::shared_ptr<detail::redis_fence_state> state_;
};

} // namespace zklock
