// The etcd backend over TLS (EtcdOptions::tls): a lock through a real etcd
// that serves its clients over TLS only and asks each for a certificate of
// its CA (--client-cert-auth), and each way a client is refused reported as
// its own error at once, never as a hang (a hang would end in
// operation_timeout). One server for the suite, certificates made at its
// start (EtcdServerOptions::tls).
#include "support.hpp"

#include <zklock/error.hpp>
#include <zklock/etcd/etcd_lock_service.hpp>
#include <zklock/lock.hpp>
#include <zklock/testing/etcd_server.hpp>
#include <zklock/testing/process.hpp>
#include <zklock/tls_options.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace zklock::test {
namespace {

class EtcdTlsTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        testing::EtcdServerOptions so;
        so.tls = true;
        so.client_cert_auth = true;
        server_ = new testing::EtcdServer(so);
    }
    static void TearDownTestSuite() {
        delete server_;
        server_ = nullptr;
    }
    /// The CA, a client certificate and its key of the server's CA.
    static EtcdOptions options() {
        const auto& c = server_->certificates();
        EtcdOptions o;
        o.ttl = 2s;
        o.tls.ca_file = c.ca_file.string();
        o.tls.cert_file = c.client_cert_file.string();
        o.tls.key_file = c.client_key_file.string();
        return o;
    }
    /// The code of one try_lock through a service with `o` at `endpoint`.
    static std::error_code try_lock_code(const std::string& endpoint, EtcdOptions o) {
        EtcdLockService service(endpoint, std::move(o));
        Lock lock = service.make_lock("refused");
        std::error_code ec;
        EXPECT_FALSE(lock.try_lock(ec));
        return ec;
    }
    static testing::EtcdServer* server_;
};

testing::EtcdServer* EtcdTlsTest::server_ = nullptr;

// https:// with the CA and a client certificate: the lock is held, its key
// is on the server with the fencing token as its create revision, and the
// release deletes it.
TEST_F(EtcdTlsTest, ALockIsHeldOverTlsWithAClientCertificate) {
    EtcdLockService service(server_->endpoint(), options());
    Lock lock = service.make_lock("tls");
    ASSERT_TRUE(lock.try_lock_for(30s)) << lock.failure_detail();
    const auto keys = server_->keys(EtcdLockService::prefix_for(options().key_prefix, "tls"));
    ASSERT_EQ(keys.size(), 1u);
    EXPECT_EQ(keys.front().create_revision, lock.fencing_token());
    lock.unlock();
    EXPECT_TRUE(wait_until([&] { return server_->keys(EtcdLockService::prefix_for(options().key_prefix, "tls")).empty(); }));
}

// The TLS options alone (host:port, no scheme) select TLS too.
TEST_F(EtcdTlsTest, TlsOptionsSelectTlsWithoutAScheme) {
    EtcdLockService service(server_->connect_string(), options());
    Lock lock = service.make_lock("tls-no-scheme");
    ASSERT_TRUE(lock.try_lock_for(30s)) << lock.failure_detail();
    lock.unlock();
}

TEST_F(EtcdTlsTest, APlainClientAtTheTlsPortIsToldTlsIsRequired) {
    EtcdOptions plain;
    plain.ttl = 2s;
    const auto ec = try_lock_code("http://" + server_->connect_string(), plain);
    EXPECT_EQ(ec, errc::tls_required) << ec.message();
}

TEST_F(EtcdTlsTest, AServerCertificateOfAnotherCaIsUntrusted) {
    auto o = options();
    o.tls.ca_file = server_->certificates().other_ca_file.string();
    const auto ec = try_lock_code(server_->endpoint(), o);
    EXPECT_EQ(ec, errc::tls_untrusted_server) << ec.message();
}

// --client-cert-auth: a client that trusts the server but brings no
// certificate is refused in the handshake.
TEST_F(EtcdTlsTest, AClientWithoutACertificateIsRefused) {
    auto o = options();
    o.tls.cert_file.clear();
    o.tls.key_file.clear();
    const auto ec = try_lock_code(server_->endpoint(), o);
    EXPECT_EQ(ec, errc::tls_handshake_failed) << ec.message();
}

// `insecure` checks no chain (the CA given is not the server's); the
// client certificate still goes.
TEST_F(EtcdTlsTest, InsecureAcceptsAnUntrustedServer) {
    auto o = options();
    o.tls.ca_file = server_->certificates().other_ca_file.string();
    o.tls.insecure = true;
    EtcdLockService service(server_->endpoint(), o);
    Lock lock = service.make_lock("tls-insecure");
    ASSERT_TRUE(lock.try_lock_for(30s)) << lock.failure_detail();
    lock.unlock();
}

// A server certificate that names neither 127.0.0.1 nor localhost (a
// second server's) is refused as the wrong host; the name is all that is
// wrong: without the host check (verify_host = false) the lock is held.
TEST_F(EtcdTlsTest, ACertificateForAnotherHostIsRefusedUnlessTheHostIsNotChecked) {
    testing::EtcdServerOptions so;
    so.tls = true;
    so.tls_certificates.server_names = {"etcd.example.invalid"};
    testing::EtcdServer other(so);
    EtcdOptions o;
    o.ttl = 2s;
    o.tls.ca_file = other.certificates().ca_file.string();
    const auto ec = try_lock_code(other.endpoint(), o);
    EXPECT_EQ(ec, errc::tls_wrong_host) << ec.message();
    o.tls.verify_host = false;
    EtcdLockService service(other.endpoint(), o);
    Lock lock = service.make_lock("tls-any-host");
    ASSERT_TRUE(lock.try_lock_for(30s)) << lock.failure_detail();
    lock.unlock();
}

// Refused at construction, before any connection: a key file group or
// others may read (its contents never in the message), a key without its
// certificate, and http:// with TLS options.
TEST_F(EtcdTlsTest, BadTlsOptionsAreRefusedAtConstruction) {
    const auto code_of = [](const std::string& endpoint, const EtcdOptions& o) {
        try {
            EtcdLockService service(endpoint, o);
        } catch (const zklock::error& e) {
            return std::make_pair(e.code(), std::string(e.what()));
        }
        return std::make_pair(std::error_code(), std::string());
    };
    testing::TempDir dir("zklock-etcd-tls-");
    const auto shared_key = dir.path() / "client.key";
    std::filesystem::copy_file(server_->certificates().client_key_file, shared_key);
    std::filesystem::permissions(shared_key, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
                                                 std::filesystem::perms::group_read | std::filesystem::perms::others_read);
    auto o = options();
    o.tls.key_file = shared_key.string();
    auto [ec, what] = code_of(server_->endpoint(), o);
    EXPECT_EQ(ec, errc::invalid_argument) << what;
    EXPECT_NE(what.find("chmod 600"), std::string::npos) << what;
    EXPECT_EQ(what.find("PRIVATE KEY"), std::string::npos) << what;
    o = options();
    o.tls.cert_file.clear();
    std::tie(ec, what) = code_of(server_->endpoint(), o);
    EXPECT_EQ(ec, errc::invalid_argument) << what;
    std::tie(ec, what) = code_of("http://" + server_->connect_string(), options());
    EXPECT_EQ(ec, errc::invalid_argument) << what;
    EXPECT_NE(what.find("http://"), std::string::npos) << what;
}

} // namespace
} // namespace zklock::test

#ifdef ZKLOCK_CLI_PATH
#include "test_cli_support.hpp"

namespace zklock::test {
namespace {

// `zklock bench --backend etcd --etcd https://...` hands --tls-* to etcd:
// the row is measured over TLS, and so is `etcdctl lock` beside it
// (--baselines); without the client certificate the server
// refuses it (exit 80, the handshake); TLS options with only throwaway
// servers, which speak plain, are refused (64).
TEST_F(EtcdTlsTest, BenchPassesTlsOptionsToEtcd) {
    cli::Cli z;
    const auto& c = server_->certificates();
    const auto bench = [&](std::vector<std::string> more, const std::string& name) {
        std::vector<std::string> args{"bench", "--backend", "etcd", "--scenario", "uncontended", "--ops", "20",
                                      "--warmup", "0", "--tls-ca", c.ca_file.string()};
        args.insert(args.end(), more.begin(), more.end());
        auto p = z.start(args, name);
        return cli::exit_code(p, 240s);  // the first --baselines builds the Go Mutex harness (go build)
    };
    const std::vector<std::string> at{"--etcd", server_->endpoint()};
    auto with_cert = at;
    with_cert.insert(with_cert.end(), {"--tls-cert", c.client_cert_file.string(), "--tls-key", c.client_key_file.string()});
    with_cert.emplace_back("--baselines");  // etcdctl lock, given the same files
    EXPECT_EQ(bench(with_cert, "held"), 0) << z.output("held");
    EXPECT_TRUE(cli::contains(z.output("held"), "uncontended  etcd")) << z.output("held");
    EXPECT_TRUE(cli::contains(z.output("held"), "baseline etcdctl lock beside etcd")) << z.output("held");
    EXPECT_TRUE(cli::contains(z.output("held"), "baseline etcd Go Mutex beside etcd")) << z.output("held");
    EXPECT_EQ(bench(at, "no-cert"), 80) << z.output("no-cert");
    EXPECT_EQ(bench({}, "throwaway"), 64) << z.output("throwaway");
    EXPECT_TRUE(cli::contains(z.output("throwaway"), "throwaway servers speak plain")) << z.output("throwaway");
}

} // namespace
} // namespace zklock::test
#endif
