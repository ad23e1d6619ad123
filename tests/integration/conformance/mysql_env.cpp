#include "backend_env.hpp"

#include "../support.hpp"

#include <boost/asio/use_future.hpp>

#include <zklock/backends.hpp>
#include <zklock/mysql/mysql_lock_service.hpp>
#include <zklock/testing/mariadb_server.hpp>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <iostream>
#include <string>
#include <vector>

namespace zklock::conformance {
namespace {

using namespace std::chrono_literals;

enum class my_kind { lease, advisory, row, version };

constexpr const char* password = "conformance-secret";

// One MariaDB server for the four backends and the tests below: started on
// first use, stopped when the test program exits.
testing::MariaDBServer& shared_server() {
    static const std::unique_ptr<testing::MariaDBServer> server = [] {
        testing::MariaDBServerOptions o;
        o.password = password;
        return std::make_unique<testing::MariaDBServer>(o);
    }();
    return *server;
}

// Lock names are validated ([A-Za-z0-9._-]): quoting needs no escaping.
std::string sql_quoted(const std::string& s) { return "'" + s + "'"; }

// GET_LOCK's name for a lock (mysql_statements' advisory_key; the names here are short).
std::string advisory_key(const std::string& name) { return sql_quoted("zklock:" + name); }

std::size_t count(const std::string& text) { return text.empty() ? 0 : std::stoul(text); }

class MysqlEnv : public BackendEnv {
public:
    explicit MysqlEnv(my_kind kind) : kind_(kind), server_(shared_server()) {}

    std::unique_ptr<LockService> client() override { return open(server_.connect_string()); }

    std::unique_ptr<LockService> crashable_client() override {
        return std::make_unique<LinkedClient>(std::vector<std::uint16_t>{server_.port()}, [this](const auto& addresses) {
            return open("mysql://zklock@" + addresses.front() + "/zklock");
        });
    }
    void crash(LockService& service) override { static_cast<LinkedClient&>(service).crash(); }

    void steal(const std::string& name) override {
        switch (kind_) {
        case my_kind::lease: server_.query("DELETE FROM zklock_leases WHERE name = " + sql_quoted(name)); break;
        case my_kind::version:
            server_.query("UPDATE zklock_versions SET owner = NULL, expires_at = NULL WHERE name = " + sql_quoted(name));
            break;
        case my_kind::advisory: {
            const auto id = server_.query("SELECT IS_USED_LOCK(" + advisory_key(name) + ")");
            ASSERT_NE(id, "NULL\n") << "nobody holds " << name;
            server_.query("KILL " + id);
            break;
        }
        case my_kind::row: {
            // The holder wrote its connection id into the row, uncommitted: a
            // dirty read sees it.
            const auto id = server_.query("SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED; "
                                          "SELECT holder FROM zklock_rows WHERE name = " + sql_quoted(name));
            ASSERT_FALSE(id.empty()) << "no row for " << name;
            server_.query("KILL " + id);
            break;
        }
        }
    }

    std::size_t leftovers(const std::string& name) override {
        const auto n = sql_quoted(name);
        try {
            switch (kind_) {
            case my_kind::lease:
                return count(server_.query("SELECT COUNT(*) FROM zklock_leases WHERE name = " + n +
                                           " AND expires_at > NOW(6)"));
            case my_kind::version:
                return count(server_.query("SELECT COUNT(*) FROM zklock_versions WHERE name = " + n +
                                           " AND owner IS NOT NULL AND expires_at > NOW(6)"));
            case my_kind::advisory:
                // The holder, and every connection waiting in GET_LOCK for it.
                return count(server_.query(
                    "SELECT (IS_USED_LOCK(" + advisory_key(name) + ") IS NOT NULL) + (SELECT COUNT(*) FROM "
                    "information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND INFO LIKE " +
                    sql_quoted("%GET_LOCK(''zklock:" + name + "''%") + ")"));
            case my_kind::row: {
                // The holder's open transaction that wrote the row, and waiters in FOR UPDATE.
                const auto left = count(server_.query(
                    "SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED; "
                    "SELECT (SELECT COUNT(*) FROM information_schema.INNODB_TRX t JOIN zklock_rows r "
                    "ON r.holder = t.trx_mysql_thread_id WHERE r.name = " + n + ") + (SELECT COUNT(*) FROM "
                    "information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND INFO LIKE " +
                    sql_quoted("%FROM zklock_rows WHERE name = ''" + name + "'' FOR UPDATE%") + ")"));
                if (left != 0)  // what is left, for a test that then fails on it
                    std::cerr << "mysql-row leftovers of " << name << ":\n"
                              << server_.query("SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED; "
                                               "SELECT r.holder, t.trx_mysql_thread_id, t.trx_state, t.trx_started "
                                               "FROM zklock_rows r LEFT JOIN information_schema.INNODB_TRX t ON "
                                               "r.holder = t.trx_mysql_thread_id WHERE r.name = " + n)
                              << server_.query("SELECT ID, COMMAND, STATE, TIME, INFO FROM "
                                               "information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID()");
                return left;
            }
            }
        } catch (const std::runtime_error& e) {
            if (std::string(e.what()).find("doesn't exist") != std::string::npos) return 0;  // never used
            throw;
        }
        return 0;
    }

    bool waits(LockService& client, Lock& waiter, const std::string& name, std::size_t waiters,
               std::string& how) override {
        if (kind_ != my_kind::advisory && kind_ != my_kind::row)
            return BackendEnv::waits(client, waiter, name, waiters, how);
        how = std::to_string(waiters) + " statement(s) of the lock wait in the server's PROCESSLIST";
        const auto pattern = kind_ == my_kind::advisory ? "%GET_LOCK(''zklock:" + name + "''%"
                                                        : "%FROM zklock_rows WHERE name = ''" + name + "'' FOR UPDATE%";
        return zklock::test::wait_until(
            [&] {
                return count(server_.query("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE "
                                           "ID <> CONNECTION_ID() AND INFO LIKE " + sql_quoted(pattern))) == waiters;
            },
            20s);
    }

private:
    std::unique_ptr<LockService> open(const std::string& address) const {
        MysqlOptions o;
        o.lease_ttl = 2s;
        o.password = password;
        switch (kind_) {
        case my_kind::lease: return std::make_unique<MysqlLeaseLockService>(address, o);
        case my_kind::advisory: return std::make_unique<MysqlAdvisoryLockService>(address, o);
        case my_kind::row: return std::make_unique<MysqlRowLockService>(address, o);
        case my_kind::version: return std::make_unique<MysqlVersionLockService>(address, o);
        }
        throw std::logic_error("unknown kind");
    }

    my_kind kind_;
    testing::MariaDBServer& server_;
};

const Registration mysql_lease("mysql-lease", [] { return std::make_unique<MysqlEnv>(my_kind::lease); });
const Registration mysql_advisory("mysql-advisory", [] { return std::make_unique<MysqlEnv>(my_kind::advisory); });
const Registration mysql_row("mysql-row", [] { return std::make_unique<MysqlEnv>(my_kind::row); });
const Registration mysql_version("mysql-version", [] { return std::make_unique<MysqlEnv>(my_kind::version); });

} // namespace

// Backend-specific tests: what the conformance suite cannot say about MySQL.

// An operator killing the holder's connection ends its session: the server
// frees the lock, and the holder is told.
TEST(MysqlLock, KilledConnectionIsReportedAsLossForAdvisoryAndRowLocks) {
    auto& server = shared_server();
    for (const char* backend : {"mysql-advisory", "mysql-row"}) {
        SCOPED_TRACE(backend);
        BackendOptions o;
        o.mysql = server.connect_string();
        o.mysql_password = password;
        auto a = open_lock_service(backend, o);
        auto b = open_lock_service(backend, o);
        Lock holder = a->make_lock("killed");
        Lock next = b->make_lock("killed");
        holder.lock();
        auto lost = holder.async_wait_lost(boost::asio::use_future);
        const std::string id = std::string(backend) == "mysql-advisory"
                                   ? server.query("SELECT IS_USED_LOCK('zklock:killed')")
                                   : server.query("SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED; "
                                                  "SELECT holder FROM zklock_rows WHERE name = 'killed'");
        server.query("KILL " + id);
        EXPECT_EQ(test::get_within(lost, 10s), errc::session_expired);
        EXPECT_FALSE(holder.is_held());
        EXPECT_TRUE(next.try_lock_for(10s)) << "the server did not free the lock with the connection";
        EXPECT_GT(next.fencing_token(), holder.fencing_token());
        next.unlock();
        EXPECT_TRUE(holder.try_lock_for(10s));  // it reconnects for its next acquire
        holder.unlock();
    }
}

// A lease held for longer than two TTLs is still held: the renewals keep it alive.
TEST(MysqlLock, LeasesAreRenewedWhileHeld) {
    auto& server = shared_server();
    for (const char* backend : {"mysql-lease", "mysql-version"}) {
        SCOPED_TRACE(backend);
        BackendOptions o;
        o.mysql = server.connect_string();
        o.mysql_password = password;
        o.ttl = 1s;
        auto a = open_lock_service(backend, o);
        auto b = open_lock_service(backend, o);
        Lock holder = a->make_lock("renewed");
        Lock other = b->make_lock("renewed");
        holder.lock();
        auto lost = holder.async_wait_lost(boost::asio::use_future);
        EXPECT_FALSE(other.try_lock_for(2500ms)) << "the lease expired while held";
        EXPECT_TRUE(holder.is_held());
        EXPECT_EQ(lost.wait_for(0s), std::future_status::timeout);
        holder.unlock();
        EXPECT_FALSE(test::get_within(lost));  // {}: released, not lost
        EXPECT_TRUE(other.try_lock_for(5s));
        EXPECT_GT(other.fencing_token(), holder.fencing_token());
        other.unlock();
    }
}

// A service ended right after unlock(), while the release is still on its
// way to the server, waits for its answer and then closes its connection:
// the release is done (the next client takes the lock at once) and no
// session of it stays on the server (a row holder's would keep its open
// transaction).
TEST(MysqlLock, AServiceEndedRightAfterUnlockReleasesAndLeavesNoSession) {
    auto& server = shared_server();
    const auto sessions = [&] {
        return count(server.query("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = 'zklock'"));
    };
    for (const char* backend : {"mysql-lease", "mysql-advisory", "mysql-row", "mysql-version"}) {
        SCOPED_TRACE(backend);
        BackendOptions o;
        o.mysql = server.connect_string();
        o.mysql_password = password;
        for (int round = 0; round < 5; ++round) {
            {
                auto service = open_lock_service(backend, o);
                Lock lock = service->make_lock("ended");
                lock.lock();
                lock.unlock();
            }
            EXPECT_TRUE(test::wait_until([&] { return sessions() == 0; }, 10s))
                << "round " << round << ": sessions left behind:\n"
                << server.query("SELECT ID, COMMAND, STATE, TIME, INFO FROM information_schema.PROCESSLIST "
                                "WHERE USER = 'zklock'");
            auto next = open_lock_service(backend, o);
            Lock lock = next->make_lock("ended");
            EXPECT_TRUE(lock.try_lock()) << "round " << round << ": the release did not reach the server";
            lock.unlock();
        }
    }
}

// A wrong password is an authentication error, said at once and without the
// password; a missing database is no_node; a lock table of the wrong shape is
// invalid_argument with the reason in failure_detail().
TEST(MysqlLock, BadCredentialsAndWrongTablesAreClearErrors) {
    auto& server = shared_server();
    for (const char* backend : {"mysql-lease", "mysql-advisory", "mysql-row", "mysql-version"}) {
        SCOPED_TRACE(backend);
        BackendOptions o;
        o.mysql = "mysql://zklock:wrong-guess@127.0.0.1:" + std::to_string(server.port()) + "/zklock";
        auto service = open_lock_service(backend, o);
        Lock lock = service->make_lock("auth");
        std::error_code ec;
        lock.lock(ec);
        EXPECT_EQ(ec, errc::auth_failed) << ec.message();
        EXPECT_EQ(lock.failure_detail().find("wrong-guess"), std::string::npos) << lock.failure_detail();
        EXPECT_NE(lock.failure_detail().find("Access denied"), std::string::npos) << lock.failure_detail();
        o.mysql = server.connect_string();
        o.mysql_password = password;
        o.mysql = "mysql://zklock@127.0.0.1:" + std::to_string(server.port()) + "/no_such_db";
        auto elsewhere = open_lock_service(backend, o);
        Lock missing = elsewhere->make_lock("auth");
        missing.lock(ec);
        EXPECT_TRUE(ec == errc::no_node || ec == errc::no_auth) << ec.message();
    }
    // Tables of the wrong shape, in a database of their own.
    server.query("CREATE DATABASE IF NOT EXISTS shapes; GRANT ALL ON shapes.* TO 'zklock'@'127.0.0.1'; "
                 "CREATE TABLE shapes.zklock_leases(name VARCHAR(255), owner CHAR(32), fence BIGINT, "
                 "expires_at DATETIME(6)) ENGINE=InnoDB; "
                 "CREATE TABLE shapes.zklock_rows(name VARCHAR(255) PRIMARY KEY, other INT) ENGINE=InnoDB");
    for (const char* backend : {"mysql-lease", "mysql-row"}) {
        SCOPED_TRACE(backend);
        BackendOptions o;
        o.mysql = "mysql://zklock@127.0.0.1:" + std::to_string(server.port()) + "/shapes";
        o.mysql_password = password;
        auto service = open_lock_service(backend, o);
        Lock lock = service->make_lock("shape");
        std::error_code ec;
        lock.lock(ec);
        EXPECT_EQ(ec, errc::invalid_argument) << ec.message();
        EXPECT_NE(lock.failure_detail().find("wrong shape"), std::string::npos) << lock.failure_detail();
    }
    server.query("DROP DATABASE shapes");
}

} // namespace zklock::conformance
