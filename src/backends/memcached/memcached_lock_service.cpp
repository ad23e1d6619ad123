#include <zklock/memcached/memcached_lock_service.hpp>

#include "backends/memcached/memcached_backend.hpp"
#include "backends/memcached/memcached_context.hpp"
#include "support/log_emit.hpp"

#include <boost/asio/post.hpp>

namespace zklock {
namespace asio = boost::asio;

namespace detail {

namespace memcached {

lock_capabilities capabilities() noexcept {
    auto c = key_lease_capabilities("memcached");
    c.fencing_tokens = false;
    c.server_wakes_waiters = false;
    c.limits = "no fencing token, not FIFO (waiters poll); a dead holder blocks others until its ttl runs out, a holder "
               "paused past its ttl can let two clients hold the lock, and a restart or an eviction drops held locks";
    return c;
}

namespace {

address parse(const std::string& text) {
    std::error_code ec;
    std::string reason;
    auto a = parse_address(text, ec, &reason);
    if (ec) throw error(ec, "zklock::MemcachedLockService: " + reason);
    return a;
}

const MemcachedOptions& validated(const MemcachedOptions& o) {
    if (o.ttl < std::chrono::seconds(2))
        throw error(make_error_code(errc::invalid_argument),
                    "zklock::MemcachedLockService: ttl under 2 s (memcached counts expiry in whole seconds)");
    return o;
}

} // namespace
} // namespace memcached

memcached_context::memcached_context(const std::string& address_text, MemcachedOptions opts)
    : where(memcached::parse(address_text)), options(memcached::validated(opts)), own(own_context::start_blocking_sigpipe()),
      executor(options.executor ? options.executor : asio::any_io_executor(own->ioc.get_executor())),
      client(where, options.connect_timeout, options.command_timeout) {}

void memcached_context::log(log_level level, const std::string& message) const {
    emit(options.log, level, "memcached", message);
}

void memcached_context::close() {
    end_live_locks();
    closed = true;
    client.close();
}

} // namespace detail

MemcachedLockService::MemcachedLockService(const std::string& address, MemcachedOptions options)
    : context_(std::make_shared<detail::memcached_context>(address, std::move(options))) {}

MemcachedLockService::~MemcachedLockService() {
    try {
        // The releases the Locks' destructors queued run first, then the live locks end.
        asio::post(context_->own->ioc, [ctx = context_] { ctx->close(); });
        context_->own->stop_and_join();
    } catch (...) {
    }
}

Lock MemcachedLockService::make_lock(const std::string& name) {
    std::string reason;
    if (const auto ec = validate_lock_name(name, &reason)) throw error(ec, "zklock: " + reason + ": '" + name + "'");
    auto backend = std::make_shared<detail::memcached::memcached_backend>(context_, key_for(context_->options.key_prefix, name));
    backend->register_closer();
    return Lock(std::move(backend));
}

lock_capabilities MemcachedLockService::capabilities() const noexcept { return detail::memcached::capabilities(); }

std::string MemcachedLockService::key_for(std::string_view prefix, std::string_view name) {
    return std::string(prefix) + std::string(name);
}

} // namespace zklock
