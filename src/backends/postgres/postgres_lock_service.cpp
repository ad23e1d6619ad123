#include <zklock/postgres/postgres_lock_service.hpp>

#include "backends/postgres/pg_backend.hpp"
#include "backends/postgres/postgres_context.hpp"

#include <boost/asio/post.hpp>

#include <algorithm>
#include <future>

namespace zklock {
namespace asio = boost::asio;

namespace detail {
namespace {

// PostgresLockServiceBase::method, which is protected: 0 lease, 1 advisory, 2 row, 3 version.
const pg::lock_method& method_of(int m) noexcept {
    switch (m) {
    case 0: return pg::lease_method();
    case 1: return pg::advisory_method();
    case 2: return pg::row_method();
    default: return pg::version_method();
    }
}

} // namespace
} // namespace detail

PostgresLockServiceBase::PostgresLockServiceBase(method m, std::string conninfo, PostgresOptions options) {
    if (options.lease_ttl.count() <= 0)
        throw error(make_error_code(errc::invalid_argument), "zklock::PostgresOptions: lease_ttl must be positive");
    if (options.renew_interval.count() < 0 || options.renew_interval >= options.lease_ttl)
        throw error(make_error_code(errc::invalid_argument),
                    "zklock::PostgresOptions: renew_interval must be shorter than lease_ttl");
    std::shared_ptr<detail::own_context> own;
    auto executor = options.executor;
    if (!executor) {
        own = detail::own_context::start();
        executor = own->ioc.get_executor();
    }
    context_ = std::make_shared<detail::postgres_context>(detail::method_of(static_cast<int>(m)), std::move(conninfo),
                                                          std::move(options), std::move(own), std::move(executor));
}

PostgresLockServiceBase::~PostgresLockServiceBase() {
    if (!context_->own) return;
    // What the Locks' destructors queued (their releases) runs first; a
    // connection that still waits after that (a server that does not answer)
    // is closed, so that nothing holds the service's context past its end.
    context_->own->stop_and_join(std::chrono::seconds(5), [ctx = context_] {
        asio::post(ctx->strand, [ctx] {
            ctx->ended = true;
            std::vector<std::shared_ptr<detail::pg::pg_backend>> live;
            {
                std::lock_guard lk(ctx->m);
                for (const auto& w : ctx->backends)
                    if (auto b = w.lock()) live.push_back(std::move(b));
            }
            for (const auto& b : live) b->end_of_service();
        });
    });
}

Lock PostgresLockServiceBase::make_lock(const std::string& name) {
    std::string reason;
    if (const auto ec = validate_lock_name(name, &reason)) throw error(ec, "zklock: " + reason + ": '" + name + "'");
    auto backend = std::make_shared<detail::pg::pg_backend>(context_, name);
    {
        std::lock_guard lk(context_->m);
        auto& v = context_->backends;
        v.erase(std::remove_if(v.begin(), v.end(), [](const auto& w) { return w.expired(); }), v.end());
        v.push_back(backend);
    }
    return Lock(std::move(backend));
}

lock_capabilities PostgresLockServiceBase::capabilities() const noexcept {
    return context_->method.capabilities();
}


PostgresLeaseLockService::PostgresLeaseLockService(std::string conninfo, PostgresOptions options)
    : PostgresLockServiceBase(method::lease, std::move(conninfo), std::move(options)) {}
PostgresAdvisoryLockService::PostgresAdvisoryLockService(std::string conninfo, PostgresOptions options)
    : PostgresLockServiceBase(method::advisory, std::move(conninfo), std::move(options)) {}
PostgresRowLockService::PostgresRowLockService(std::string conninfo, PostgresOptions options)
    : PostgresLockServiceBase(method::row, std::move(conninfo), std::move(options)) {}
PostgresVersionLockService::PostgresVersionLockService(std::string conninfo, PostgresOptions options)
    : PostgresLockServiceBase(method::version, std::move(conninfo), std::move(options)) {}

} // namespace zklock
