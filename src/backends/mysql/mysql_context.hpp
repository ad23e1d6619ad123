// What the Locks of one MySQL-protocol lock service share: the engine's
// context (sql_context) and the server's address and options.
#pragma once

#include "backends/mysql/mysql_address.hpp"
#include "backends/sql/sql_context.hpp"
#include "backends/sql/sql_steps.hpp"

#include <zklock/lock.hpp>
#include <zklock/mysql/mysql_lock_service.hpp>

#include <memory>
#include <string>

namespace zklock::detail {

/// What a MySQL method promises (its `backend`: "mysql-lease", ...).
lock_capabilities mysql_capabilities(sql_steps::method m) noexcept;

struct mysql_context : sql::sql_context {
    mysql::mysql_address address;
    MysqlOptions options;

    mysql_context(sql_steps::method m, mysql::mysql_address a, MysqlOptions o)
        : sql_context(m, mysql_capabilities(m), {o.lease_ttl, o.renew_interval, o.log, o.executor}, "MysqlOptions"),
          address(std::move(a)), options(std::move(o)) {}
};

namespace mysql {
/// One Lock of the service (my_backend.cpp).
std::shared_ptr<sql::sql_lock> make_lock(std::shared_ptr<mysql_context> ctx, std::string name);
} // namespace mysql

} // namespace zklock::detail
