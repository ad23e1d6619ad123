#include <zklock/memcached/memcached_lock_service.hpp>

#include "backends/memcached/memcached_backend.hpp"
#include "backends/memcached/memcached_context.hpp"
#include "support/log_emit.hpp"

#include <boost/asio/post.hpp>

#include <cstdio>
#include <csignal>

#include <pthread.h>

namespace zklock {
namespace asio = boost::asio;

namespace detail {

namespace memcached {

lock_capabilities capabilities() noexcept {
    lock_capabilities c;
    c.backend = "memcached";
    c.fair_fifo = false;
    c.dead_holder = dead_holder_release::ttl_expiry;
    c.fencing_tokens = false;
    c.fencing_monotonic_across_failover = false;
    c.server_wakes_waiters = false;
    c.wakes_one_waiter = false;
    c.reports_loss = true;
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

std::shared_ptr<own_context> own_thread() {
    auto own = own_context::start();
    // A server that closed the connection must give EPIPE, not kill the process.
    asio::post(own->ioc, [] {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &set, nullptr);
    });
    return own;
}

} // namespace
} // namespace memcached

memcached_context::memcached_context(const std::string& address_text, MemcachedOptions opts)
    : where(memcached::parse(address_text)), options(memcached::validated(opts)), own(memcached::own_thread()),
      executor(options.executor ? options.executor : asio::any_io_executor(own->ioc.get_executor())),
      client(where, options.connect_timeout, options.command_timeout) {}

void memcached_context::log(log_level level, const std::string& message) const {
    emit(options.log, level, "memcached", message);
}

std::string memcached_context::random_owner() {
    char buf[33];
    std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(rng()),
                  static_cast<unsigned long long>(rng()));
    return buf;
}

std::chrono::milliseconds memcached_context::uniform(std::chrono::milliseconds lo, std::chrono::milliseconds hi) {
    return std::chrono::milliseconds(std::uniform_int_distribution<long long>(lo.count(), hi.count())(rng));
}

void memcached_context::close() {
    std::map<std::uint64_t, std::function<void()>> live;
    {
        std::lock_guard lk(closers_mutex);
        live = closers;
    }
    for (auto& [id, c] : live) c();
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
