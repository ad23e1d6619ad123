// The PostgreSQL backends over TLS: libpq's own TLS, set by the connection
// string (sslmode, sslrootcert, sslcert, sslkey), against a real server that
// accepts TCP connections over TLS only (PostgresServerOptions::require_tls).
// Each refusal is its own error code, with libpq's words in failure_detail().
// One server for the suite (ctest PostgresTlsTest.all).
#include <zklock/error.hpp>
#include <zklock/lock.hpp>
#include <zklock/postgres/postgres_lock_service.hpp>
#include <zklock/testing/postgres_server.hpp>

#include "tls_server_suite.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <system_error>

using namespace zklock;
namespace zt = zklock::testing;

namespace {

class PostgresTlsTest : public test::TlsServerSuite<zt::PostgresServer, zt::PostgresServerOptions> {
protected:
    static void SetUpTestSuite() { start("zklock-pg-tls-", {}); }

    /// The fixture's conninfo with `tls` (libpq keywords) after it.
    static std::string conninfo(const std::string& tls) { return server()->connect_string() + " " + tls; }

    /// A lock on `info` tried once: the error (empty when acquired), its detail.
    static std::error_code try_once(const std::string& info, std::string& detail) {
        PostgresOptions o;
        o.connect_timeout = std::chrono::seconds(10);
        PostgresAdvisoryLockService service(info, o);
        return TlsServerSuite::try_once(service, detail);
    }
};

} // namespace

// The whole chain checked (CA, host name), a client certificate given: the
// lock is taken over TLS, and the server saw the client's certificate.
TEST_F(PostgresTlsTest, LockOverVerifiedTlsWithClientCertificate) {
    const auto& c = certificates();
    PostgresAdvisoryLockService service(conninfo("sslmode=verify-full sslrootcert=" + c.ca_file.string() + " sslcert=" +
                                                 c.client_cert_file.string() + " sslkey=" + c.client_key_file.string()));
    Lock lock = service.make_lock("tls");
    std::error_code ec;
    ASSERT_TRUE(lock.try_lock(ec)) << ec.message() << ": " << lock.failure_detail();
    // The holder's connection, as the server sees it: over TLS, with the client certificate.
    const auto seen = server()->psql("SELECT s.ssl, s.client_dn FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) "
                                     "WHERE a.application_name LIKE 'zklock-advisory:%'");
    EXPECT_EQ(seen, "t|/CN=zklock-test-client\n");
    lock.unlock();
}

// A client without TLS is refused by the server, and told why.
TEST_F(PostgresTlsTest, ClientWithoutTlsIsRefused) {
    std::string detail;
    const auto ec = try_once(conninfo("sslmode=disable"), detail);
    EXPECT_EQ(ec, errc::tls_required) << ec.message() << ": " << detail;
    EXPECT_NE(detail.find("no encryption"), std::string::npos) << detail;
}

// A server certificate that does not chain to the CA given is refused.
TEST_F(PostgresTlsTest, UntrustedServerIsRefused) {
    std::string detail;
    const auto ec = try_once(conninfo("sslmode=verify-ca sslrootcert=" + certificates().other_ca_file.string()), detail);
    EXPECT_EQ(ec, errc::tls_untrusted_server) << ec.message() << ": " << detail;
    EXPECT_NE(detail.find("certificate verify failed"), std::string::npos) << detail;
}

// A certificate that does not name the host connected to is refused
// (verify-full; hostaddr connects to the server under another name).
TEST_F(PostgresTlsTest, WrongHostIsRefused) {
    std::string detail;
    const auto info = "host=db.invalid hostaddr=127.0.0.1 port=" + std::to_string(server()->port()) +
                      " user=postgres dbname=postgres sslmode=verify-full sslrootcert=" + certificates().ca_file.string();
    const auto ec = try_once(info, detail);
    EXPECT_EQ(ec, errc::tls_wrong_host) << ec.message() << ": " << detail;
    EXPECT_NE(detail.find("does not match host name"), std::string::npos) << detail;
}

// An sslmode libpq does not know is bad input, said as such (not a lost connection).
TEST_F(PostgresTlsTest, AnUnknownSslmodeIsAnInvalidArgument) {
    std::string detail;
    const auto ec = try_once(conninfo("sslmode=sometimes"), detail);
    EXPECT_EQ(ec, errc::invalid_argument) << ec.message() << ": " << detail;
    EXPECT_NE(detail.find("invalid sslmode value"), std::string::npos) << detail;
}
