// The TLS leg (tls_leg.hpp): accept on loopback, connect to the server, TLS
// handshake with its checks, then bytes both ways, one buffer per direction.
#include "session/tls_leg.hpp"

#include <zklock/error.hpp>

#include "support/endpoint_text.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <list>
#include <string>
#include <utility>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace zklock::detail {
namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = asio::ip::tcp;

std::optional<connect_parts> split_connect(std::string_view connect) {
    connect_parts out;
    const auto slash = connect.find('/');
    if (slash != std::string_view::npos) out.chroot = std::string(connect.substr(slash));
    std::string_view hosts = connect.substr(0, slash);
    while (!hosts.empty()) {
        const auto comma = hosts.find(',');
        auto item = hosts.substr(0, comma);
        hosts = comma == std::string_view::npos ? std::string_view() : hosts.substr(comma + 1);
        const auto colon = item.rfind(':');
        if (colon == std::string_view::npos || colon + 1 == item.size()) return std::nullopt;
        auto host = item.substr(0, colon);
        if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
        if (host.empty()) return std::nullopt;
        out.servers.push_back({std::string(host), std::string(item.substr(colon + 1))});
    }
    if (out.servers.empty()) return std::nullopt;
    return out;
}

std::error_code tls_verify_failure(long verify_result) noexcept {
    switch (verify_result) {
    case X509_V_OK: return {};
    case X509_V_ERR_CERT_HAS_EXPIRED:
    case X509_V_ERR_CERT_NOT_YET_VALID: return make_error_code(errc::tls_certificate_expired);
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH: return make_error_code(errc::tls_wrong_host);
    default: return make_error_code(errc::tls_untrusted_server);
    }
}

namespace {

using socket_type = asio::basic_stream_socket<tcp, tls_legs::strand_type>;
using acceptor_type = asio::basic_socket_acceptor<tcp, tls_legs::strand_type>;

bool numeric_host(const std::string& host) {
    in6_addr a6{};
    in_addr a4{};
    return ::inet_pton(AF_INET, host.c_str(), &a4) == 1 || ::inet_pton(AF_INET6, host.c_str(), &a6) == 1;
}

} // namespace

class tls_connection;

struct tls_legs::state {
    struct leg {
        server_address server;
        std::string loopback;  // "127.0.0.1:PORT"
        acceptor_type acceptor;
    };
    strand_type strand;
    ssl::context context{ssl::context::tls_client};
    bool verify = true;
    bool verify_host = true;
    hooks h;
    bool closed = false;
    std::vector<leg> legs;
    std::list<std::weak_ptr<tls_connection>> connections;

    explicit state(const strand_type& s) : strand(s) {}
    void accept(std::size_t index, std::shared_ptr<state> self);
};

/// One connection of the C client, forwarded to its server.
class tls_connection : public std::enable_shared_from_this<tls_connection> {
public:
    tls_connection(std::shared_ptr<tls_legs::state> st, std::size_t leg, int fd)
        : st_(std::move(st)), leg_(leg), client_(st_->strand), server_(socket_type(st_->strand), st_->context) {
        boost::system::error_code ec;
        client_.assign(tcp::v4(), fd, ec);
        if (ec) ::close(fd);
        client_.set_option(tcp::no_delay(true), ec);
    }

    void start() {
        read_client();
        const auto& server = st_->legs[leg_].server;
        boost::system::error_code ec;
        // Resolved at each connection, as the C client resolves its servers
        // (a name may move); a numeric host costs no lookup.
        tcp::resolver resolver(st_->strand);
        auto found = resolver.resolve(server.host, server.port, ec);
        if (ec) return close();
        endpoints_.assign(found.begin(), found.end());
        connect_next();
    }

    /// Sends the server a closeSession, as zookeeper_close would, which a
    /// closing Session's C client cannot send through this leg: the leg runs
    /// on the thread zookeeper_close blocks. Only between two of the C
    /// client's requests (never inside one), then closes.
    void close_session() noexcept {
        if (ready_ && !closed_ && up_bytes_ == 0 && frame_left_ == 0 && length_have_ == 0) {
            // Length 8, then RequestHeader {xid, type ZOO_CLOSE_OP (-11)}, big-endian.
            const std::array<unsigned char, 12> packet{0, 0, 0, 8, 0x7f, 0xff, 0xff, 0xf0, 0xff, 0xff, 0xff, 0xf5};
            boost::system::error_code ec;
            asio::write(server_, asio::buffer(packet), ec);
        }
        close();
    }

    void close() noexcept {
        if (closed_) return;
        closed_ = true;
        boost::system::error_code ignored;
        client_.close(ignored);
        server_.lowest_layer().close(ignored);
    }

private:
    void read_client() {
        client_.async_read_some(asio::buffer(up_), [self = shared_from_this()](boost::system::error_code ec, std::size_t n) {
            if (ec || self->closed_) return self->close();
            self->up_bytes_ = n;
            self->follow_frames(n);
            if (self->ready_) self->write_server();
        });
    }

    /// Follows the C client's framing (a 4-byte big-endian length, then that
    /// many bytes) over `n` bytes just read, so close_session() knows whether
    /// the stream is between two requests.
    void follow_frames(std::size_t n) {
        std::size_t at = 0;
        while (at < n) {
            if (frame_left_ > 0) {
                const auto take = std::min<std::size_t>(frame_left_, n - at);
                frame_left_ -= static_cast<std::uint32_t>(take);
                at += take;
                continue;
            }
            length_ = (length_ << 8) | static_cast<unsigned char>(up_[at++]);
            if (++length_have_ == 4) {
                frame_left_ = length_;
                length_ = 0;
                length_have_ = 0;
            }
        }
    }

    void write_server() {
        asio::async_write(server_, asio::buffer(up_.data(), up_bytes_),
                          [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
                              if (ec || self->closed_) return self->close();
                              self->up_bytes_ = 0;
                              self->read_client();
                          });
    }

    void connect_next() {
        if (closed_) return;
        if (next_endpoint_ == endpoints_.size()) {
            // Every address refused: nothing listens there, as the C client would say.
            if (refused_ == endpoints_.size() && !st_->closed && st_->h.refused) st_->h.refused(st_->legs[leg_].loopback);
            return close();
        }
        const auto endpoint = endpoints_[next_endpoint_++];
        auto& socket = server_.next_layer();
        boost::system::error_code ec;
        if (socket.is_open()) socket.close(ec);
        // Opened close-on-exec: Asio's own open() would not be.
        const int fd = ::socket(endpoint.protocol().family(), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) return close();
        socket.assign(endpoint.protocol(), fd, ec);
        if (ec) {
            ::close(fd);
            return close();
        }
        socket.async_connect(endpoint, [self = shared_from_this()](boost::system::error_code ec) {
            if (self->closed_) return;
            if (ec) {
                if (ec == asio::error::connection_refused) ++self->refused_;
                return self->connect_next();
            }
            self->handshake();
        });
    }

    void handshake() {
        boost::system::error_code ec;
        server_.next_layer().set_option(tcp::no_delay(true), ec);
        const auto& host = st_->legs[leg_].server.host;
        SSL* ssl = server_.native_handle();
        const bool numeric = numeric_host(host);
        if (!numeric) SSL_set_tlsext_host_name(ssl, host.c_str());
        if (st_->verify && st_->verify_host) {
            if (numeric) X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str());
            else SSL_set1_host(ssl, host.c_str());
        }
        server_.async_handshake(ssl::stream_base::client, [self = shared_from_this()](boost::system::error_code ec) {
            if (self->closed_) return;
            if (ec) {
                const long verify = SSL_get_verify_result(self->server_.native_handle());
                auto code = self->st_->verify ? tls_verify_failure(verify) : std::error_code();
                std::string detail = code ? X509_verify_cert_error_string(verify) : ec.message();
                if (!code) code = make_error_code(errc::tls_handshake_failed);
                self->fail(code, detail);
                return;
            }
            self->ready_ = true;
            if (self->up_bytes_ > 0) self->write_server();
            self->read_server();
        });
    }

    void read_server() {
        server_.async_read_some(asio::buffer(down_), [self = shared_from_this()](boost::system::error_code ec, std::size_t n) {
            if (self->closed_) return;
            if (ec) {
                // Under TLS 1.3 the server checks our certificate after our
                // handshake completed: its refusal is the first thing it sends.
                if (!self->heard_ && ec.category() == asio::error::get_ssl_category())
                    return self->fail(make_error_code(errc::tls_handshake_failed), ec.message());
                return self->close();
            }
            self->heard_ = true;
            asio::async_write(self->client_, asio::buffer(self->down_.data(), n),
                              [self](boost::system::error_code ec, std::size_t) {
                                  if (ec || self->closed_) return self->close();
                                  self->read_server();
                              });
        });
    }

    void fail(std::error_code code, const std::string& detail) {
        // Closed before the session is told, so the C client sees the end of
        // this connection and the session's decision applies to the next one.
        close();
        if (!st_->closed && st_->h.tls_failed) st_->h.tls_failed(leg_, code, detail);
    }

    std::shared_ptr<tls_legs::state> st_;
    std::size_t leg_;
    socket_type client_;
    ssl::stream<socket_type> server_;
    std::vector<tcp::endpoint> endpoints_;
    std::size_t next_endpoint_ = 0;
    std::size_t refused_ = 0;
    bool ready_ = false;   // handshake done
    bool heard_ = false;   // the server sent something after the handshake
    bool closed_ = false;
    std::size_t up_bytes_ = 0;
    std::uint32_t frame_left_ = 0;   // bytes of the C client's current request not read yet
    std::uint32_t length_ = 0;       // its length prefix, while read
    int length_have_ = 0;            // bytes of that prefix read
    // One buffer per direction: the C client's requests, the server's replies
    // (a TLS record holds at most 16 KiB of them).
    std::array<char, 16384> up_{};
    std::array<char, 16384> down_{};
};

void tls_legs::state::accept(std::size_t index, std::shared_ptr<state> self) {
    legs[index].acceptor.async_wait(acceptor_type::wait_read, [self, index](boost::system::error_code ec) {
        if (ec || self->closed) return;
        // accept4 with SOCK_CLOEXEC: Asio's accept would leave the flag off.
        const int fd = ::accept4(self->legs[index].acceptor.native_handle(), nullptr, nullptr,
                                 SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd >= 0) {
            auto c = std::make_shared<tls_connection>(self, index, fd);
            self->connections.remove_if([](const std::weak_ptr<tls_connection>& w) { return w.expired(); });
            self->connections.push_back(c);
            c->start();
        }
        self->accept(index, self);
    });
}

namespace {

[[noreturn]] void refuse_leg(const std::string& why) { throw error(make_error_code(errc::invalid_argument), why); }

/// OpenSSL's reason for a failure to load or set something.
std::string openssl_reason(const boost::system::system_error& e) { return e.code().message(); }

} // namespace

tls_legs::tls_legs(const strand_type& strand, const TlsOptions& tls, std::string_view connect, hooks h)
    : state_(std::make_shared<state>(strand)) {
    const auto parts = split_connect(connect);
    if (!parts) refuse_leg("zklock::Session: TLS needs a connect string of host:port servers ('" + std::string(connect) + "')");
    auto& ctx = state_->context;
    state_->verify = !tls.insecure;
    state_->verify_host = tls.verify_host;
    state_->h = std::move(h);
    try {
        ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                        ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
        // An encrypted key is refused, never asked for on a terminal.
        ctx.set_password_callback([](std::size_t, ssl::context::password_purpose) { return std::string(); });
        ctx.set_verify_mode(tls.insecure ? ssl::verify_none : ssl::verify_peer);
    } catch (const boost::system::system_error& e) {
        refuse_leg("zklock::Session: TLS: " + openssl_reason(e));
    }
    const auto load = [](const std::string& what, const std::string& path, auto&& fn) {
        try {
            fn();
        } catch (const boost::system::system_error& e) {
            refuse_leg("zklock::Session: TLS " + what + " " + path + ": " + openssl_reason(e));
        }
    };
    if (!tls.insecure) {
        if (tls.ca_file.empty()) load("default trust store", "", [&] { ctx.set_default_verify_paths(); });
        else load("CA file", tls.ca_file, [&] { ctx.load_verify_file(tls.ca_file); });
    }
    if (!tls.cert_file.empty()) {
        load("certificate file", tls.cert_file, [&] { ctx.use_certificate_chain_file(tls.cert_file); });
        load("key file", tls.key_file, [&] { ctx.use_private_key_file(tls.key_file, ssl::context::pem); });
        if (SSL_CTX_check_private_key(ctx.native_handle()) != 1) {
            ERR_clear_error();
            refuse_leg("zklock::Session: TLS key file " + tls.key_file + " does not belong to certificate " + tls.cert_file);
        }
    }
    for (const auto& server : parts->servers) {
        acceptor_type acceptor(strand);
        const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) throw std::system_error(errno, std::generic_category(), "zklock::Session: TLS leg socket");
        boost::system::error_code ec;
        acceptor.assign(tcp::v4(), fd, ec);
        if (!ec) acceptor.bind(tcp::endpoint(asio::ip::address_v4::loopback(), 0), ec);
        if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
        if (ec) throw std::system_error(ec, "zklock::Session: TLS leg on 127.0.0.1");
        const auto port = acceptor.local_endpoint().port();
        auto loopback = "127.0.0.1:" + std::to_string(port);
        client_connect_ += (client_connect_.empty() ? "" : ",") + loopback;
        state_->legs.push_back({server, std::move(loopback), std::move(acceptor)});
    }
    client_connect_ += parts->chroot;
}

tls_legs::~tls_legs() { close(); }

std::size_t tls_legs::size() const noexcept { return state_->legs.size(); }

std::string tls_legs::server_text(std::size_t leg) const {
    const auto& s = state_->legs.at(leg).server;
    return endpoint_text(s.host, s.port);
}

void tls_legs::start() {
    for (std::size_t i = 0; i < state_->legs.size(); ++i) state_->accept(i, state_);
}

void tls_legs::close_sessions() noexcept {
    for (auto& w : state_->connections)
        if (auto c = w.lock()) c->close_session();
}

void tls_legs::close() noexcept {
    if (state_->closed) return;
    state_->closed = true;
    boost::system::error_code ignored;
    for (auto& leg : state_->legs) leg.acceptor.close(ignored);
    for (auto& w : state_->connections)
        if (auto c = w.lock()) c->close();
    state_->connections.clear();
}

} // namespace zklock::detail
