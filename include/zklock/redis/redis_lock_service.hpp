// zklock::RedisLockService and zklock::RedlockService: the Redis lock family
// behind the backend-neutral zklock::Lock, for side-by-side comparison with the
// ZooKeeper recipe.
//
// The recipe (both services; Redlock runs it on N independent masters at once):
//   acquire  one Lua script: SET key token NX PX ttl and, when it is set,
//            INCR fence-key, returned as the fencing token. The token is 128
//            random bits (hex), new for every acquire.
//   wait     SUBSCRIBE to the lock's release channel (one subscriber connection
//            per server and service, shared by all its locks), retry on a
//            message; a jittered backoff (50 ms doubling to 1 s, capped by the
//            ttl) is the fallback for holders that die and release by TTL
//            without publishing. No busy polling.
//   release  Lua compare-and-delete: deletes the key only if it still holds our
//            token, then PUBLISHes on the release channel.
//   watchdog every ttl/3 while held, a Lua compare-and-PEXPIRE renews the ttl.
//            A renewal that finds the key is no longer ours (expired, deleted,
//            server restarted without persistence) reports errc::node_deleted;
//            no successful renewal for as long as the lease lasts reports
//            errc::session_expired. Both through on_lost / async_wait_lost, and
//            is_held() turns false.
//
// Keys (Redis Cluster hash tags keep a lock's keys in one slot):
//   <prefix>{<name>}           the lock: value = the holder's token, PX ttl
//   <prefix>{<name>}:fence     the fencing counter (kept: it must only grow)
//   <prefix>{<name>}:released  the pub/sub channel releases publish on
//
// Guarantees and limits (compare docs/comparison.md):
//   - not fair: a release wakes every waiter (pub/sub), whoever comes first wins;
//   - a dead holder's lock is free only when its ttl runs out;
//   - safety depends on timing: a holder paused (GC, swap, SIGSTOP) for longer
//     than the ttl may still believe it holds the lock; use the fencing token;
//   - fencing tokens come from INCR on the server: they are lost (start again)
//     when a server restarts without persistence or fails over to a replica
//     that had not received the INCR yet;
//   - a Redis failover can hand a lock to a second holder (asynchronous
//     replication): that is what Redlock tries to address and what ZooKeeper does not have.
//
// Addresses: "host:port", or a URL "redis://[user:password@]host[:port][/db]"
// (user and password percent-encoded; ":password@" alone for a server with
// requirepass; user and password for a Redis 6+ ACL user). An address without
// credentials uses RedisOptions::user/password, one without "/db" uses
// RedisOptions::db. TLS (rediss://) is not supported (Debian's hiredis 0.14).
//
// Authentication: every connection the service opens (commands and pub/sub,
// the first and every reconnect) sends AUTH (AUTH password, or AUTH user
// password) and, for a db other than 0, SELECT before any other command, and
// sends nothing else until they succeed. The password crosses the network in
// clear text (no TLS): run Redis on a network you trust. zklock never prints it.
//
// Errors: acquire fails with std::errc::connection_refused, errc::connection_loss
// (the connection failed or no reply within command_timeout), errc::timeout
// (connect_timeout) or std::errc::protocol_error (an error reply) when the
// server cannot be reached; lock() does not retry forever on a server that is
// down, try_lock_for() retries until its deadline and then reports the last error.
// Refused credentials fail the acquire at once, even with a deadline:
// errc::auth_failed for a wrong password or unknown user (WRONGPASS, or a
// password the server does not expect), errc::no_auth when the server wants a
// password and none was given (NOAUTH) or the ACL user may not run the lock's
// commands (NOPERM); errc::invalid_argument for a db the server does not have.
//
// Threads: the service runs its connections on a strand of `executor`, or on
// its own thread when none is given. hiredis writes with write(2): the own
// thread blocks SIGPIPE; with your own executor, ignore SIGPIPE in the process
// (signal(SIGPIPE, SIG_IGN)) or a server closing a connection kills it.
// Destroy the Locks before their service.
#pragma once

#include <zklock/lock.hpp>
#include <zklock/log.hpp>
#include <zklock/redis/connection_options.hpp>
#include <zklock/redis/export.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace zklock {

namespace detail {
struct redis_context;
}

/// Options of RedisLockService and RedlockService: the connections'
/// (RedisConnectionOptions: timeouts, credentials, db, executor) and these.
struct RedisOptions : RedisConnectionOptions {
    /// The lease: how long a lock outlives a holder that stopped renewing it.
    /// The watchdog renews every ttl/3. Default 10 s.
    std::chrono::milliseconds ttl{10000};
    /// Prepended to every key and channel. Default "zklock:".
    std::string key_prefix = "zklock:";
    /// The service's log, records with source "redis" (or "redlock") up to
    /// `log.level`: a connection made (info), a connect that failed, a
    /// connection lost or dropped for want of a reply, a renewal that reached no
    /// majority (warn), a server that refused the connection's AUTH or SELECT,
    /// a lock lost (error). Servers are named host:port, never with their
    /// credentials. The callback runs on the service's strand (its own thread,
    /// or `executor`), with the threading rules of zklock::log_sink.
    /// Default: none.
    log_sink log;
};

/// Locks on one Redis server (see the top of this file for the recipe).
/// capabilities(): backend "redis", not FIFO, dead holder released at ttl expiry,
/// fencing not monotonic across restart/failover, pub/sub wakes every waiter,
/// reports loss.
class ZKLOCK_REDIS_EXPORT RedisLockService : public LockService {
public:
    /// `address` is "host:port" or a redis:// URL (see the top of this file),
    /// e.g. "127.0.0.1:6379", "redis://alice:secret@10.0.0.5:6379/2". Throws
    /// zklock::error (errc::invalid_argument) for a malformed address (the
    /// message never quotes its credentials), a user without a password, a
    /// negative db or a ttl under 10 ms. Connects lazily: an unreachable server,
    /// or refused credentials, show at the first acquire.
    explicit RedisLockService(const std::string& address, RedisOptions options = {});
    ~RedisLockService() override;
    RedisLockService(const RedisLockService&) = delete;
    RedisLockService& operator=(const RedisLockService&) = delete;

    /// Throws zklock::error(errc::invalid_path) for a bad name (validate_lock_name).
    Lock make_lock(const std::string& name) override;
    lock_capabilities capabilities() const noexcept override;

    /// The key of lock `name` under `prefix` ("zklock:{name}").
    static std::string key_for(std::string_view prefix, std::string_view name);

private:
    std::shared_ptr<detail::redis_context> context_;
};

/// Redlock over N independent Redis masters (N = 5 is the usual choice).
/// Acquire runs the acquire script on all N at once and holds the lock when a
/// majority (N/2+1) set it within the validity time (ttl - elapsed - drift,
/// drift = ttl/100 + 2 ms); otherwise it deletes what it set and retries after a
/// jittered delay. Release and the watchdog run on all N; loss is reported when
/// a majority can no longer be renewed. The fencing token is the largest of the
/// per-master INCR results, and every master's counter is then raised to it, so
/// tokens grow from grant to grant while the masters keep their counters; it is
/// NOT monotonic across a master restart without persistence or a failover.
/// capabilities().backend is "redlock".
class ZKLOCK_REDIS_EXPORT RedlockService : public LockService {
public:
    /// `addresses` as RedisLockService's, one per master (each may carry its own
    /// credentials). Throws zklock::error(errc::invalid_argument) for no address
    /// or a malformed one.
    RedlockService(const std::vector<std::string>& addresses, RedisOptions options = {});
    ~RedlockService() override;
    RedlockService(const RedlockService&) = delete;
    RedlockService& operator=(const RedlockService&) = delete;

    Lock make_lock(const std::string& name) override;
    lock_capabilities capabilities() const noexcept override;

private:
    std::shared_ptr<detail::redis_context> context_;
};

} // namespace zklock
