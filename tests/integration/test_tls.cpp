// ZooKeeper over TLS (SessionOptions::tls): locks through the Session's TLS
// legs to a real server's secure client port, and every way TLS can fail
// reported as its own error, never as a hang. Real servers with throwaway
// certificates (ZooKeeperServerOptions::tls).
#include "curator_peer.hpp"
#include "descriptors.hpp"
#include "grant_support.hpp"
#include "kazoo_peer.hpp"
#include "proof_support.hpp"
#include "support.hpp"

#include <zklock/acl.hpp>
#include <zklock/mutex.hpp>
#include <zklock/testing/faults.hpp>
#include <zklock/tls_options.hpp>
#include <zklock/lock_stats.hpp>
#include <zklock/queue_lock.hpp>
#include <zklock/testing/ensemble.hpp>
#include <zklock/testing/process.hpp>
#include <zklock/testing/zookeeper_server.hpp>

#include <boost/asio/use_future.hpp>

#include <filesystem>
#include <cstdio>
#include <functional>
#include <optional>
#include <future>
#include <set>
#include <sstream>
#include <vector>

#include <fcntl.h>
#include <unistd.h>
#include <memory>
#include <string>
#include <system_error>

using namespace zklock;
using namespace zklock::test;
namespace zt = zklock::testing;

namespace {

zt::ZooKeeperServerOptions tls_server_options(zt::TestCertificateOptions certificates = {}) {
    zt::ZooKeeperServerOptions o;
    o.tick_time_ms = 100;
    // Long enough that a node deleted before its session could expire was
    // deleted by the session's close (ClosingDeletesTheNodesAtOnce).
    o.max_session_timeout_ms = 60000;
    o.tls = true;
    o.tls_certificates = std::move(certificates);
    return o;
}

/// The TLS options that `server` accepts: its CA, its client certificate.
TlsOptions tls_of(const zt::ZooKeeperServer& server) {
    const auto& c = server.certificates();
    return {c.ca_file.string(), c.client_cert_file.string(), c.client_key_file.string()};
}

/// The code connect() fails with (empty when it connects).
std::error_code connect_code(const SessionOptions& o) {
    try {
        Session s(o);
        s.connect();
    } catch (const zklock::error& e) {
        return e.code();
    }
    return {};
}

} // namespace

class TlsTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() { server() = std::make_unique<zt::ZooKeeperServer>(tls_server_options()); }
    static void TearDownTestSuite() { server().reset(); }

    static std::unique_ptr<zt::ZooKeeperServer>& server() {
        static std::unique_ptr<zt::ZooKeeperServer> s;
        return s;
    }

    void TearDown() override {
        // No lock node is left behind, as a plain session on the same server sees.
        if (checked_.empty()) return;
        SessionOptions o;
        o.connect = server()->connect_string();
        Session observer(o);
        observer.connect();
        for (const auto& p : checked_) {
            std::vector<contender> left;
            EXPECT_TRUE(wait_until([&] {
                std::error_code ec;
                left = list_contenders(observer, p, ec);
                return !ec && left.empty();
            })) << left.size() << " lock node(s) left under " << p;
        }
    }

    /// Options of a session over TLS to the suite's server. The connect
    /// deadline is long: a TLS failure must end connect() well before it.
    SessionOptions tls_options(const zt::ZooKeeperServer& s) const {
        SessionOptions o;
        o.connect = s.secure_connect_string();
        o.session_timeout = 2000ms;
        o.connect_timeout = 60s;
        o.tls = tls_of(s);
        return o;
    }
    SessionOptions tls_options() const { return tls_options(*server()); }

    std::string lock_path(const std::string& name = "lock") {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        auto p = "/zklock-tls-tests/" + std::string(info->name()) + "/" + name;
        checked_.push_back(p);
        return p;
    }

    /// A client with another certificate and one without TLS can delete none
    /// of `nodes` (full paths), add no node to `dir`, open it, or take its lock:
    /// each is refused with errc::no_auth.
    void expect_shut_out(const std::string& dir, const std::vector<std::string>& nodes) {
        auto other = tls_options();
        other.tls.cert_file = server()->certificates().other_client_cert_file.string();
        other.tls.key_file = server()->certificates().other_client_key_file.string();
        Session intruder(other);
        intruder.connect();
        SessionOptions plain;
        plain.connect = server()->connect_string();
        Session outsider(plain);
        outsider.connect();
        const auto code = [](const std::function<void()>& f) -> std::error_code {
            try {
                f();
            } catch (const zklock::error& e) {
                return e.code();
            }
            return {};
        };
        for (Session* s : {&intruder, &outsider}) {
            for (const auto& n : nodes) EXPECT_EQ(code([&] { zt::delete_node(*s, n); }), errc::no_auth) << n;
            EXPECT_EQ(code([&] { zt::create_node(*s, dir + "/_c_forged-lock-0000000000", "x"); }), errc::no_auth);
            EXPECT_EQ(code([&] { zt::set_acl(*s, dir, acls::open_unsafe()); }), errc::no_auth);
            Mutex thief(*s, dir);
            std::error_code ec;
            EXPECT_FALSE(thief.try_lock(ec));
            EXPECT_EQ(ec, errc::no_auth);
        }
    }

    std::vector<std::string> checked_;
};

TEST_F(TlsTest, LockOverTls) {
    Session session(tls_options());
    session.connect();
    EXPECT_EQ(session.state(), session_state::connected);
    const auto path = lock_path();
    Mutex m(session, path);
    m.lock();
    EXPECT_TRUE(m.is_held());
    // The node is on the server, seen by a plain session on its plain port.
    SessionOptions plain;
    plain.connect = server()->connect_string();
    Session observer(plain);
    observer.connect();
    const auto queue = list_contenders(observer, path);
    ASSERT_EQ(queue.size(), 1u);
    EXPECT_EQ(path + "/" + queue[0].node, m.node_path());
    EXPECT_EQ(queue[0].owner_session, session.session_id());
    m.unlock();
}

TEST_F(TlsTest, ClosingDeletesTheNodesAtOnce) {
    // zookeeper_close's closeSession cannot pass the leg while it blocks the
    // session's thread; the leg sends its own, or the node would stay for
    // the session timeout.
    auto o = tls_options();
    o.session_timeout = 60s;
    auto holder = std::make_unique<Session>(o);
    holder->connect();
    const auto path = lock_path();
    Mutex m(*holder, path);
    m.lock();
    SessionOptions plain;
    plain.connect = server()->connect_string();
    Session observer(plain);
    observer.connect();
    ASSERT_EQ(list_contenders(observer, path).size(), 1u);
    holder->close();
    EXPECT_TRUE(wait_until([&] { return list_contenders(observer, path).empty(); }, 30s))
        << "the node outlived its session's close";
}

TEST_F(TlsTest, TwoTlsSessionsAreGrantedInQueueOrder) {
    Session a(tls_options()), b(tls_options()), c(tls_options());
    a.connect();
    b.connect();
    c.connect();
    const auto path = lock_path();
    Mutex ma(a, path), mb(b, path), mc(c, path);
    ma.lock();
    // Each grant is noted by its holder as it completes: one that came before
    // the release making room for it, or out of queue order, is in the log
    // whenever the test looks.
    GrantLog log;
    log.holds("a");
    auto granted_b = log.lock(mb, "b");
    wait_for_contenders(a, path, 2, 10s);
    auto granted_c = log.lock(mc, "c");
    wait_for_contenders(a, path, 3, 10s);
    log.releasing("a");
    ma.unlock();
    // b queued first: it is granted, over its TLS leg's watch, while c waits.
    EXPECT_FALSE(get_within(granted_b, 20s));
    EXPECT_TRUE(mb.is_held());
    log.releasing("b");
    mb.unlock();
    EXPECT_FALSE(get_within(granted_c, 20s));
    EXPECT_TRUE(mc.is_held());
    EXPECT_EQ(log.entries(), (std::vector<std::string>{"-a", "+b", "-b", "+c"}));
    EXPECT_TRUE(log.crowded().empty()) << log.crowded().front();
    mc.unlock();
}

TEST_F(TlsTest, ServerSignedByAnotherCaIsUntrusted) {
    auto o = tls_options();
    o.tls.ca_file = server()->certificates().other_ca_file.string();
    EXPECT_EQ(connect_code(o), errc::tls_untrusted_server);
}

TEST_F(TlsTest, InsecureAcceptsAnUntrustedServer) {
    auto o = tls_options();
    o.tls.ca_file = server()->certificates().other_ca_file.string();
    o.tls.insecure = true;
    EXPECT_EQ(connect_code(o), std::error_code());
}

TEST_F(TlsTest, CertificateForAnotherHostIsRefused) {
    zt::TestCertificateOptions names;
    names.server_names = {"zk.example.invalid"};
    zt::ZooKeeperServer other(tls_server_options(names));
    auto o = tls_options(other);
    EXPECT_EQ(connect_code(o), errc::tls_wrong_host);
    // The name is all that is wrong: without the host check it connects.
    o.tls.verify_host = false;
    EXPECT_EQ(connect_code(o), std::error_code());
}

TEST_F(TlsTest, ExpiredServerCertificateIsRefused) {
    zt::TestCertificateOptions expired;
    expired.expired_server_certificate = true;
    zt::ZooKeeperServer other(tls_server_options(expired));
    EXPECT_EQ(connect_code(tls_options(other)), errc::tls_certificate_expired);
}

TEST_F(TlsTest, PlainPortIsAFailedHandshake) {
    auto o = tls_options();
    o.connect = server()->connect_string();
    EXPECT_EQ(connect_code(o), errc::tls_handshake_failed);
}

TEST_F(TlsTest, NoClientCertificateIsAFailedHandshake) {
    auto o = tls_options();
    o.tls.cert_file.clear();
    o.tls.key_file.clear();
    EXPECT_EQ(connect_code(o), errc::tls_handshake_failed);
}

TEST_F(TlsTest, NothingListeningIsARefusal) {
    // The leg tells the session its server refused, as the C client would
    // have: connect() ends with the refusal, not at its deadline.
    auto o = tls_options();
    o.connect = "127.0.0.1:" + std::to_string(zt::free_loopback_port());
    EXPECT_EQ(connect_code(o), errc::connection_refused);
}

TEST_F(TlsTest, ServersThatFailAreRotatedPastWhileOneServes) {
    // One leg per server: a server that fails TLS (a plain port) or refuses
    // is one address of the C client's rotation, and the session goes on to
    // the one that serves instead of closing.
    auto o = tls_options();
    o.connect = server()->connect_string() + ",127.0.0.1:" + std::to_string(zt::free_loopback_port()) + "," +
                server()->secure_connect_string();
    Session session(o);
    session.connect();
    EXPECT_EQ(session.state(), session_state::connected);
    const auto path = lock_path();
    Mutex m(session, path);
    m.lock();
    EXPECT_TRUE(m.is_held());
    m.unlock();
}

TEST_F(TlsTest, SessionSurvivesAServerRestart) {
    // The C client reconnects through the same leg to the restarted server,
    // within the session timeout: the session and its lock live on.
    auto so = tls_server_options();
    zt::ZooKeeperServer own(so);
    auto o = tls_options(own);
    o.session_timeout = 30s;
    Session session(o);
    EventLog events(session);
    session.connect();
    const auto path = "/zklock-tls-tests/restart/lock";
    Mutex m(session, path);
    m.lock();
    const auto id = session.session_id();
    own.restart();
    EXPECT_TRUE(events.wait_for(session_event::suspended, 30s));
    EXPECT_TRUE(events.wait_for(session_event::reconnected, 30s));
    EXPECT_EQ(session.session_id(), id);
    EXPECT_TRUE(m.is_held());
    SessionOptions plain;
    plain.connect = own.connect_string();
    Session observer(plain);
    observer.connect();
    const auto queue = list_contenders(observer, path);
    ASSERT_EQ(queue.size(), 1u);
    EXPECT_EQ(path + std::string("/") + queue[0].node, m.node_path());
    m.unlock();
    EXPECT_TRUE(wait_until([&] { return list_contenders(observer, path).empty(); }));
}

namespace {
/// True when this machine has an established TCP connection to
/// 127.0.0.1:`port` (/proc/net/tcp: a client's end, the remote port `port`).
bool connected_to(std::uint16_t port) {
    std::istringstream table(read_file("/proc/net/tcp"));
    std::string line;
    std::getline(table, line);  // the header
    char want[16];
    std::snprintf(want, sizeof want, "0100007F:%04X", port);
    while (std::getline(table, line)) {
        std::istringstream fields(line);
        std::string slot, local, remote, state;
        fields >> slot >> local >> remote >> state;
        if (remote == want && state == "01") return true;
    }
    return false;
}
} // namespace

// Over TLS to a 3-node ensemble, one leg per server: when the server the
// session is on dies, the C client moves to another server of its list
// through that server's leg, within the session timeout; the session and
// its lock live on, and the lock is handed on to a plain session. The TLS
// session is the only client of the secure ports, so the node it is on is
// the one a connection to whose secure port is established.
TEST(TlsEnsembleTest, AHolderKeepsItsLockWhenItsServerDies) {
    zt::EnsembleOptions eo;
    eo.tls = true;
    eo.max_session_timeout_ms = 20000;
    zt::Ensemble ensemble(eo);
    SessionOptions o;
    o.connect = ensemble.secure_connect_string();
    o.session_timeout = 20s;
    o.connect_timeout = 60s;
    const auto& c = ensemble.certificates();
    o.tls = TlsOptions{c.ca_file.string(), c.client_cert_file.string(), c.client_key_file.string()};
    SessionOptions plain;
    plain.connect = ensemble.connect_string();
    plain.session_timeout = 20s;
    Session holder_session(o), waiter_session(plain);
    EventLog events(holder_session);
    holder_session.connect();
    waiter_session.connect();
    const std::string path = "/zklock-tls-tests/ensemble/lock";
    Mutex holder(holder_session, path), waiter(waiter_session, path);
    holder.lock();
    const auto token = holder.fencing_token();
    auto granted = waiter.async_lock(boost::asio::use_future);
    ASSERT_TRUE(wait_until([&] { return waiter.queue_position() == 1u; }, 20s));

    const auto node_on = [&]() -> std::optional<std::size_t> {
        for (std::size_t i = 0; i < ensemble.size(); ++i)
            if (ensemble.node(i).running() && connected_to(ensemble.node(i).secure_port())) return i;
        return std::nullopt;
    };
    std::optional<std::size_t> on;
    ASSERT_TRUE(wait_until([&] { return (on = node_on()).has_value(); }, 20s)) << "no TLS connection to any node";
    const auto id = holder_session.session_id();
    ensemble.node(*on).kill9();
    ASSERT_TRUE(events.wait_for(session_event::suspended, 30s));
    ASSERT_TRUE(events.wait_for(session_event::reconnected, 30s));
    EXPECT_EQ(holder_session.session_id(), id);
    std::optional<std::size_t> now_on;
    EXPECT_TRUE(wait_until([&] { return (now_on = node_on()).has_value(); }, 20s));
    EXPECT_NE(now_on, on) << "the session is on the node that was killed";
    EXPECT_TRUE(holder.is_held());
    EXPECT_FALSE(waiter.is_held());
    holder.unlock();
    EXPECT_FALSE(get_within(granted, 30s));
    EXPECT_TRUE(waiter.is_held());
    EXPECT_GT(waiter.fencing_token(), token);
    waiter.unlock();
    EXPECT_TRUE(wait_until([&] { return list_contenders(waiter_session, path).empty(); }, 20s));
}

// A client certificate is an identity (x509:<subject DN>): a lock whose
// directory only that identity may touch cannot be stolen, deleted or
// blocked by a client with another certificate, nor by one without TLS.
TEST_F(TlsTest, X509AclShutsOutClientsWithoutTheCertificate) {
    const acl_list owner_only{{"x509", "CN=zklock-test-client", perms::all}};
    auto o = tls_options();
    o.acl = owner_only;
    Session owner(o);
    owner.connect();
    const auto path = "/zklock-tls-tests/X509AclShutsOutClientsWithoutTheCertificate/" + std::to_string(::getpid());
    Mutex held(owner, path + "/lock");
    held.lock();
    expect_shut_out(path + "/lock", {held.node_path()});
    EXPECT_TRUE(held.is_held());
    const auto queue = list_contenders(owner, path + "/lock");
    ASSERT_EQ(queue.size(), 1u);
    EXPECT_EQ(path + "/lock/" + queue[0].node, held.node_path());
    held.unlock();
}

TEST_F(TlsTest, EveryDescriptorOfTheLegIsCloseOnExec) {
    // The legs' listeners, the C client's accepted connection and the TLS
    // socket to the server: a program this process starts inherits none.
    const auto before = open_descriptors();
    Session session(tls_options());
    session.connect();
    const auto path = lock_path();
    Mutex m(session, path);
    m.lock();
    EXPECT_GE(open_descriptors().size(), before.size() + 4) << "not the listener, both ends and the TLS socket";
    EXPECT_EQ(inheritable_since(before), std::vector<std::string>{});
    m.unlock();
}

TEST_F(TlsTest, KeyFileOthersMayReadIsRefused) {
    const auto& c = server()->certificates();
    const auto copy = c.client_key_file.parent_path() / "client-open.key";
    std::filesystem::copy_file(c.client_key_file, copy, std::filesystem::copy_options::overwrite_existing);
    std::filesystem::permissions(copy, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
                                           std::filesystem::perms::others_read);
    auto o = tls_options();
    o.tls.key_file = copy.string();
    std::string reason;
    EXPECT_EQ(validate_tls(o.tls, &reason), errc::invalid_argument);
    EXPECT_NE(reason.find("chmod 600"), std::string::npos) << reason;
    try {
        Session s(o);
        ADD_FAILURE() << "a Session took a key file others may read";
    } catch (const zklock::error& e) {
        EXPECT_EQ(e.code(), errc::invalid_argument);
        EXPECT_NE(std::string(e.what()).find(copy.string()), std::string::npos) << e.what();
    }
    std::filesystem::remove(copy);
}

// zklock, Curator (ZooKeeper's client TLS properties, Netty's client socket)
// and kazoo (use_ssl), each over its own TLS connection with the suite's
// client certificate, queue FIFO on one lock whose directory only that
// certificate's identity (x509) may touch: a zklock holder, Curator behind
// it, kazoo behind Curator, a zklock waiter behind kazoo. (Curator sees only
// "-lock-" names, so kazoo, which names its nodes "__lock__", queues after
// it.) A client with another certificate, and one without TLS, can delete
// none of their nodes, add none, open the directory or take the lock.
TEST_F(TlsTest, ZklockCuratorAndKazooShareAnX509LockInQueueOrder) {
    if (const auto why = curator_peer_unavailable()) GTEST_SKIP() << "Curator interop: " << *why;
    const auto& c = server()->certificates();
    const auto path = lock_path();
    const auto secure = server()->secure_connect_string();
    auto o = tls_options();
    // World-readable, so that the suite's plain observer can check for leftovers.
    o.acl = acl_list{{"x509", "CN=zklock-test-client", perms::all}, {"world", "anyone", perms::read}};
    Session a(o), b(o);
    a.connect();
    b.connect();
    Mutex first(a, path), last(b, path);
    first.lock();

    zt::TempDir dir("zklock-tls-peers-");
    const std::string java = "/usr/share/java/";
    std::string netty;
    for (const char* jar : {"netty-handler", "netty-transport", "netty-buffer", "netty-common", "netty-codec",
                            "netty-resolver", "netty-transport-native-epoll", "netty-transport-native-unix-common"})
        netty += (netty.empty() ? "" : ":") + java + jar + ".jar";
    const auto p = [](const std::string& k, const std::string& v) { return "-D" + k + "=" + v; };
    CuratorPeer curator(dir.path(), secure, path,
                        {p("zookeeper.client.secure", "true"),
                         p("zookeeper.clientCnxnSocket", "org.apache.zookeeper.ClientCnxnSocketNetty"),
                         p("zookeeper.ssl.keyStore.location", c.client_keystore.string()),
                         p("zookeeper.ssl.keyStore.password", c.store_password),
                         p("zookeeper.ssl.keyStore.type", "PKCS12"),
                         p("zookeeper.ssl.trustStore.location", c.server_truststore.string()),
                         p("zookeeper.ssl.trustStore.password", c.store_password),
                         p("zookeeper.ssl.trustStore.type", "PKCS12")},
                        netty);
    ASSERT_TRUE(curator.wait_for("ready", "peer"));
    curator.mutex("c");
    const auto two = wait_for_contenders(a, path, 2, 60s);
    KazooPeer kazoo(dir.path(), secure, path, "kz",
                    plus(kazoo_sees_zklock_mutex, {"--tls-ca", c.ca_file.string(), "--tls-cert",
                                                   c.client_cert_file.string(), "--tls-key",
                                                   c.client_key_file.string()}));
    // kazoo waits for Curator's node, over its own TLS connection.
    EXPECT_EQ(kazoo.wait_for_value("predecessor"), two.at(1).node) << kazoo.output();
    const auto granted = grant::make();
    last.async_lock(on_grant(granted));
    const auto queue = wait_for_contenders(a, path, 4, 60s);
    std::vector<std::string> nodes;
    for (const auto& n : queue) nodes.push_back(path + "/" + n.node);
    expect_shut_out(path, nodes);
    const auto after = list_contenders(a, path);
    ASSERT_EQ(after.size(), queue.size());
    for (std::size_t i = 0; i < after.size(); ++i) EXPECT_EQ(after[i].node, queue[i].node);

    const auto first_leave = monotonic_ns();
    first.unlock();
    const auto c_enter = curator.wait_for("acquired", "c");
    ASSERT_TRUE(c_enter) << curator.output();
    EXPECT_LT(first_leave, *c_enter) << "Curator acquired while the zklock holder held the lock";
    curator.release("c");
    const auto c_leave = curator.wait_for("releasing", "c");
    ASSERT_TRUE(c_leave) << curator.output();
    const auto k_enter = kazoo.wait_for("acquired");
    ASSERT_TRUE(k_enter) << kazoo.output();
    EXPECT_LT(*c_leave, *k_enter) << "kazoo acquired while Curator held the lock";
    EXPECT_TRUE(pending(granted)) << "the zklock waiter overtook kazoo";
    kazoo.release();
    ASSERT_FALSE(get_within(granted->result, 60s));
    ASSERT_TRUE(kazoo.exited_cleanly()) << kazoo.output();
    EXPECT_LT(kazoo.sections().at(0).leave, granted->at.load()) << "zklock acquired while kazoo held the lock";
    last.unlock();
    EXPECT_TRUE(curator.quit());
}

#ifdef ZKLOCK_CLI_PATH
#include "test_cli_support.hpp"

// `zklock run` over TLS: the lock held through --tls-*, and each refusal
// with its own exit status and a message that names no key material.
TEST_F(TlsTest, CliRunsOverTlsAndSaysWhyNot) {
    cli::Cli z;
    const auto& c = server()->certificates();
    const auto path = lock_path();
    const auto args = [&](const std::string& ca, const std::string& key, const std::string& connect) {
        return std::vector<std::string>{"run", "-c", connect, "--tls-ca", ca, "--tls-cert", c.client_cert_file.string(),
                                        "--tls-key", key, "--connect-timeout", "60s", path, "--", "true"};
    };
    const auto secure = server()->secure_connect_string();
    auto held = z.start(args(c.ca_file.string(), c.client_key_file.string(), secure), "held");
    EXPECT_EQ(cli::exit_code(held, 60s), 0) << z.output("held");
    auto untrusted = z.start(args(c.other_ca_file.string(), c.client_key_file.string(), secure), "untrusted");
    EXPECT_EQ(cli::exit_code(untrusted, 60s), 81) << z.output("untrusted");
    EXPECT_TRUE(cli::contains(z.output("untrusted"), "not signed by a trusted CA")) << z.output("untrusted");
    auto plain = z.start(args(c.ca_file.string(), c.client_key_file.string(), server()->connect_string()), "plain");
    EXPECT_EQ(cli::exit_code(plain, 60s), 80) << z.output("plain");
    const auto open_key = z.file("open.key");
    std::filesystem::copy_file(c.client_key_file, open_key);
    std::filesystem::permissions(open_key, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
                                               std::filesystem::perms::group_read);
    auto refused = z.start(args(c.ca_file.string(), open_key.string(), secure), "open-key");
    EXPECT_EQ(cli::exit_code(refused, 60s), 64) << z.output("open-key");
    EXPECT_TRUE(cli::contains(z.output("open-key"), "chmod 600")) << z.output("open-key");
    EXPECT_FALSE(cli::contains(z.output("open-key"), "PRIVATE KEY")) << z.output("open-key");
}

// `zklock bench --backend zookeeper -c SECURE --tls-*`: the row is measured
// through the TLS legs (without them the session would never connect to the
// secure port).
TEST_F(TlsTest, BackendBenchRunsOverTls) {
    cli::Cli z;
    const auto& c = server()->certificates();
    auto p = z.start({"bench", "--backend", "zookeeper", "-c", server()->secure_connect_string(), "--tls-ca",
                      c.ca_file.string(), "--tls-cert", c.client_cert_file.string(), "--tls-key",
                      c.client_key_file.string(), "--scenario", "uncontended", "--ops", "20", "--warmup", "0",
                      "--connect-timeout", "30s"},
                     "bench");
    EXPECT_EQ(cli::exit_code(p, 60s), 0) << z.output("bench");
    EXPECT_TRUE(cli::contains(z.output("bench"), "zookeeper")) << z.output("bench");
}
#endif
