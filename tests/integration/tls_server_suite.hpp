// A test suite against one TLS-only server of a backend's fixture (PostgreSQL,
// MariaDB): the server, its certificates and their directory, started once for
// the suite and stopped after it; and a lock tried once, for the refusals.
#pragma once

#include <zklock/lock.hpp>
#include <zklock/testing/process.hpp>
#include <zklock/testing/test_certificates.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <system_error>

namespace zklock::test {

/// Server: a fixture taking ServerOptions with `tls` and `require_tls`.
template <class Server, class ServerOptions>
class TlsServerSuite : public ::testing::Test {
protected:
    /// Starts the suite's server from `o`, with certificates made in a
    /// directory named `dir_prefix`..., accepting TLS connections only.
    static void start(const char* dir_prefix, ServerOptions o) {
        dir() = std::make_unique<testing::TempDir>(dir_prefix);
        certificates() = testing::make_test_certificates(dir()->path());
        o.tls = certificates();
        o.require_tls = true;
        server() = std::make_unique<Server>(o);
    }
    static void TearDownTestSuite() {
        server().reset();
        dir().reset();
    }
    static std::unique_ptr<Server>& server() {
        static std::unique_ptr<Server> s;
        return s;
    }
    static std::unique_ptr<testing::TempDir>& dir() {
        static std::unique_ptr<testing::TempDir> d;
        return d;
    }
    static testing::TestCertificates& certificates() {
        static testing::TestCertificates c;
        return c;
    }

    /// A lock of `service` tried once: the error (empty when acquired), its detail.
    static std::error_code try_once(LockService& service, std::string& detail) {
        Lock lock = service.make_lock("tls");
        std::error_code ec;
        const bool got = lock.try_lock(ec);
        detail = lock.failure_detail();
        if (got) lock.unlock();
        return ec;
    }
};

} // namespace zklock::test
