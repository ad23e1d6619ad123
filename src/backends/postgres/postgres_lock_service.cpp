#include <zklock/postgres/postgres_lock_service.hpp>

#include "backends/postgres/postgres_context.hpp"
#include "backends/sql/sql_context.hpp"
#include "backends/sql/sql_lock.hpp"

#include <memory>
#include <string>

namespace zklock {

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

PostgresLockServiceBase::PostgresLockServiceBase(method m, std::string conninfo, PostgresOptions options)
    : context_(std::make_shared<detail::postgres_context>(detail::method_of(static_cast<int>(m)), std::move(conninfo),
                                                          std::move(options))) {}

PostgresLockServiceBase::~PostgresLockServiceBase() { detail::sql::sql_context::end_service(context_); }

Lock PostgresLockServiceBase::make_lock(const std::string& name) {
    std::string reason;
    if (const auto ec = validate_lock_name(name, &reason)) throw error(ec, "zklock: " + reason + ": '" + name + "'");
    auto backend = detail::pg::make_lock(context_, name);
    context_->track(backend);
    return Lock(std::move(backend));
}

lock_capabilities PostgresLockServiceBase::capabilities() const noexcept {
    return context_->capabilities;
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
