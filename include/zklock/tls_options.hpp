// zklock::TlsOptions: TLS to the servers' secure client port
// (SessionOptions::tls), and the check of its files.
#pragma once

#include <zklock/export.hpp>

#include <string>
#include <system_error>

namespace zklock {

/// TLS between the Session and every server of its connect string, whose ports
/// are then the servers' secure client ports (`secureClientPort`). An aggregate:
/// TLS is on as soon as a file is given or `insecure` is set (enabled()).
///
/// Debian's ZooKeeper C client has no TLS, so the Session carries it: it listens
/// on one loopback port per server (127.0.0.1, an ephemeral port, close-on-exec),
/// hands the C client those endpoints (the chroot kept) and forwards each
/// connection over TLS to its server, on the Session's own executor. The C
/// client's reconnects and server rotation work as without TLS.
///
/// Failures, each its own code: errc::tls_untrusted_server (the certificate's
/// chain does not lead to `ca_file`), errc::tls_certificate_expired,
/// errc::tls_wrong_host (the certificate does not name the host of the connect
/// string), errc::tls_handshake_failed (anything else: not a TLS port, our
/// client certificate refused). When every server of the connect string failed
/// so before the session ever connected, it closes with that code (connect()
/// reports it) instead of reconnecting for ever; a session that connected once
/// keeps reconnecting (a server restarting, a certificate being replaced).
struct TlsOptions {
    /// PEM file of the CA certificates that sign the servers' certificates.
    /// Empty (with TLS on): the system's default trust store. Default: empty.
    std::string ca_file;
    /// PEM file of the client certificate (and any intermediates) presented to
    /// the servers, with key_file. Default: empty (no client certificate).
    std::string cert_file;
    /// PEM file of the client certificate's private key, unencrypted. It must be
    /// private: refused when group or others may read or write it (as ssh
    /// refuses a key). Its contents are never printed. Default: empty.
    std::string key_file;
    /// Check that the server's certificate names the host of the connect string
    /// (its DNS name, or its IP address for a numeric host). Default true.
    bool verify_host = true;
    /// Accept any server certificate: no chain, expiry or host check. For tests
    /// only: anyone between the client and the server can read and change the
    /// traffic. Default false.
    bool insecure = false;

    /// True when TLS is on: a file is given or `insecure` is set.
    [[nodiscard]] bool enabled() const noexcept {
        return !ca_file.empty() || !cert_file.empty() || !key_file.empty() || insecure;
    }
};

/// Checks `tls` before any connection: cert_file and key_file given together,
/// every file given readable, the key file a regular file that neither group
/// nor others may access. Returns errc::invalid_argument (and, when `reason`
/// is given, a sentence naming the file and what is wrong: never its contents)
/// or the empty code. A Session checks its options so at construction.
ZKLOCK_EXPORT std::error_code validate_tls(const TlsOptions& tls, std::string* reason = nullptr);

} // namespace zklock
