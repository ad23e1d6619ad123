// The Session's TLS leg (SessionOptions::tls): one loopback listener per
// server of the connect string, each connection the C client makes to it
// forwarded over TLS to that server, on the session's strand.
#pragma once

#include <zklock/tls_options.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/strand.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace zklock::detail {

/// One server of a connect string, as written there (host without brackets).
struct server_address {
    std::string host;
    std::string port;
};

/// A connect string split into its servers and its chroot ("" or "/app").
struct connect_parts {
    std::vector<server_address> servers;
    std::string chroot;
};

/// The parts of `connect` ("h1:p1,[::1]:p2/chroot"); nullopt when a server
/// has no port or an empty host.
std::optional<connect_parts> split_connect(std::string_view connect);

/// What X509_verify_cert's result `verify_result` (X509_V_ERR_*) says of the
/// server's certificate: expired, wrong host or untrusted; the empty code for
/// X509_V_OK.
std::error_code tls_verify_failure(long verify_result) noexcept;

/// The legs of one Session. Every call but the constructor on the strand.
class tls_legs {
public:
    using strand_type = boost::asio::strand<boost::asio::any_io_executor>;
    /// What the legs tell the session, on the strand.
    struct hooks {
        /// Leg `leg` reached its server but TLS failed with `code`; `detail`
        /// says how, in OpenSSL's words (never a secret).
        std::function<void(std::size_t leg, std::error_code code, const std::string& detail)> tls_failed;
        /// Every address of leg `loopback`'s server ("127.0.0.1:PORT", as the
        /// C client names it) refused the connection.
        std::function<void(const std::string& loopback)> refused;
    };

    /// Loads the certificates and listens on 127.0.0.1 (one ephemeral port per
    /// server, close-on-exec). Throws zklock::error(errc::invalid_argument)
    /// for a connect string it cannot split or a file OpenSSL cannot read.
    tls_legs(const strand_type& strand, const TlsOptions& tls, std::string_view connect, hooks h);
    ~tls_legs();
    tls_legs(const tls_legs&) = delete;
    tls_legs& operator=(const tls_legs&) = delete;

    /// The connect string for the C client: the loopback endpoints, the chroot kept.
    const std::string& client_connect() const noexcept { return client_connect_; }
    /// The servers of the connect string (one leg each).
    std::size_t size() const noexcept;
    /// The server of leg `leg`, as "host:port".
    std::string server_text(std::size_t leg) const;
    /// Starts accepting.
    void start();
    /// Before the C client's zookeeper_close, which waits for an answer no
    /// leg can forward while it blocks the strand: sends each server
    /// connection's closeSession (so the server ends the session at once and
    /// deletes its nodes) and closes it, so zookeeper_close returns at once.
    void close_sessions() noexcept;
    /// Stops accepting and closes every forwarded connection; no hook runs after.
    void close() noexcept;

    struct state;

private:
    std::shared_ptr<state> state_;
    std::string client_connect_;
};

} // namespace zklock::detail
