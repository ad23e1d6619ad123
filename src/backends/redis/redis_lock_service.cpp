#include <zklock/redis/redis_lock_service.hpp>

#include "backends/redis/redis_backend.hpp"
#include "backends/redis/redis_context.hpp"

#include <boost/asio/post.hpp>

namespace zklock {
namespace asio = boost::asio;

namespace detail {

namespace redis {

lock_capabilities capabilities_of(std::string_view backend) noexcept {
    auto c = key_lease_capabilities(backend);
    c.server_wakes_waiters = true;
    if (backend == "redlock")
        c.limits = "not FIFO (pub/sub wakes every waiter); safety rests on clocks and on the holder renewing within the "
                   "ttl, a dead holder blocks others until its ttl runs out, and fencing tokens restart when masters "
                   "restart without persistence";
    else
        c.limits = "not FIFO (pub/sub wakes every waiter); a dead holder blocks others until its ttl runs out, and a "
                   "holder paused past its ttl or a failover to a lagging replica can let two clients hold the lock "
                   "(fencing tokens restart when Redis restarts without persistence)";
    return c;
}

} // namespace redis

namespace {

Lock make_redis_lock(const std::shared_ptr<redis_context>& ctx, const std::string& name) {
    std::string reason;
    if (const auto ec = validate_lock_name(name, &reason)) throw error(ec, "zklock: " + reason + ": '" + name + "'");
    auto backend = std::make_shared<redis::redis_backend>(ctx, RedisLockService::key_for(ctx->options.key_prefix, name));
    backend->register_closer();
    return Lock(std::move(backend));
}

void close_context(const std::shared_ptr<redis_context>& ctx) noexcept {
    try {
        // Graceful: the releases the Locks' destructors queued still reach the server.
        asio::post(ctx->strand, [ctx] { ctx->close(true); });
        if (ctx->own) ctx->own->stop_and_join();
    } catch (...) {
    }
}

} // namespace
} // namespace detail

RedisLockService::RedisLockService(const std::string& host_port, RedisOptions options)
    : context_(std::make_shared<detail::redis_context>(std::vector<std::string>{host_port}, std::move(options), "redis")) {}
RedisLockService::~RedisLockService() { detail::close_context(context_); }
Lock RedisLockService::make_lock(const std::string& name) { return detail::make_redis_lock(context_, name); }
lock_capabilities RedisLockService::capabilities() const noexcept { return detail::redis::capabilities_of("redis"); }
std::string RedisLockService::key_for(std::string_view prefix, std::string_view name) {
    return std::string(prefix) + "{" + std::string(name) + "}";
}

RedlockService::RedlockService(const std::vector<std::string>& host_ports, RedisOptions options)
    : context_(std::make_shared<detail::redis_context>(host_ports, std::move(options), "redlock")) {}
RedlockService::~RedlockService() { detail::close_context(context_); }
Lock RedlockService::make_lock(const std::string& name) { return detail::make_redis_lock(context_, name); }
lock_capabilities RedlockService::capabilities() const noexcept { return detail::redis::capabilities_of("redlock"); }

} // namespace zklock
