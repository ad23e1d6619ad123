// zklock::MemcachedLockService: locks on one memcached server behind the
// backend-neutral zklock::Lock, the recipe memcached users write themselves,
// for side-by-side comparison with the ZooKeeper recipe.
//
// The recipe (docs/design.md, "memcached"):
//   acquire  add(key, owner, ttl): stored only when the key does not exist.
//            The owner is 128 random bits (hex), new for every acquire.
//   wait     memcached cannot wake anybody: a waiter polls with add() after a
//            jittered backoff (10 ms doubling to 200 ms, capped by the ttl)
//            until it is granted, its deadline passes or it is cancelled.
//   watchdog every ttl/3 while held: gets (the value and its CAS unique), and
//            when the value is still our owner, cas(key, owner, ttl, unique).
//            A renewal that finds the key gone or holding another owner reports
//            errc::node_deleted; no successful renewal for as long as the lease
//            lasts reports errc::session_expired. Both through on_lost /
//            async_wait_lost, and is_held() turns false.
//   release  memcached has no compare-and-delete: gets and compare the value
//            with our owner, cas it (same value, fresh ttl) so that the key is
//            ours at that instant with a full lease ahead, then delete. The
//            delete can only remove another owner's key if, between the cas and
//            the delete (one round trip), our key vanished (an operator's
//            delete, an eviction, a restart) and another client added its own.
//
// Key: <prefix><name> (value: the holder's owner id, expiry: the ttl).
//
// Guarantees and limits (compare docs/comparison.md):
//   - no fencing token: fencing_token() is always 0 and
//     capabilities().fencing_tokens is false;
//   - not fair, no server wake-ups: waiters poll;
//   - a dead holder's lock is free only when its ttl runs out;
//   - memcached keeps nothing on disk: a restart drops every lock, and an
//     eviction under memory pressure can drop a held one (the holder learns it
//     at its next renewal);
//   - memcached counts expiry in whole seconds: the ttl is rounded up to
//     seconds and the holder counts its lease as one second shorter;
//   - no authentication: the server must be on a network you trust.
//
// Addresses: "host:port" (port 11211 when left out) or "memcached://host[:port]".
//
// Errors: acquire fails with std::errc::connection_refused, errc::connection_loss
// (the server closed the connection, or a connect or a command did not finish
// within connect_timeout or command_timeout: libmemcached does not tell them
// apart) or std::errc::protocol_error when the server cannot be used; lock() does not retry on a server that is down,
// try_lock_for() retries until its deadline and then reports the last error.
//
// Threads: libmemcached's calls block: the service runs them on a thread of
// its own (whatever `executor` is given), one call at a time. Completions go
// to `executor` when given, else to that thread. Destroy the Locks before
// their service.
#pragma once

#include <zklock/lock.hpp>
#include <zklock/log.hpp>
#include <zklock/memcached/export.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

namespace zklock {

namespace detail {
struct memcached_context;
}

/// Options of MemcachedLockService.
struct MemcachedOptions {
    /// The lease: how long a lock outlives a holder that stopped renewing it,
    /// rounded up to whole seconds (at least 2 s). The watchdog renews every
    /// ttl/3. Default 10 s.
    std::chrono::milliseconds ttl{10000};
    /// How long a connect may take. Default 2 s.
    std::chrono::milliseconds connect_timeout{2000};
    /// A command with no reply within this fails with errc::connection_loss. Default 1 s.
    std::chrono::milliseconds command_timeout{1000};
    /// Prepended to every key. Default "zklock:".
    std::string key_prefix = "zklock:";
    /// Where completions go when a handler names no executor; empty (default):
    /// the service's own thread.
    boost::asio::any_io_executor executor;
    /// The service's log, records with source "memcached" up to `log.level`: a
    /// command that failed (warn), a lock lost (error). Default: none.
    log_sink log;
};

/// Locks on one memcached server (see the top of this file for the recipe).
/// capabilities(): backend "memcached", not FIFO, dead holder released at ttl
/// expiry, no fencing tokens, waiters poll, reports loss.
class ZKLOCK_MEMCACHED_EXPORT MemcachedLockService : public LockService {
public:
    /// `address` is "host:port", "host" or "memcached://host[:port]". Throws
    /// zklock::error (errc::invalid_argument) for a malformed address or a ttl
    /// under 2 s. Connects lazily: an unreachable server shows at the first acquire.
    explicit MemcachedLockService(const std::string& address, MemcachedOptions options = {});
    ~MemcachedLockService() override;
    MemcachedLockService(const MemcachedLockService&) = delete;
    MemcachedLockService& operator=(const MemcachedLockService&) = delete;

    /// Throws zklock::error(errc::invalid_path) for a bad name (validate_lock_name).
    Lock make_lock(const std::string& name) override;
    lock_capabilities capabilities() const noexcept override;

    /// The key of lock `name` under `prefix` ("zklock:name").
    static std::string key_for(std::string_view prefix, std::string_view name);

private:
    std::shared_ptr<detail::memcached_context> context_;
};

} // namespace zklock
