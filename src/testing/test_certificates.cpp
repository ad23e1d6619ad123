#include "zklock/testing/test_certificates.hpp"

#include "testing/run_command.hpp"
#include "testing/zookeeper_config.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace zklock::testing {
namespace {

void run(std::vector<std::string> argv) {
    const auto what = argv.size() > 1 ? argv[0] + " " + argv[1] : argv[0];
    const auto r = detail::run_command(std::move(argv), std::chrono::seconds(60));
    if (!r.ok()) throw std::runtime_error("make_test_certificates: " + what + " failed: " + r.output);
}

bool is_ip(const std::string& name) {
    in_addr a4{};
    in6_addr a6{};
    return ::inet_pton(AF_INET, name.c_str(), &a4) == 1 || ::inet_pton(AF_INET6, name.c_str(), &a6) == 1;
}

std::string subject_alt_names(const std::vector<std::string>& names) {
    std::string out = "subjectAltName=";
    for (std::size_t i = 0; i < names.size(); ++i) out += (i ? "," : "") + std::string(is_ip(names[i]) ? "IP:" : "DNS:") + names[i];
    return out;
}

/// A key and a certificate signed by ca (ca.key) for `subject`, valid for
/// `days` (negative: expired).
void signed_certificate(const std::filesystem::path& dir, const std::string& name, const std::string& subject,
                        const std::string& extensions, int days, int serial) {
    const auto key = (dir / (name + ".key")).string();
    const auto csr = (dir / (name + ".csr")).string();
    const auto ext = dir / (name + ".ext");
    run({"openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", subject});
    std::filesystem::permissions(key, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    detail::write_text_file(ext, extensions + "\n");
    run({"openssl", "x509", "-req", "-in", csr, "-CA", (dir / "ca.crt").string(), "-CAkey", (dir / "ca.key").string(),
         "-set_serial", std::to_string(serial), "-days", std::to_string(days), "-extfile", ext.string(), "-out",
         (dir / (name + ".crt")).string()});
    std::filesystem::remove(csr);
}

}  // namespace

TestCertificates make_test_certificates(const std::filesystem::path& dir, const TestCertificateOptions& options) {
    std::filesystem::create_directories(dir);
    TestCertificates c;
    c.store_password = "zklock-test";
    const auto self_signed = [&](const std::string& name, const std::string& cn) {
        const auto key = (dir / (name + ".key")).string();
        run({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out",
             (dir / (name + ".crt")).string(), "-days", "2", "-subj", "/CN=" + cn});
        std::filesystem::permissions(key, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    };
    self_signed("ca", "zklock test CA");
    self_signed("other-ca", "zklock unrelated test CA");
    signed_certificate(dir, "server", "/CN=" + (options.server_names.empty() ? "server" : options.server_names.front()),
                       subject_alt_names(options.server_names), options.expired_server_certificate ? -1 : 2, 2);
    // The server checks a client certificate's address too unless told not
    // to: the client connects from 127.0.0.1.
    signed_certificate(dir, "client", "/CN=zklock-test-client", "subjectAltName=IP:127.0.0.1", 2, 3);
    signed_certificate(dir, "other-client", "/CN=zklock-test-other", "subjectAltName=IP:127.0.0.1", 2, 4);
    c.ca_file = dir / "ca.crt";
    c.other_ca_file = dir / "other-ca.crt";
    c.server_cert_file = dir / "server.crt";
    c.server_key_file = dir / "server.key";
    c.client_cert_file = dir / "client.crt";
    c.client_key_file = dir / "client.key";
    c.other_client_cert_file = dir / "other-client.crt";
    c.other_client_key_file = dir / "other-client.key";
    c.server_keystore = dir / "server.p12";
    c.server_truststore = dir / "trust.p12";
    run({"openssl", "pkcs12", "-export", "-in", c.server_cert_file.string(), "-inkey", c.server_key_file.string(),
         "-out", c.server_keystore.string(), "-passout", "pass:" + c.store_password, "-name", "server"});
    c.client_keystore = dir / "client.p12";
    run({"openssl", "pkcs12", "-export", "-in", c.client_cert_file.string(), "-inkey", c.client_key_file.string(),
         "-out", c.client_keystore.string(), "-passout", "pass:" + c.store_password, "-name", "client"});
    run({"keytool", "-importcert", "-noprompt", "-alias", "ca", "-file", c.ca_file.string(), "-keystore",
         c.server_truststore.string(), "-storetype", "PKCS12", "-storepass", c.store_password});
    return c;
}

}  // namespace zklock::testing
