// The PostgreSQL services' logs (PostgresOptions::log, BackendOptions::log):
// a lock's connection made or refused, a connection lost while held and the
// lost lock reach the sink, with the backend's name as source, the server as
// host:port and never the connection string's password; the setup's
// "already exists" notices do not.
#include "log_support.hpp"
#include "support.hpp"

#include <zklock/backends.hpp>
#include <zklock/testing/postgres_server.hpp>

#include <boost/asio/use_future.hpp>

namespace zklock::test {
namespace {

constexpr const char* pg_password = "pg-log-Secret-5";

TEST(PostgresLog, ConnectionsRefusalsAndALostLockAreLoggedWithoutThePassword) {
    zklock::testing::PostgresServerOptions so;
    so.password = pg_password;
    zklock::testing::PostgresServer server(so);
    const auto where = server.host() + ":" + std::to_string(server.port());
    for (const std::string backend : {"postgres-advisory", "postgres-lease", "postgres-row"}) {
        SCOPED_TRACE(backend);
        collected_log log;
        BackendOptions o;
        o.postgres = server.connect_string() + " password=" + pg_password;
        o.ttl = 2s;
        o.log = log.sink(log_level::info);
        auto service = open_lock_service(backend, o);
        Lock first = service->make_lock("first");
        first.lock();
        first.unlock();
        Lock lock = service->make_lock("logged");  // its setup finds everything there
        lock.lock();
        EXPECT_TRUE(log.has_at(log_level::info, backend, "lock logged: connected to " + where));
        EXPECT_FALSE(log.mentions("already exists")) << "the setup's notices reached the log";

        // The server ends the holder's connection.
        auto lost = lock.async_wait_lost(boost::asio::use_future);
        server.psql("select pg_terminate_backend(pid) from pg_stat_activity where application_name like 'zklock-%:logged'");
        if (backend != "postgres-lease") {  // a lease outlives its connection: it reconnects and renews
            EXPECT_TRUE(is_lock_lost(get_within(lost, 10s)));
            EXPECT_TRUE(wait_until([&] { return log.has_at(log_level::error, backend, "lock logged lost: "); }))
                << "the loss was not logged";
        }
        EXPECT_TRUE(wait_until([&] {
            return log.has_at(log_level::warn, backend, "lock logged: connection to " + where + " lost while held");
        })) << "the lost connection was not logged";
        if (lock.is_held()) lock.unlock();

        // A refused password: a warn record that names the server, not the password.
        BackendOptions wrong = o;
        wrong.postgres = server.connect_string() + " password=pg-wrong-Guess-6";
        auto refused = open_lock_service(backend, wrong);
        Lock denied = refused->make_lock("denied");
        std::error_code ec;
        denied.lock(ec);
        EXPECT_EQ(ec, errc::auth_failed);
        EXPECT_TRUE(wait_until([&] {
            return log.has_at(log_level::warn, backend, "lock denied: cannot connect to " + where + ": authentication failed");
        }));
        for (const auto& r : log.all()) {
            EXPECT_EQ(r.source, backend);
            EXPECT_LE(r.level, log_level::info) << r.message;
        }
        EXPECT_FALSE(log.mentions(pg_password)) << "a record holds the password";
        EXPECT_FALSE(log.mentions("pg-wrong-Guess-6")) << "a record holds the refused password";
        EXPECT_FALSE(log.mentions("password=")) << "a record holds the connection string";
    }
}

} // namespace
} // namespace zklock::test
