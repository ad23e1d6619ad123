// Real etcd servers for tests (the etcd comparison backend).
//
// Each member is an `etcd` child process (ChildProcess: own process group,
// killed by the kernel if the test process dies; a ServerProcess, whose
// kill9(), pause(), pause_for(), restart() are its faults) serving clients on
// 127.0.0.1:port() and its peers on 127.0.0.1:peer_port(), its data in a
// temp dir removed with the object. A constructor returns only once the
// member answers GET /health with "true" (a one-member cluster: at once; the
// members of an EtcdCluster: once a leader is elected), so tests never sleep
// before connecting. The probe and etcd_request() speak etcd's JSON gateway
// (HTTP/1.1 on the client port) over a plain socket: no gRPC here. A TLS
// member (EtcdServerOptions::tls) serves its clients on port() over TLS only;
// the fixture's own requests then go to a second, plain client port of its
// own (plain_port()).
//
// Requirements: etcd (the Debian `etcd-server` package). Library:
// zklock::testing_backends.
//
// Thread-safety: not thread-safe; use each object from one thread. Create it
// on a thread that outlives it (see ChildProcess).
#pragma once

#include <zklock/testing/backends_export.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zklock/testing/process.hpp"
#include "zklock/testing/server_process.hpp"
#include "zklock/testing/test_certificates.hpp"

namespace zklock::testing {

/// Options of an EtcdServer.
struct EtcdServerOptions {
    /// Client port on 127.0.0.1. Default 0: a free port chosen at start.
    std::uint16_t port = 0;
    /// Peer port on 127.0.0.1. Default 0: a free port chosen at start.
    std::uint16_t peer_port = 0;
    /// The member's name. Default "zklock".
    std::string name = "zklock";
    /// The cluster's members as etcd's --initial-cluster
    /// ("a=http://127.0.0.1:P,b=..."); empty (default): this member alone.
    std::string initial_cluster;
    /// Return from the constructor before the member serves (EtcdCluster
    /// starts every member, then waits for each). Default false.
    bool start_only = false;
    /// The etcd executable, looked up in PATH unless it contains '/'. Default "etcd".
    std::string etcd = "etcd";
    /// How long a start (constructor, restart(), wait_serving()) may take. Default 20 s.
    std::chrono::milliseconds start_timeout{20000};
    /// Extra command-line arguments appended last (e.g. {"--auth-token", "simple"}). Default: none.
    std::vector<std::string> extra_args;
    /// Non-empty: once serving, the member gets a user `root` with this
    /// password (and the root role) and authentication is enabled; the
    /// fixture's own requests then authenticate as root. Default empty: no
    /// authentication.
    std::string root_password;
    /// Serve clients on port() over TLS only (etcd's --cert-file and
    /// --key-file), with certificates made at start in the
    /// member's temp dir (certificates()). A one-member cluster only:
    /// EtcdCluster refuses it. Default false.
    bool tls = false;
    /// With `tls`: refuse every client without a certificate signed by the
    /// fixture's CA (etcd's --trusted-ca-file and --client-cert-auth; etcd
    /// asks for client certificates whenever it has a trusted CA file).
    /// Default false.
    bool client_cert_auth = false;
    /// The certificates made when `tls` is set.
    TestCertificateOptions tls_certificates;
};

/// One POST to etcd's JSON gateway at 127.0.0.1:port (`path` such as
/// "/v3/kv/range", `json` the request body with keys in base64; `token`, when
/// not empty, an auth token from "/v3/auth/authenticate") and the reply's body.
/// Throws std::system_error as memcached_command() does, and
/// std::runtime_error for a reply that is not HTTP 200 (its status line and body).
ZKLOCK_TESTING_BACKENDS_EXPORT std::string etcd_request(std::uint16_t port, const std::string& path,
                                                        const std::string& json, std::chrono::milliseconds timeout,
                                                        const std::string& token = {});

/// One key as etcd_keys() reads it.
struct EtcdKey {
    std::string key;                  ///< the whole key
    std::int64_t create_revision = 0; ///< the revision that created it (a lock's fencing token)
    std::int64_t lease = 0;           ///< its lease's id; 0: none
};

/// One etcd member.
///
/// Errors: the constructor, restart() and wait_serving() throw
/// std::runtime_error when the member does not serve within the start timeout
/// or its process exits; the message holds the exit status and the last 20
/// lines of its log. std::system_error for failures to create files or start etcd.
///
/// Destruction stops the member (SIGTERM, then SIGKILL) and removes its data.
class ZKLOCK_TESTING_BACKENDS_EXPORT EtcdServer : public ServerProcess {
public:
    /// Starts the member and waits until it serves (unless options.start_only).
    explicit EtcdServer(EtcdServerOptions options = {});
    ~EtcdServer() override;

    EtcdServer(const EtcdServer&) = delete;
    EtcdServer& operator=(const EtcdServer&) = delete;
    EtcdServer(EtcdServer&&) = delete;
    EtcdServer& operator=(EtcdServer&&) = delete;

    // port() (the client port), connect_string() ("127.0.0.1:PORT"), and the
    // faults come from ServerProcess. A restarted member keeps its data.

    /// The peer port.
    [[nodiscard]] std::uint16_t peer_port() const noexcept { return options_.peer_port; }
    /// The plain client port the fixture's own requests use: port() without
    /// EtcdServerOptions::tls, a second port of the member's with it.
    [[nodiscard]] std::uint16_t plain_port() const noexcept { return plain_port_; }
    /// "https://127.0.0.1:PORT" with EtcdServerOptions::tls, else
    /// "http://127.0.0.1:PORT": the endpoint a client connects to.
    [[nodiscard]] std::string endpoint() const;
    /// The certificates of a TLS member (its CA, its server certificate, a
    /// client certificate and key). Throws std::logic_error without
    /// EtcdServerOptions::tls.
    [[nodiscard]] const TestCertificates& certificates() const;
    /// "name=http://127.0.0.1:PEER_PORT", for --initial-cluster.
    [[nodiscard]] std::string peer_entry() const;
    /// Waits until the member serves (after start_only).
    void wait_serving();

    /// etcd_request(plain_port(), path, json, timeout).
    std::string request(const std::string& path, const std::string& json,
                        std::chrono::milliseconds timeout = std::chrono::seconds(5));
    /// The keys starting with `prefix`, by create revision.
    std::vector<EtcdKey> keys(const std::string& prefix);
    /// Revokes lease `id` (its keys are deleted); false when etcd knows no such lease.
    bool revoke(std::int64_t id);
    /// Deletes `key`; the number deleted.
    std::size_t delete_key(const std::string& key);
    /// The server's version ("3.4.23"), from GET /version.
    [[nodiscard]] std::string version();

private:
    void spawn() override;
    [[nodiscard]] bool serving(std::chrono::milliseconds timeout) override;
    void enable_auth();

    TempDir temp_dir_;
    EtcdServerOptions options_;
    std::uint16_t plain_port_ = 0;
    std::optional<TestCertificates> certificates_;
    std::string token_;  // root's, with root_password
};

/// An etcd cluster of `members` members on loopback, each an EtcdServer
/// ("m0", "m1", ...), started together; the constructor returns once every
/// member serves (a leader is elected).
class ZKLOCK_TESTING_BACKENDS_EXPORT EtcdCluster {
public:
    /// Starts `members` members with `options` (their ports chosen for each).
    /// Throws std::invalid_argument for options.tls (one member only).
    explicit EtcdCluster(std::size_t members = 3, EtcdServerOptions options = {});
    ~EtcdCluster();
    EtcdCluster(const EtcdCluster&) = delete;
    EtcdCluster& operator=(const EtcdCluster&) = delete;

    /// The members, "m0" first.
    [[nodiscard]] const std::vector<std::unique_ptr<EtcdServer>>& members() const noexcept { return members_; }
    /// Member `i` (std::out_of_range past the last).
    EtcdServer& member(std::size_t i) { return *members_.at(i); }
    /// Every member's client address, comma separated ("127.0.0.1:P,127.0.0.1:Q,...").
    [[nodiscard]] std::string connect_string() const;

private:
    std::vector<std::unique_ptr<EtcdServer>> members_;
};

}  // namespace zklock::testing
