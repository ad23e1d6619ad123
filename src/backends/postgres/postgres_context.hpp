// What the Locks of one PostgreSQL lock service share: the engine's context
// (sql_context) and the method, connection string and options.
#pragma once

#include "backends/postgres/lock_method.hpp"
#include "backends/sql/sql_context.hpp"

#include <zklock/postgres/postgres_lock_service.hpp>

#include <memory>
#include <string>

namespace zklock::detail {

struct postgres_context : sql::sql_context {
    const pg::lock_method& method;
    std::string conninfo;
    PostgresOptions options;

    postgres_context(const pg::lock_method& meth, std::string ci, PostgresOptions o)
        : sql_context(meth.kind(), meth.capabilities(),
                      {o.lease_ttl, o.renew_interval, o.log, o.executor}, "PostgresOptions"),
          method(meth), conninfo(std::move(ci)), options(std::move(o)) {}
};

namespace pg {
/// One Lock of the service (pg_backend.cpp).
std::shared_ptr<sql::sql_lock> make_lock(std::shared_ptr<postgres_context> ctx, std::string name);
} // namespace pg

} // namespace zklock::detail
