#include "backend_env.hpp"

#include "../support.hpp"

#include <boost/asio/use_future.hpp>


#include <zklock/postgres/postgres_lock_service.hpp>
#include <zklock/testing/backend_servers.hpp>
#include <zklock/testing/postgres_server.hpp>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace zklock::conformance {
namespace {

using namespace std::chrono_literals;

enum class pg_kind { lease, advisory, row, version };

// Lock names are validated ([A-Za-z0-9._-]), so single quotes need no escaping.
std::string quoted(const std::string& s) { return "'" + s + "'"; }

class PostgresEnv : public BackendEnv {
public:
    explicit PostgresEnv(pg_kind kind) : kind_(kind), server_(servers_.postgres()) {}

    std::unique_ptr<LockService> client() override { return open(server_.connect_string()); }

    std::unique_ptr<LockService> crashable_client() override {
        return std::make_unique<LinkedClient>(std::vector<std::uint16_t>{server_.port()}, [this](const auto& addresses) {
            const auto port = addresses.front().substr(addresses.front().rfind(':') + 1);
            return open("host=127.0.0.1 port=" + port + " user=postgres dbname=postgres");
        });
    }
    void crash(LockService& service) override { static_cast<LinkedClient&>(service).crash(); }

    void steal(const std::string& name) override {
        switch (kind_) {
        case pg_kind::lease: server_.psql("DELETE FROM zklock_leases WHERE name = " + quoted(name)); break;
        case pg_kind::version: server_.psql("DELETE FROM zklock_versions WHERE name = " + quoted(name)); break;
        case pg_kind::advisory:
            server_.psql("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE " + advisory_key(name) + " AND granted");
            break;
        case pg_kind::row:
            // The holder's connection (its application_name, which the server
            // cuts to 63 bytes) is idle in its transaction once the statements
            // of its grant have finished there, which may be a moment after the
            // client was told: wait for that backend.
            ASSERT_TRUE(zklock::test::wait_until([&] {
                return server_.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = " +
                                    quoted(("zklock-row:" + name).substr(0, 63)) + " AND state LIKE 'idle in transaction%'")
                           .find('t') != std::string::npos;
            })) << "no idle holder transaction of " << name << " to terminate";
            break;
        }
    }

    std::size_t leftovers(const std::string& name) override {
        std::string sql;
        switch (kind_) {
        case pg_kind::lease:
        case pg_kind::version:
            try {  // a live, unexpired lease; a version row with an owner whose expiry is ahead
                return std::stoul(server_.psql(
                    (kind_ == pg_kind::lease ? "SELECT count(*) FROM zklock_leases WHERE name = "
                                             : "SELECT count(*) FROM zklock_versions WHERE owner IS NOT NULL AND name = ") +
                    quoted(name) + " AND expires_at > now()"));
            } catch (const std::runtime_error& e) {
                if (std::string(e.what()).find("does not exist") != std::string::npos) return 0;  // never used
                throw;
            }
        case pg_kind::advisory: sql = "SELECT count(*) FROM pg_locks WHERE " + advisory_key(name); break;
        case pg_kind::row:
            // Each Lock's connection carries application_name 'zklock-row:<name>': the holder sits
            // idle in its transaction, waiters wait on a lock.
            sql = "SELECT count(*) FROM pg_stat_activity WHERE application_name = " + quoted("zklock-row:" + name) +
                  " AND (state LIKE 'idle in transaction%' OR (state = 'active' AND wait_event_type = 'Lock'))";
            break;
        }
        return static_cast<std::size_t>(std::stoul(server_.psql(sql)));
    }

    bool waits(LockService& client, Lock& waiter, const std::string& name, std::size_t waiters,
               std::string& how) override {
        if (kind_ != pg_kind::advisory && kind_ != pg_kind::row)
            return BackendEnv::waits(client, waiter, name, waiters, how);
        const std::string method = kind_ == pg_kind::advisory ? "advisory" : "row";
        how = std::to_string(waiters) + " connection(s) of the lock wait on a lock in pg_stat_activity";
        return zklock::test::wait_until(
            [&] {
                return server_.psql("SELECT count(*) FROM pg_stat_activity WHERE application_name = " +
                                    quoted(("zklock-" + method + ":" + name).substr(0, 63)) +
                                    " AND state = 'active' AND wait_event_type = 'Lock'") ==
                       std::to_string(waiters) + "\n";
            },
            20s);
    }

private:
    std::unique_ptr<LockService> open(const std::string& conninfo) const {
        PostgresOptions o;
        o.lease_ttl = 2s;
        switch (kind_) {
        case pg_kind::lease: return std::make_unique<PostgresLeaseLockService>(conninfo, o);
        case pg_kind::advisory: return std::make_unique<PostgresAdvisoryLockService>(conninfo, o);
        case pg_kind::row: return std::make_unique<PostgresRowLockService>(conninfo, o);
        case pg_kind::version: return std::make_unique<PostgresVersionLockService>(conninfo, o);
        }
        throw std::logic_error("unknown kind");
    }

    static std::string advisory_key(const std::string& name) {
        // A bigint advisory key shows in pg_locks as classid (high half), objid (low half), objsubid 1.
        return "locktype = 'advisory' AND objsubid = 1 AND ((classid::bigint << 32) | objid::bigint) = "
               "hashtextextended(" + quoted(name) + ", 0)";
    }

    pg_kind kind_;
    testing::BackendServers servers_;
    testing::PostgresServer& server_;
};

const Registration lease("postgres-lease", [] { return std::make_unique<PostgresEnv>(pg_kind::lease); });
const Registration advisory("postgres-advisory", [] { return std::make_unique<PostgresEnv>(pg_kind::advisory); });
const Registration row("postgres-row", [] { return std::make_unique<PostgresEnv>(pg_kind::row); });
const Registration version("postgres-version", [] { return std::make_unique<PostgresEnv>(pg_kind::version); });

} // namespace

// Backend-specific tests: what the conformance suite cannot say about PostgreSQL.

// An operator terminating the holder's backend ends its session: the server frees
// the lock, and the holder is told.
TEST(PostgresLock, TerminatedBackendIsReportedAsLossForAdvisoryAndRowLocks) {
    testing::PostgresServer server;
    for (const char* method : {"advisory", "row"}) {
        SCOPED_TRACE(method);
        std::unique_ptr<LockService> a, b;
        if (std::string(method) == "advisory") {
            a = std::make_unique<PostgresAdvisoryLockService>(server.connect_string());
            b = std::make_unique<PostgresAdvisoryLockService>(server.connect_string());
        } else {
            a = std::make_unique<PostgresRowLockService>(server.connect_string());
            b = std::make_unique<PostgresRowLockService>(server.connect_string());
        }
        Lock holder = a->make_lock("terminated");
        Lock next = b->make_lock("terminated");
        holder.lock();
        auto lost = holder.async_wait_lost(boost::asio::use_future);
        const std::string killed = server.psql(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'zklock-" +
            std::string(method) + ":terminated'");
        EXPECT_EQ(killed, "1\n");
        EXPECT_EQ(test::get_within(lost, 10s), errc::session_expired);
        EXPECT_FALSE(holder.is_held());
        EXPECT_TRUE(next.try_lock_for(10s)) << "the server did not free the lock with the connection";
        EXPECT_GT(next.fencing_token(), holder.fencing_token());
        next.unlock();
        // The holder's Lock reconnects for its next acquire.
        EXPECT_TRUE(holder.try_lock_for(10s));
        holder.unlock();
    }
}

// A lease held for longer than two TTLs is still held: the renewals keep it alive.
TEST(PostgresLock, LeaseIsRenewedWhileHeld) {
    testing::PostgresServer server;
    PostgresOptions o;
    o.lease_ttl = 2s;
    PostgresLeaseLockService a(server.connect_string(), o), b(server.connect_string(), o);
    Lock holder = a.make_lock("renewed");
    Lock other = b.make_lock("renewed");
    holder.lock();
    auto lost = holder.async_wait_lost(boost::asio::use_future);
    EXPECT_FALSE(other.try_lock_for(5s)) << "the lease expired while held";  // 2.5 TTLs
    EXPECT_TRUE(holder.is_held());
    EXPECT_EQ(lost.wait_for(0s), std::future_status::timeout);
    EXPECT_EQ(server.psql("SELECT count(*) FROM zklock_leases WHERE name = 'renewed' AND expires_at > now()"), "1\n");
    holder.unlock();
    EXPECT_FALSE(test::get_within(lost));  // {}: released, not lost
    EXPECT_TRUE(other.try_lock_for(5s));
    other.unlock();
}

// The optimistic lock's version is its fencing token: one more per grant. A
// holder whose row was taken over before it knew (its expiry passed, another
// client's compare-and-set moved the version) releases without touching the
// new owner's row: the release names the owner and version it holds.
TEST(PostgresLock, TheVersionIsTheTokenAndAStaleHoldersReleaseLeavesTheNewOwnerAlone) {
    testing::PostgresServer server;
    PostgresOptions o;
    o.lease_ttl = 30s;
    o.renew_interval = 25s;  // no renewal between the takeover and the release below
    PostgresVersionLockService a(server.connect_string(), o), b(server.connect_string(), o);
    Lock first = a.make_lock("versioned");
    Lock second = b.make_lock("versioned");
    first.lock();
    const auto token = first.fencing_token();
    EXPECT_EQ(server.psql("SELECT version FROM zklock_versions WHERE name = 'versioned'"), std::to_string(token) + "\n");
    first.unlock();
    second.lock();
    EXPECT_EQ(second.fencing_token(), token + 1);
    second.unlock();

    first.lock();
    EXPECT_EQ(first.fencing_token(), token + 2);
    server.psql("UPDATE zklock_versions SET owner = 'another', version = version + 1, expires_at = now() + "
                "interval '1 hour' WHERE name = 'versioned'");
    first.unlock();
    EXPECT_EQ(server.psql("SELECT owner, version FROM zklock_versions WHERE name = 'versioned'"),
              "another|" + std::to_string(token + 3) + "\n");
    EXPECT_FALSE(second.try_lock()) << "the stale holder's release freed the new owner's lock";
}

} // namespace zklock::conformance
