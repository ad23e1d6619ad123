// The MySQL-protocol lock services' decisions, SQL and addresses, without a server.
#include "backends/mysql/mysql_address.hpp"
#include "backends/mysql/mysql_statements.hpp"
#include "backends/mysql/mysql_steps.hpp"

#include <zklock/error.hpp>

#include <gtest/gtest.h>

#include <string>

namespace zklock::detail {
namespace {

using mysql_steps::after_attempt;
using mysql_steps::attempt_result;
using mysql_steps::method;
using action = mysql_steps::after_attempt_step::action;
using reason = mysql_steps::after_attempt_step::reason;
using step = mysql_steps::after_attempt_step;

attempt_result granted() { return {.granted = true}; }
attempt_result taken() { return {}; }  // no token, no error
attempt_result failed() { return {.failed = true}; }
attempt_result busy() { return {.failed = true, .busy = true}; }
attempt_result killed() { return {.failed = true, .canceled = true}; }
attempt_result broken() { return {.failed = true, .connection_lost = true}; }
attempt_result nowait_refused() { return {.failed = true, .lock_not_available = true}; }
attempt_result deadlock() { return {.failed = true, .deadlock = true}; }
attempt_result aborted(attempt_result r) {
    r.aborted = true;
    return r;
}
attempt_result no_wait(attempt_result r) {
    r.no_wait = true;
    return r;
}

constexpr method all[] = {method::lease, method::advisory, method::row, method::version};

TEST(MysqlSteps, AGrantIsKeptUnlessAnAbortCameFirst) {
    for (const auto m : all) {
        EXPECT_EQ(after_attempt(m, granted()), step{action::grant}) << int(m);
        EXPECT_EQ(after_attempt(m, aborted(granted())), (step{action::undo_grant, reason::abort})) << int(m);
    }
}

TEST(MysqlSteps, ABrokenConnectionIsDroppedAndReportsTheAbortIfOneCame) {
    for (const auto m : all) {
        EXPECT_EQ(after_attempt(m, broken()), (step{action::finish, reason::error, false, true})) << int(m);
        EXPECT_EQ(after_attempt(m, aborted(broken())), (step{action::finish, reason::abort, false, true})) << int(m);
    }
}

TEST(MysqlSteps, LeasesPollWhileTakenAndStopOnErrorsOrAborts) {
    for (const auto m : {method::lease, method::version}) {
        EXPECT_EQ(after_attempt(m, busy()), step{action::wait_for_release}) << int(m);
        EXPECT_EQ(after_attempt(m, taken()), step{action::wait_for_release}) << int(m);
        EXPECT_EQ(after_attempt(m, deadlock()), step{action::wait_for_release}) << int(m);
        EXPECT_EQ(after_attempt(m, no_wait(busy())), (step{action::finish, reason::not_acquired})) << int(m);
        EXPECT_EQ(after_attempt(m, aborted(busy())), (step{action::finish, reason::abort})) << int(m);
        EXPECT_EQ(after_attempt(m, failed()), (step{action::finish, reason::error})) << int(m);
    }
    attempt_result gone = taken();
    gone.row_missing = true;
    EXPECT_EQ(after_attempt(method::version, gone), step{action::retry_new_row});
}

TEST(MysqlSteps, GetLockEndsOnKillOrTryAndWaitsAgainAfterItsOwnTimeout) {
    EXPECT_EQ(after_attempt(method::advisory, aborted(killed())), (step{action::finish, reason::abort}));
    EXPECT_EQ(after_attempt(method::advisory, aborted(taken())), (step{action::finish, reason::abort}));
    EXPECT_EQ(after_attempt(method::advisory, no_wait(taken())), (step{action::finish, reason::not_acquired}));
    EXPECT_EQ(after_attempt(method::advisory, taken()), step{action::retry});
    EXPECT_EQ(after_attempt(method::advisory, killed()), (step{action::finish, reason::error}));  // not our kill
}

TEST(MysqlSteps, RowLocksRollBackEveryAttemptThatDidNotGrant) {
    EXPECT_EQ(after_attempt(method::row, taken()), (step{action::retry_new_row, reason::not_acquired, true}));
    EXPECT_EQ(after_attempt(method::row, aborted(killed())), (step{action::finish, reason::abort, true}));
    EXPECT_EQ(after_attempt(method::row, no_wait(nowait_refused())), (step{action::finish, reason::not_acquired, true}));
    EXPECT_EQ(after_attempt(method::row, nowait_refused()), (step{action::retry, reason::not_acquired, true}));
    EXPECT_EQ(after_attempt(method::row, deadlock()), (step{action::retry, reason::not_acquired, true}));
    EXPECT_EQ(after_attempt(method::row, failed()), (step{action::finish, reason::error, true}));
}

TEST(MysqlSteps, VersionReads) {
    auto r = mysql_steps::read_version("41", "1");
    EXPECT_TRUE(r.row_found && r.free);
    EXPECT_EQ(r.version, 41);
    EXPECT_FALSE(mysql_steps::read_version("41", "0").free);
    EXPECT_FALSE(mysql_steps::read_version("41", std::nullopt).free);
    EXPECT_FALSE(mysql_steps::read_version(std::nullopt, "1").row_found);
    EXPECT_FALSE(mysql_steps::read_version("4x", "1").row_found);
    EXPECT_TRUE(mysql_steps::waits_on_server(method::advisory) && mysql_steps::waits_on_server(method::row));
    EXPECT_FALSE(mysql_steps::waits_on_server(method::lease) || mysql_steps::waits_on_server(method::version));
}

TEST(MysqlSteps, ServerErrorsMapToZklockErrors) {
    EXPECT_EQ(mysql_steps::error_from_mysql(1045), errc::auth_failed);
    EXPECT_EQ(mysql_steps::error_from_mysql(1142), errc::no_auth);
    EXPECT_EQ(mysql_steps::error_from_mysql(1146), errc::no_node);
    EXPECT_EQ(mysql_steps::error_from_mysql(1054), errc::invalid_argument);
    EXPECT_EQ(mysql_steps::error_from_mysql(2013), errc::connection_loss);
    const auto dup = mysql_steps::error_from_mysql(1062);
    EXPECT_EQ(dup.category().name(), std::string("zklock.mysql"));
    EXPECT_EQ(dup.value(), 1062);
    EXPECT_EQ(dup.message(), "MySQL error 1062");
}

// The recipes as their users write them.
TEST(MysqlStatements, TheRecipesReadAsWritten) {
    const std::string name = "orders.7", owner = "0123abcd";
    mysql_sql::lock_args a{name, owner, std::chrono::milliseconds(2500), false, 41};
    EXPECT_EQ(mysql_sql::attempt(method::advisory, a),
              "SELECT IF(GET_LOCK('zklock:orders.7', 31536000) = 1, NEXTVAL(zklock_fence), NULL)");
    EXPECT_EQ(mysql_sql::release(method::advisory, a), "SELECT RELEASE_LOCK('zklock:orders.7')");
    const auto lease = mysql_sql::attempt(method::lease, a);
    EXPECT_EQ(lease.find("DELETE FROM zklock_leases WHERE name = 'orders.7' AND expires_at < NOW(6); INSERT INTO "), 0u)
        << lease;
    EXPECT_NE(lease.find("NOW(6) + INTERVAL 2500000 MICROSECOND"), std::string::npos) << lease;
    EXPECT_EQ(mysql_sql::release(method::lease, a), "DELETE FROM zklock_leases WHERE name = 'orders.7' AND owner = '0123abcd'");
    EXPECT_EQ(mysql_sql::attempt(method::row, a).find("START TRANSACTION; SELECT fence FROM zklock_rows WHERE name = "
                                                      "'orders.7' FOR UPDATE;"),
              0u);
    a.no_wait = true;
    EXPECT_NE(mysql_sql::attempt(method::row, a).find("FOR UPDATE NOWAIT;"), std::string::npos);
    EXPECT_NE(mysql_sql::attempt(method::advisory, a).find("GET_LOCK('zklock:orders.7', 0)"), std::string::npos);
    EXPECT_EQ(mysql_sql::release(method::row, a), "COMMIT");
    EXPECT_EQ(mysql_sql::attempt(method::version, a),
              "SELECT version, owner IS NULL OR expires_at < NOW(6) FROM zklock_versions WHERE name = 'orders.7'");
    EXPECT_EQ(mysql_sql::version_take(a),
              "UPDATE zklock_versions SET owner = '0123abcd', version = version + 1, expires_at = NOW(6) + INTERVAL "
              "2500000 MICROSECOND WHERE name = 'orders.7' AND (owner IS NULL OR expires_at < NOW(6)) AND version = 41");
    EXPECT_EQ(mysql_sql::release(method::version, a),
              "UPDATE zklock_versions SET owner = NULL, expires_at = NULL WHERE name = 'orders.7' AND owner = "
              "'0123abcd' AND version = 41");
    EXPECT_EQ(mysql_sql::literal("it's a \\ test"), "'it\\'s a \\\\ test'");
    const std::string long_name(80, 'x');
    const auto key = mysql_sql::advisory_key(long_name);
    EXPECT_LE(key.size(), 64u);
    EXPECT_EQ(key.rfind("zklock#", 0), 0u);
    EXPECT_EQ(key, mysql_sql::advisory_key(long_name));
    for (const auto m : {method::lease, method::row, method::version}) {
        EXPECT_NE(mysql_sql::create(m).find("PRIMARY KEY"), std::string::npos) << int(m);
        EXPECT_NE(mysql_sql::verify(m).find("COLUMN_NAME) = 'name'"), std::string::npos) << int(m);
        EXPECT_EQ(mysql_sql::objects_needed(m), "2");
    }
    EXPECT_EQ(mysql_sql::objects_needed(method::advisory), "1");
}

TEST(MysqlAddress, UrlsAndPairsAreReadAndBadOnesRefusedWithoutThePassword) {
    std::error_code ec;
    std::string why;
    auto a = mysql::parse_mysql_address("mysql://al%40ice:p%3Ass@db.example:3307/locks", ec, &why);
    ASSERT_FALSE(ec) << why;
    EXPECT_EQ(a.user, "al@ice");
    EXPECT_EQ(a.password, "p:ss");
    EXPECT_EQ(a.host, "db.example");
    EXPECT_EQ(a.port, 3307);
    EXPECT_EQ(a.database, "locks");
    EXPECT_EQ(a.endpoint(), "db.example:3307");
    a = mysql::parse_mysql_address("host=10.0.0.1 port=3310 user=u password=secret database=d", ec, &why);
    ASSERT_FALSE(ec) << why;
    EXPECT_EQ(a.host, "10.0.0.1");
    EXPECT_EQ(a.port, 3310);
    EXPECT_EQ(a.password, "secret");
    EXPECT_EQ(a.database, "d");
    a = mysql::parse_mysql_address("127.0.0.1", ec, &why);
    ASSERT_FALSE(ec) << why;
    EXPECT_EQ(a.port, 3306);
    EXPECT_EQ(a.database, "zklock");
    a = mysql::resolve_mysql_address("mysql://127.0.0.1:1/x", "bob", "pw", ec, &why);
    EXPECT_EQ(a.user, "bob");
    EXPECT_EQ(a.password, "pw");
    for (const char* bad : {"mysql://u:topsecret@h:99999/x", "mysql://u:topsecret@:3306/x", "postgres://u:topsecret@h/x",
                            "host=h bogus=topsecret", "mysql://u:top%zzsecret@h/x",
                            "host=h password=my topsecret user=u"}) {  // a blank: the rest looked like a key
        why.clear();
        (void)mysql::parse_mysql_address(bad, ec, &why);
        EXPECT_EQ(ec, errc::invalid_argument) << bad;
        EXPECT_FALSE(why.empty()) << bad;
        EXPECT_EQ(why.find("topsecret"), std::string::npos) << why;
    }
}

TEST(MysqlAddress, TlsKeysInBothFormsAndBadOnesRefused) {
    std::error_code ec;
    std::string why;
    auto a = mysql::parse_mysql_address("mysql://u@h/db?ssl_ca=%2Fetc%2Fca.pem&ssl_cert=/c.pem&ssl_key=/k.pem", ec, &why);
    ASSERT_FALSE(ec) << why;
    EXPECT_EQ(a.database, "db");
    EXPECT_EQ(a.ssl_ca, "/etc/ca.pem");
    EXPECT_EQ(a.ssl_cert, "/c.pem");
    EXPECT_EQ(a.ssl_key, "/k.pem");
    EXPECT_EQ(a.tls, mysql::tls_mode::verify_identity);  // a file without a mode: every check
    a = mysql::parse_mysql_address("mysql://u:pa?ss@h?ssl_mode=REQUIRED", ec, &why);  // a '?' in the password
    ASSERT_FALSE(ec) << why;
    EXPECT_EQ(a.password, "pa?ss");
    EXPECT_EQ(a.host, "h");
    EXPECT_EQ(a.tls, mysql::tls_mode::required);
    a = mysql::parse_mysql_address("host=h ssl_mode=verify_ca ssl_ca=/ca.pem", ec, &why);
    ASSERT_FALSE(ec) << why;
    EXPECT_EQ(a.tls, mysql::tls_mode::verify_ca);
    a = mysql::parse_mysql_address("host=h", ec, &why);
    EXPECT_EQ(a.tls, mysql::tls_mode::disabled);
    for (const char* bad : {"host=h ssl_mode=sometimes", "host=h ssl_mode=verify_ca", "host=h ssl_mode=disabled ssl_ca=/x",
                            "mysql://h/db?ssl_mode=bogus", "mysql://h/db?tls=1", "mysql://h/db?ssl_ca"}) {
        why.clear();
        (void)mysql::parse_mysql_address(bad, ec, &why);
        EXPECT_EQ(ec, errc::invalid_argument) << bad;
        EXPECT_FALSE(why.empty()) << bad;
    }
}

TEST(MysqlSteps, TlsConnectFailuresHaveTheirOwnCodes) {
    using mysql_steps::error_from_connect;
    EXPECT_EQ(error_from_connect(2026, "TLS/SSL error: Validation of SSL server certificate failed"),
              errc::tls_wrong_host);
    EXPECT_EQ(error_from_connect(2026, "TLS/SSL error: self-signed certificate in certificate chain"),
              errc::tls_untrusted_server);
    EXPECT_EQ(error_from_connect(2026, "TLS/SSL error: certificate has expired"), errc::tls_certificate_expired);
    EXPECT_EQ(error_from_connect(2026, "SSL connection error: SSL is required, but the server does not support it"),
              errc::tls_handshake_failed);
    EXPECT_EQ(error_from_connect(3159, "Connections using insecure transport are prohibited"), errc::tls_required);
    EXPECT_EQ(error_from_connect(1045, "Access denied"), errc::auth_failed);
}

} // namespace
} // namespace zklock::detail
