#include "backends/mysql/mysql_statements.hpp"

#include "backends/sql/sql_steps.hpp"

#include <string>

namespace zklock::detail::mysql_sql {
namespace {

const char* table_of(method m) {
    switch (m) {
    case method::lease: return "zklock_leases";
    case method::row: return "zklock_rows";
    case method::version: return "zklock_versions";
    case method::advisory: break;
    }
    return "";
}

// An interval on the server's clock: NOW(6) + ttl.
std::string expiry(std::chrono::milliseconds ttl) {
    return "NOW(6) + INTERVAL " + std::to_string(ttl.count() * 1000) + " MICROSECOND";
}

} // namespace

std::string literal(const std::string& s) {
    std::string out = "'";
    for (const char c : s) {
        if (c == '\'' || c == '\\') out += '\\';
        out += c;
    }
    return out + "'";
}

std::string advisory_key(const std::string& name) {
    std::string key = "zklock:" + name;
    if (key.size() <= 64) return key;
    return "zklock#" + sql_steps::hashed_name(name);
}

std::string session(method m) {
    // A year: the server's own limits (wait_timeout ends idle connections after
    // 8 hours by default; a row lock wait fails after 50 s) must not end a hold
    // or a wait that zklock's deadlines govern.
    std::string tables = "'zklock_fence'";
    if (m != method::advisory) tables += std::string(", ") + literal(table_of(m));
    return "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED; "
           "SET SESSION wait_timeout = 31536000, SESSION innodb_lock_wait_timeout = 31536000; "
           "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN (" +
           tables + ")";
}

std::string objects_needed(method m) { return m == method::advisory ? "1" : "2"; }

std::string create(method m) {
    std::string sql = "CREATE SEQUENCE IF NOT EXISTS zklock_fence";
    switch (m) {
    case method::lease:
        sql += "; CREATE TABLE IF NOT EXISTS zklock_leases(name VARCHAR(255) NOT NULL PRIMARY KEY, "
               "owner CHAR(32) NOT NULL, fence BIGINT NOT NULL, expires_at DATETIME(6) NOT NULL) ENGINE=InnoDB";
        break;
    case method::row:
        sql += "; CREATE TABLE IF NOT EXISTS zklock_rows(name VARCHAR(255) NOT NULL PRIMARY KEY, "
               "fence BIGINT NOT NULL DEFAULT 0, holder BIGINT NOT NULL DEFAULT 0) ENGINE=InnoDB";
        break;
    case method::version:
        sql += "; CREATE TABLE IF NOT EXISTS zklock_versions(name VARCHAR(255) NOT NULL PRIMARY KEY, "
               "owner CHAR(32) NULL, version BIGINT NOT NULL DEFAULT 0, expires_at DATETIME(6) NULL) ENGINE=InnoDB";
        break;
    case method::advisory: break;
    }
    return sql;
}

std::string verify(method m) {
    std::string sql;
    switch (m) {
    case method::lease: sql = "SELECT name, owner, fence, expires_at FROM zklock_leases LIMIT 0; "; break;
    case method::row: sql = "SELECT name, fence, holder FROM zklock_rows LIMIT 0; "; break;
    case method::version: sql = "SELECT name, owner, version, expires_at FROM zklock_versions LIMIT 0; "; break;
    case method::advisory: return "SELECT NEXTVAL(zklock_fence) IS NOT NULL";
    }
    // The name must be a unique key on its own: else two leases of one name
    // could both be inserted, and FOR UPDATE would lock more than one record.
    sql += "SELECT COUNT(*) FROM (SELECT INDEX_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() "
           "AND TABLE_NAME = " + literal(table_of(m)) + " AND NON_UNIQUE = 0 GROUP BY INDEX_NAME "
           "HAVING COUNT(*) = 1 AND MAX(COLUMN_NAME) = 'name') AS k";
    return sql;
}

std::string row_exists(method m, const std::string& name) {
    return std::string("SELECT COUNT(*) FROM ") + table_of(m) + " WHERE name = " + literal(name);
}

std::string insert_row(method m, const std::string& name) {
    return std::string("INSERT IGNORE INTO ") + table_of(m) + "(name) VALUES (" + literal(name) + ")";
}

std::string attempt(method m, const lock_args& a) {
    const std::string n = literal(a.name);
    switch (m) {
    case method::lease:
        // Autocommit statements: sweep the expired lease (the server's clock),
        // insert ours (a duplicate key, 1062, means another holds it), then draw
        // the fence while the row is ours, so that tokens follow the order of
        // the holds (a fence drawn before the insert could be older than the
        // previous holder's).
        return "DELETE FROM zklock_leases WHERE name = " + n + " AND expires_at < NOW(6); "
               "INSERT INTO zklock_leases(name, owner, fence, expires_at) VALUES (" + n + ", " + literal(a.owner) +
               ", 0, " + expiry(a.ttl) + "); "
               "UPDATE zklock_leases SET fence = NEXTVAL(zklock_fence) WHERE name = " + n + " AND owner = " +
               literal(a.owner) + "; "
               "SELECT fence FROM zklock_leases WHERE name = " + n + " AND owner = " + literal(a.owner);
    case method::advisory:
        // The token only once GET_LOCK answered 1 (IF evaluates one branch).
        // A year for "no limit": zklock's deadline or cancel kills the wait.
        return "SELECT IF(GET_LOCK(" + literal(advisory_key(a.name)) + ", " + (a.no_wait ? "0" : "31536000") +
               ") = 1, NEXTVAL(zklock_fence), NULL)";
    case method::row:
        // The transaction stays open while the lock is held; the holder's
        // connection id goes into the row (visible to READ UNCOMMITTED readers:
        // who holds it).
        return "START TRANSACTION; SELECT fence FROM zklock_rows WHERE name = " + n + " FOR UPDATE" +
               (a.no_wait ? " NOWAIT" : "") + "; UPDATE zklock_rows SET fence = NEXTVAL(zklock_fence), holder = "
               "CONNECTION_ID() WHERE name = " + n + "; SELECT fence FROM zklock_rows WHERE name = " + n;
    case method::version:
        return "SELECT version, owner IS NULL OR expires_at < NOW(6) FROM zklock_versions WHERE name = " + n;
    }
    return {};
}

std::string version_take(const lock_args& a) {
    return "UPDATE zklock_versions SET owner = " + literal(a.owner) + ", version = version + 1, expires_at = " +
           expiry(a.ttl) + " WHERE name = " + literal(a.name) +
           " AND (owner IS NULL OR expires_at < NOW(6)) AND version = " + std::to_string(a.version);
}

std::string renew(method m, const lock_args& a) {
    if (m == method::version)
        return "UPDATE zklock_versions SET expires_at = " + expiry(a.ttl) + " WHERE name = " + literal(a.name) +
               " AND owner = " + literal(a.owner) + " AND version = " + std::to_string(a.version);
    return "UPDATE zklock_leases SET expires_at = " + expiry(a.ttl) + " WHERE name = " + literal(a.name) +
           " AND owner = " + literal(a.owner);
}

std::string release(method m, const lock_args& a) {
    switch (m) {
    case method::lease:
        return "DELETE FROM zklock_leases WHERE name = " + literal(a.name) + " AND owner = " + literal(a.owner);
    case method::advisory: return "SELECT RELEASE_LOCK(" + literal(advisory_key(a.name)) + ")";
    case method::row: return "COMMIT";
    case method::version:
        return "UPDATE zklock_versions SET owner = NULL, expires_at = NULL WHERE name = " + literal(a.name) +
               " AND owner = " + literal(a.owner) + " AND version = " + std::to_string(a.version);
    }
    return {};
}

} // namespace zklock::detail::mysql_sql
