// Throwaway certificates for TLS tests: a CA, a server certificate and a
// client certificate made with openssl(1) in a directory of the caller's.
#pragma once

#include <zklock/testing/export.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace zklock::testing {

/// What make_test_certificates() makes (PEM unless said otherwise).
struct TestCertificates {
    std::filesystem::path ca_file;           ///< the CA's certificate, which signs the two below
    std::filesystem::path server_cert_file;  ///< the server's certificate
    std::filesystem::path server_key_file;   ///< its key
    std::filesystem::path client_cert_file;  ///< a client certificate (CN=zklock-test-client)
    std::filesystem::path client_key_file;   ///< its key, mode 0600
    std::filesystem::path other_client_cert_file;  ///< another client certificate of the CA (CN=zklock-test-other)
    std::filesystem::path other_client_key_file;   ///< its key, mode 0600
    std::filesystem::path other_ca_file;     ///< an unrelated CA's certificate: trusts neither of the above
    std::filesystem::path server_keystore;   ///< PKCS12: the server's key and certificate
    std::filesystem::path server_truststore; ///< PKCS12: the CA, for the server to check client certificates
    std::filesystem::path client_keystore;   ///< PKCS12: the client's key and certificate (Java clients)
    std::string store_password;              ///< of the PKCS12 stores (a test value, not a secret)
};

/// Options of make_test_certificates().
struct TestCertificateOptions {
    /// The server certificate's subjectAltName entries: host names and IP
    /// addresses. Default: localhost and 127.0.0.1.
    std::vector<std::string> server_names{"localhost", "127.0.0.1"};
    /// Make the server certificate already expired (its validity ended a day
    /// before it began). Default false.
    bool expired_server_certificate = false;
};

/// Makes a CA, a server and a client certificate in `dir` (created if
/// missing) with openssl, and the PKCS12 stores with openssl and the JDK's
/// keytool (server_truststore serves a Java client as its trust store too). Throws std::runtime_error with the tool's output when a
/// step fails.
ZKLOCK_TESTING_EXPORT TestCertificates make_test_certificates(const std::filesystem::path& dir,
                                                              const TestCertificateOptions& options = {});

}  // namespace zklock::testing
