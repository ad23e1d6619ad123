#include <zklock/mysql/mysql_lock_service.hpp>

#include "backends/mysql/my_backend.hpp"
#include "backends/mysql/mysql_context.hpp"

#include <boost/asio/post.hpp>

#include <algorithm>

namespace zklock {
namespace asio = boost::asio;

namespace detail {

const char* mysql_context::backend_name() const noexcept {
    switch (method) {
    case mysql_steps::method::lease: return "mysql-lease";
    case mysql_steps::method::advisory: return "mysql-advisory";
    case mysql_steps::method::row: return "mysql-row";
    case mysql_steps::method::version: return "mysql-version";
    }
    return "mysql";
}

lock_capabilities mysql_context::capabilities() const noexcept {
    lock_capabilities c;
    c.backend = backend_name();
    c.reports_loss = true;
    c.fencing_monotonic_across_failover = true;  // a sequence or a row's version, as durable as the database
    switch (method) {
    case mysql_steps::method::lease:
        c.fair_fifo = false;
        c.dead_holder = dead_holder_release::ttl_expiry;
        c.server_wakes_waiters = false;
        c.wakes_one_waiter = false;
        c.limits = "one connection per Lock object; waiters poll (no notifications in MySQL), not FIFO; a paused "
                   "holder can outlive its TTL (use the fencing token, a sequence that keeps increasing only while "
                   "the database is durable)";
        break;
    case mysql_steps::method::advisory:
        c.fair_fifo = false;  // MariaDB does not promise an order among GET_LOCK waiters
        c.dead_holder = dead_holder_release::connection_end;
        c.server_wakes_waiters = true;
        c.wakes_one_waiter = true;
        c.limits = "one connection per Lock object (GET_LOCK belongs to the server session); names longer than the "
                   "server's 64 characters are hashed; no promised order among waiters; a holder cut off from the "
                   "server keeps believing it holds until its connection fails";
        break;
    case mysql_steps::method::row:
        c.fair_fifo = false;
        c.dead_holder = dead_holder_release::connection_end;
        c.server_wakes_waiters = true;
        c.wakes_one_waiter = true;
        c.limits = "one connection and one open transaction per holder (long holds keep old row versions, InnoDB's "
                   "purge waits); not strictly FIFO; a holder cut off from the server keeps believing it holds until "
                   "its connection fails";
        break;
    case mysql_steps::method::version:
        c.fair_fifo = false;
        c.dead_holder = dead_holder_release::ttl_expiry;
        c.server_wakes_waiters = false;
        c.wakes_one_waiter = false;
        c.limits = "waiters poll (optimistic: a read, then a conditional update), not FIFO; a paused holder can "
                   "outlive its TTL; the version is the fencing token and starts again if the row is deleted";
        break;
    }
    return c;
}

namespace {

mysql_steps::method method_of(int m) noexcept {
    switch (m) {
    case 0: return mysql_steps::method::lease;
    case 1: return mysql_steps::method::advisory;
    case 2: return mysql_steps::method::row;
    default: return mysql_steps::method::version;
    }
}

} // namespace
} // namespace detail

MysqlLockServiceBase::MysqlLockServiceBase(method m, const std::string& address, MysqlOptions options) {
    if (options.lease_ttl.count() <= 0)
        throw error(make_error_code(errc::invalid_argument), "zklock::MysqlOptions: lease_ttl must be positive");
    if (options.renew_interval.count() < 0 || options.renew_interval >= options.lease_ttl)
        throw error(make_error_code(errc::invalid_argument),
                    "zklock::MysqlOptions: renew_interval must be shorter than lease_ttl");
    std::error_code ec;
    std::string reason;
    auto parsed = detail::mysql::resolve_mysql_address(address, options.user, options.password, ec, &reason);
    if (ec) throw error(ec, "zklock: a MySQL address that cannot be read: " + reason);
    std::shared_ptr<detail::own_context> own;
    auto executor = options.executor;
    if (!executor) {
        own = detail::own_context::start();
        executor = own->ioc.get_executor();
    }
    context_ = std::make_shared<detail::mysql_context>(detail::method_of(static_cast<int>(m)), std::move(parsed),
                                                       std::move(options), std::move(own), std::move(executor));
}

MysqlLockServiceBase::~MysqlLockServiceBase() {
    if (!context_->own) return;
    context_->own->stop_and_join(std::chrono::seconds(5), [ctx = context_] {
        asio::post(ctx->strand, [ctx] {
            ctx->ended = true;
            std::vector<std::shared_ptr<detail::mysql::my_backend>> live;
            {
                std::lock_guard lk(ctx->m);
                for (const auto& w : ctx->backends)
                    if (auto b = w.lock()) live.push_back(std::move(b));
            }
            for (const auto& b : live) b->end_of_service();
        });
    });
}

Lock MysqlLockServiceBase::make_lock(const std::string& name) {
    std::string reason;
    if (const auto ec = validate_lock_name(name, &reason)) throw error(ec, "zklock: " + reason + ": '" + name + "'");
    auto backend = std::make_shared<detail::mysql::my_backend>(context_, name);
    {
        std::lock_guard lk(context_->m);
        auto& v = context_->backends;
        v.erase(std::remove_if(v.begin(), v.end(), [](const auto& w) { return w.expired(); }), v.end());
        v.push_back(backend);
    }
    return Lock(std::move(backend));
}

lock_capabilities MysqlLockServiceBase::capabilities() const noexcept { return context_->capabilities(); }

MysqlLeaseLockService::MysqlLeaseLockService(const std::string& address, MysqlOptions options)
    : MysqlLockServiceBase(method::lease, address, std::move(options)) {}
MysqlAdvisoryLockService::MysqlAdvisoryLockService(const std::string& address, MysqlOptions options)
    : MysqlLockServiceBase(method::advisory, address, std::move(options)) {}
MysqlRowLockService::MysqlRowLockService(const std::string& address, MysqlOptions options)
    : MysqlLockServiceBase(method::row, address, std::move(options)) {}
MysqlVersionLockService::MysqlVersionLockService(const std::string& address, MysqlOptions options)
    : MysqlLockServiceBase(method::version, address, std::move(options)) {}

} // namespace zklock
