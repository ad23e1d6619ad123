// The MySQL-protocol backends over TLS: MariaDB Connector/C's own TLS, set by
// the address (ssl_mode, ssl_ca, ssl_cert, ssl_key), against a real MariaDB
// that accepts TCP connections over TLS only (require_secure_transport=ON).
// Each refusal is its own error code, with the client's words in
// failure_detail(). One server for the suite (ctest MysqlTlsTest.all).
#include <zklock/error.hpp>
#include <zklock/lock.hpp>
#include <zklock/mysql/mysql_lock_service.hpp>
#include <zklock/testing/mariadb_server.hpp>

#include "tls_server_suite.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <system_error>

using namespace zklock;
namespace zt = zklock::testing;

namespace {

class MysqlTlsTest : public test::TlsServerSuite<zt::MariaDBServer, zt::MariaDBServerOptions> {
protected:
    static void SetUpTestSuite() {
        zt::MariaDBServerOptions o;
        o.extra_args = {"--bind-address=127.0.0.1,127.0.0.2"};  // 127.0.0.2: a name the certificate lacks
        start("zklock-mysql-tls-", o);
    }

    /// The fixture's address in the key=value form, with `tls` after it.
    static std::string address(const std::string& host, const std::string& tls) {
        return "host=" + host + " port=" + std::to_string(server()->port()) + " user=zklock database=zklock " + tls;
    }

    /// A lock on `where` tried once: the error (empty when acquired), its detail.
    static std::error_code try_once(const std::string& where, std::string& detail) {
        MysqlAdvisoryLockService service(where);
        return TlsServerSuite::try_once(service, detail);
    }
};

} // namespace

// The chain and the host name checked, a client certificate given (the URL
// form): the lock is taken while the account requires that certificate.
TEST_F(MysqlTlsTest, LockOverVerifiedTlsWithClientCertificate) {
    const auto& c = certificates();
    const auto url = "mysql://zklock@127.0.0.1:" + std::to_string(server()->port()) +
                     "/zklock?ssl_mode=verify_identity&ssl_ca=" + c.ca_file.string() +
                     "&ssl_cert=" + c.client_cert_file.string() + "&ssl_key=" + c.client_key_file.string();
    server()->query("ALTER USER 'zklock'@'127.0.0.1' REQUIRE SUBJECT '/CN=zklock-test-client'");
    struct require_none {
        ~require_none() { server()->query("ALTER USER 'zklock'@'127.0.0.1' REQUIRE NONE"); }
    } restore;
    MysqlAdvisoryLockService service(url);
    Lock lock = service.make_lock("tls");
    std::error_code ec;
    ASSERT_TRUE(lock.try_lock(ec)) << ec.message() << ": " << lock.failure_detail();
    lock.unlock();
}

// A client without TLS is refused by the server, and told that TLS may be why.
TEST_F(MysqlTlsTest, ClientWithoutTlsIsRefused) {
    std::string detail;
    const auto ec = try_once(address("127.0.0.1", ""), detail);
    EXPECT_EQ(ec, errc::auth_failed) << ec.message() << ": " << detail;
    EXPECT_NE(detail.find("require_secure_transport"), std::string::npos) << detail;
}

// A server certificate that does not chain to the CA given is refused.
TEST_F(MysqlTlsTest, UntrustedServerIsRefused) {
    std::string detail;
    const auto ec = try_once(address("127.0.0.1", "ssl_mode=verify_ca ssl_ca=" + certificates().other_ca_file.string()),
                             detail);
    EXPECT_EQ(ec, errc::tls_untrusted_server) << ec.message() << ": " << detail;
    EXPECT_NE(detail.find("TLS/SSL error"), std::string::npos) << detail;
}

// A certificate that does not name the host connected to is refused: the
// server listens on 127.0.0.2 too, which its certificate does not name.
TEST_F(MysqlTlsTest, WrongHostIsRefused) {
    std::string detail;
    const auto ec = try_once(address("127.0.0.2", "ssl_ca=" + certificates().ca_file.string()), detail);
    EXPECT_EQ(ec, errc::tls_wrong_host) << ec.message() << ": " << detail;
    EXPECT_NE(detail.find("TLS/SSL error"), std::string::npos) << detail;
}

// A client key that others may read is refused before any connection, naming the file.
TEST_F(MysqlTlsTest, AKeyOthersMayReadIsRefused) {
    const auto& c = certificates();
    const auto open_key = dir()->path() / "open-client.key";
    std::filesystem::copy_file(c.client_key_file, open_key, std::filesystem::copy_options::overwrite_existing);
    std::filesystem::permissions(open_key, std::filesystem::perms::others_read, std::filesystem::perm_options::add);
    try {
        MysqlAdvisoryLockService service(address("127.0.0.1", "ssl_ca=" + c.ca_file.string() + " ssl_cert=" +
                                                                  c.client_cert_file.string() +
                                                                  " ssl_key=" + open_key.string()));
        ADD_FAILURE() << "a key others may read was accepted";
    } catch (const zklock::error& e) {
        EXPECT_EQ(e.code(), errc::invalid_argument) << e.what();
        EXPECT_NE(std::string(e.what()).find(open_key.string()), std::string::npos) << e.what();
    }
}
