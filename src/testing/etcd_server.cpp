#include "zklock/testing/etcd_server.hpp"

#include "testing/posix_io.hpp"

#include <algorithm>
#include <cerrno>
#include <optional>
#include <string>
#include <vector>
#include <stdexcept>
#include <string_view>
#include <system_error>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace zklock::testing {
namespace {

using steady = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr std::string_view b64_alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64(std::string_view in) {
    std::string out;
    std::size_t i = 0;
    for (; i + 2 < in.size(); i += 3) {
        const unsigned v = (unsigned(static_cast<unsigned char>(in[i])) << 16) |
                           (unsigned(static_cast<unsigned char>(in[i + 1])) << 8) | static_cast<unsigned char>(in[i + 2]);
        for (int s = 18; s >= 0; s -= 6) out += b64_alphabet[(v >> s) & 63];
    }
    if (i < in.size()) {
        unsigned v = unsigned(static_cast<unsigned char>(in[i])) << 16;
        if (i + 1 < in.size()) v |= unsigned(static_cast<unsigned char>(in[i + 1])) << 8;
        out += b64_alphabet[(v >> 18) & 63];
        out += b64_alphabet[(v >> 12) & 63];
        out += i + 1 < in.size() ? b64_alphabet[(v >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

std::string unbase64(std::string_view in) {
    std::string out;
    unsigned v = 0;
    int bits = 0;
    for (const char c : in) {
        const auto p = b64_alphabet.find(c);
        if (p == std::string_view::npos) continue;  // '=' and anything else
        v = (v << 6) | static_cast<unsigned>(p);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((v >> bits) & 0xff);
        }
    }
    return out;
}

// The string value of "name":"..." at or after `from`, before `until`.
std::optional<std::string> field(std::string_view json, std::string_view name, std::size_t from, std::size_t until) {
    const std::string tag = "\"" + std::string(name) + "\":\"";
    const auto at = json.find(tag, from);
    if (at == std::string_view::npos || at >= until) return std::nullopt;
    const auto start = at + tag.size();
    const auto end = json.find('"', start);
    if (end == std::string_view::npos) return std::nullopt;
    return std::string(json.substr(start, end - start));
}

// "Transfer-Encoding: chunked" bodies, joined.
std::string unchunk(std::string_view body) {
    std::string out;
    while (!body.empty()) {
        const auto eol = body.find("\r\n");
        if (eol == std::string_view::npos) break;
        const auto size = std::stoul(std::string(body.substr(0, eol)), nullptr, 16);
        if (size == 0) break;
        out += body.substr(eol + 2, size);
        body.remove_prefix(std::min(body.size(), eol + 2 + size + 2));
    }
    return out;
}

std::string http(std::uint16_t port, const std::string& method, const std::string& path, const std::string& body,
                 milliseconds timeout, const std::string& token = {}) {
    const std::string what = "etcd " + method + " " + path + " to 127.0.0.1:" + std::to_string(port);
    const auto deadline = steady::now() + timeout;
    auto sock = posix_io::connect_loopback(port, deadline, what);
    std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
    if (method == "POST") req += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
    if (!token.empty()) req += "Authorization: " + token + "\r\n";
    req += "\r\n" + body;
    posix_io::send_all(sock.get(), req, deadline, what);
    std::string reply;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::recv(sock.get(), buf, sizeof buf, 0);
        if (n > 0) reply.append(buf, static_cast<std::size_t>(n));
        else if (n == 0) break;
        else if (errno == EAGAIN || errno == EWOULDBLOCK) posix_io::wait_for(sock.get(), POLLIN, deadline, what);
        else if (errno != EINTR) posix_io::throw_errno(errno, what);
    }
    const auto head_end = reply.find("\r\n\r\n");
    if (head_end == std::string::npos) posix_io::throw_errno(ECONNRESET, what + ": no complete reply");
    const std::string head = reply.substr(0, head_end);
    std::string content = reply.substr(head_end + 4);
    if (head.find("Transfer-Encoding: chunked") != std::string::npos ||
        head.find("transfer-encoding: chunked") != std::string::npos)
        content = unchunk(content);
    if (head.compare(0, 12, "HTTP/1.1 200") != 0)
        throw std::runtime_error(what + ": " + head.substr(0, head.find("\r\n")) + ": " + content);
    return content;
}

}  // namespace

std::string etcd_request(std::uint16_t port, const std::string& path, const std::string& json, milliseconds timeout,
                         const std::string& token) {
    return http(port, "POST", path, json, timeout, token);
}

EtcdServer::EtcdServer(EtcdServerOptions options)
    : ServerProcess("etcd server", options.start_timeout), temp_dir_("zklock-etcd-"), options_(std::move(options)) {
    if (options_.port == 0) options_.port = free_loopback_port();
    if (options_.peer_port == 0) {
        do options_.peer_port = free_loopback_port();
        while (options_.peer_port == options_.port);
    }
    plain_port_ = options_.port;
    if (options_.tls) {
        do plain_port_ = free_loopback_port();
        while (plain_port_ == options_.port || plain_port_ == options_.peer_port);
        certificates_ = make_test_certificates(temp_dir_.path() / "tls", options_.tls_certificates);
    } else if (options_.client_cert_auth) {
        throw std::invalid_argument("EtcdServer: client_cert_auth needs tls");
    }
    configure(options_.port, temp_dir_.path() / "etcd.log", temp_dir_.path());
    spawn();
    if (!options_.start_only) wait_serving();
}

void EtcdServer::enable_auth() {
    const auto root = "{\"name\":\"root\",\"password\":\"" + options_.root_password + "\"}";
    if (token_.empty()) {  // the first start: the data has no user yet
        request("/v3/auth/user/add", root);
        request("/v3/auth/role/add", "{\"name\":\"root\"}");
        request("/v3/auth/user/grant", "{\"user\":\"root\",\"role\":\"root\"}");
        request("/v3/auth/enable", "{}");
    }
    token_.clear();
    const auto reply = request("/v3/auth/authenticate", root);
    token_ = field(reply, "token", 0, reply.size()).value_or("");
    if (token_.empty()) throw std::runtime_error(name() + ": no auth token for root");
}

EtcdServer::~EtcdServer() {
    try {
        stop();
    } catch (...) {
    }
}

std::string EtcdServer::endpoint() const {
    return (options_.tls ? "https://127.0.0.1:" : "http://127.0.0.1:") + std::to_string(port());
}

const TestCertificates& EtcdServer::certificates() const {
    if (!certificates_) throw std::logic_error(name() + ": certificates() of a member without tls");
    return *certificates_;
}

std::string EtcdServer::peer_entry() const {
    return options_.name + "=http://127.0.0.1:" + std::to_string(options_.peer_port);
}

void EtcdServer::wait_serving() {
    wait_until_serving(steady::now() + options_.start_timeout);
    if (!options_.root_password.empty()) enable_auth();
}

void EtcdServer::spawn() {
    const auto client = endpoint();
    // A TLS member serves the fixture's own plain requests on a second port.
    const auto listen = options_.tls ? client + ",http://127.0.0.1:" + std::to_string(plain_port_) : client;
    const auto peer = "http://127.0.0.1:" + std::to_string(options_.peer_port);
    std::vector<std::string> argv{options_.etcd,
                                  "--name", options_.name,
                                  "--data-dir", (temp_dir_.path() / "data").string(),
                                  "--listen-client-urls", listen,
                                  "--advertise-client-urls", client,
                                  "--listen-peer-urls", peer,
                                  "--initial-advertise-peer-urls", peer,
                                  "--initial-cluster", options_.initial_cluster.empty() ? peer_entry() : options_.initial_cluster,
                                  "--initial-cluster-token", "zklock-" + std::to_string(options_.peer_port),
                                  "--logger", "zap", "--log-outputs", "stderr"};
    // On loopback: a leader within a fraction of a second (the defaults, 100 and 1000 ms, take a second).
    argv.insert(argv.end(), {"--heartbeat-interval", "50", "--election-timeout", "500"});
    if (certificates_) {
        argv.insert(argv.end(), {"--cert-file", certificates_->server_cert_file.string(), "--key-file",
                                 certificates_->server_key_file.string()});
        // etcd 3.4 asks every client for a certificate once it has a trusted
        // CA file, whatever --client-cert-auth says.
        if (options_.client_cert_auth)
            argv.insert(argv.end(), {"--trusted-ca-file", certificates_->ca_file.string(), "--client-cert-auth"});
    }
    argv.insert(argv.end(), options_.extra_args.begin(), options_.extra_args.end());
    ChildProcessOptions child;
    child.working_dir = temp_dir_.path();
    child.output_path = log_path();
    launch(std::move(argv), std::move(child));
}

bool EtcdServer::serving(milliseconds timeout) {
    try {
        return http(plain_port_, "GET", "/health", "", timeout).find("\"health\":\"true\"") != std::string::npos;
    } catch (const std::exception&) {
        return false;
    }
}

std::string EtcdServer::request(const std::string& path, const std::string& json, milliseconds timeout) {
    return etcd_request(plain_port_, path, json, timeout, token_);
}

std::vector<EtcdKey> EtcdServer::keys(const std::string& prefix) {
    std::string end = prefix;
    while (!end.empty() && static_cast<unsigned char>(end.back()) == 0xff) end.pop_back();
    if (!end.empty()) end.back() = static_cast<char>(end.back() + 1);
    const auto reply = request("/v3/kv/range", "{\"key\":\"" + base64(prefix) + "\",\"range_end\":\"" + base64(end) +
                                                   "\",\"sort_target\":\"CREATE\",\"sort_order\":\"ASCEND\"}");
    std::vector<EtcdKey> out;
    const auto kvs = reply.find("\"kvs\":[");
    if (kvs == std::string::npos) return out;
    for (auto at = reply.find("\"key\":\"", kvs); at != std::string::npos;) {
        const auto next = reply.find("\"key\":\"", at + 1);
        const auto until = next == std::string::npos ? reply.size() : next;
        EtcdKey k;
        k.key = unbase64(field(reply, "key", at, until).value_or(""));
        k.create_revision = std::stoll(field(reply, "create_revision", at, until).value_or("0"));
        k.lease = std::stoll(field(reply, "lease", at, until).value_or("0"));
        out.push_back(std::move(k));
        at = next;
    }
    return out;
}

bool EtcdServer::revoke(std::int64_t id) {
    try {
        request("/v3/lease/revoke", "{\"ID\":\"" + std::to_string(id) + "\"}");
        return true;
    } catch (const std::runtime_error& e) {
        if (std::string_view(e.what()).find("lease not found") != std::string_view::npos) return false;
        throw;
    }
}

std::size_t EtcdServer::delete_key(const std::string& key) {
    const auto reply = request("/v3/kv/deleterange", "{\"key\":\"" + base64(key) + "\"}");
    return std::stoul(field(reply, "deleted", 0, reply.size()).value_or("0"));
}

std::string EtcdServer::version() {
    const auto reply = http(plain_port_, "GET", "/version", "", std::chrono::seconds(5));
    return field(reply, "etcdserver", 0, reply.size()).value_or("");
}

EtcdCluster::EtcdCluster(std::size_t members, EtcdServerOptions options) {
    if (options.tls) throw std::invalid_argument("EtcdCluster: tls is for one member (EtcdServer) only");
    const auto ports = free_loopback_ports(2 * members);
    std::string initial;
    for (std::size_t i = 0; i < members; ++i) {
        if (i) initial += ',';
        initial += "m" + std::to_string(i) + "=http://127.0.0.1:" + std::to_string(ports[2 * i + 1]);
    }
    for (std::size_t i = 0; i < members; ++i) {
        auto o = options;
        o.name = "m" + std::to_string(i);
        o.port = ports[2 * i];
        o.peer_port = ports[2 * i + 1];
        o.initial_cluster = initial;
        o.start_only = true;
        members_.push_back(std::make_unique<EtcdServer>(o));
    }
    for (auto& m : members_) m->wait_serving();
}

EtcdCluster::~EtcdCluster() = default;

std::string EtcdCluster::connect_string() const {
    std::string out;
    for (const auto& m : members_) {
        if (!out.empty()) out += ',';
        out += m->connect_string();
    }
    return out;
}

}  // namespace zklock::testing
