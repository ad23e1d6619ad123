#include <zklock/mysql/mysql_lock_service.hpp>

#include "backends/mysql/mysql_context.hpp"
#include "backends/sql/sql_context.hpp"
#include "backends/sql/sql_lock.hpp"

#include <zklock/tls_options.hpp>

#include <memory>
#include <string>

namespace zklock {

namespace detail {

lock_capabilities mysql_capabilities(sql_steps::method method) noexcept {
    // No order is promised among GET_LOCK or row lock waiters, and pollers race.
    // Only a server wait (GET_LOCK, FOR UPDATE) is woken by the server.
    const bool notified = !sql_steps::lives_by_ttl(method);
    switch (method) {
    case sql_steps::method::lease:
        return sql::sql_capabilities(
            "mysql-lease", method, false, notified,
            "one connection per Lock object; waiters poll (no notifications in MySQL), not FIFO; a paused holder can "
            "outlive its TTL (use the fencing token, a sequence that keeps increasing only while the database is "
            "durable)");
    case sql_steps::method::advisory:
        return sql::sql_capabilities(
            "mysql-advisory", method, false, notified,
            "one connection per Lock object (GET_LOCK belongs to the server session); names longer than the server's "
            "64 characters are hashed; no promised order among waiters; a holder cut off from the server keeps "
            "believing it holds until its connection fails");
    case sql_steps::method::row:
        return sql::sql_capabilities(
            "mysql-row", method, false, notified,
            "one connection and one open transaction per holder (long holds keep old row versions, InnoDB's purge "
            "waits); not strictly FIFO; a holder cut off from the server keeps believing it holds until its "
            "connection fails");
    case sql_steps::method::version: break;
    }
    return sql::sql_capabilities("mysql-version", method, false, notified,
                                 "waiters poll (optimistic: a read, then a conditional update), not FIFO; a paused "
                                 "holder can outlive its TTL; the version is the fencing token and starts again if "
                                 "the row is deleted");
}

namespace {

sql_steps::method method_of(int m) noexcept {
    switch (m) {
    case 0: return sql_steps::method::lease;
    case 1: return sql_steps::method::advisory;
    case 2: return sql_steps::method::row;
    default: return sql_steps::method::version;
    }
}

} // namespace
} // namespace detail

MysqlLockServiceBase::MysqlLockServiceBase(method m, const std::string& address, MysqlOptions options) {
    std::error_code ec;
    std::string reason;
    auto parsed = detail::mysql::resolve_mysql_address(address, options.user, options.password, ec, &reason);
    if (ec) throw error(ec, "zklock: a MySQL address that cannot be read: " + reason);
    // The TLS files as the ZooKeeper session checks its own: readable, the
    // certificate with its key, the key private.
    if (parsed.tls != detail::mysql::tls_mode::disabled) {
        if (const auto bad = validate_tls({parsed.ssl_ca, parsed.ssl_cert, parsed.ssl_key}, &reason))
            throw error(bad, "zklock: a MySQL address's TLS files: " + reason);
    }
    context_ = std::make_shared<detail::mysql_context>(detail::method_of(static_cast<int>(m)), std::move(parsed),
                                                       std::move(options));
}

MysqlLockServiceBase::~MysqlLockServiceBase() { detail::sql::sql_context::end_service(context_); }

Lock MysqlLockServiceBase::make_lock(const std::string& name) {
    std::string reason;
    if (const auto ec = validate_lock_name(name, &reason)) throw error(ec, "zklock: " + reason + ": '" + name + "'");
    auto backend = detail::mysql::make_lock(context_, name);
    context_->track(backend);
    return Lock(std::move(backend));
}

lock_capabilities MysqlLockServiceBase::capabilities() const noexcept { return context_->capabilities; }

MysqlLeaseLockService::MysqlLeaseLockService(const std::string& address, MysqlOptions options)
    : MysqlLockServiceBase(method::lease, address, std::move(options)) {}
MysqlAdvisoryLockService::MysqlAdvisoryLockService(const std::string& address, MysqlOptions options)
    : MysqlLockServiceBase(method::advisory, address, std::move(options)) {}
MysqlRowLockService::MysqlRowLockService(const std::string& address, MysqlOptions options)
    : MysqlLockServiceBase(method::row, address, std::move(options)) {}
MysqlVersionLockService::MysqlVersionLockService(const std::string& address, MysqlOptions options)
    : MysqlLockServiceBase(method::version, address, std::move(options)) {}

} // namespace zklock
