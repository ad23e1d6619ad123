// The etcd backend against a real etcd: what the conformance suite does not
// cover (the lease kept past its ttl, a holder whose keepalives go unanswered,
// user/password authentication, endpoints it refuses). One server for the
// suite, one more with authentication enabled.
#include "support.hpp"

#include <zklock/backends.hpp>
#include <zklock/etcd/etcd_lock_service.hpp>
#include <zklock/testing/etcd_server.hpp>

#include <boost/asio/use_future.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <system_error>

namespace zklock::test {
namespace {

class EtcdTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() { server_ = new testing::EtcdServer(); }
    static void TearDownTestSuite() {
        delete server_;
        server_ = nullptr;
    }
    static EtcdOptions options() {
        EtcdOptions o;
        o.ttl = 2s;
        return o;
    }
    static std::string prefix(const std::string& name) {
        return EtcdLockService::prefix_for(options().key_prefix, name);
    }
    std::unique_ptr<EtcdLockService> client(EtcdOptions o = options()) {
        return std::make_unique<EtcdLockService>(server_->connect_string(), std::move(o));
    }
    /// The seconds lease `id` has left, as etcd says (-1: no such lease).
    static long long remaining(std::int64_t id) {
        const auto reply = server_->request("/v3/lease/timetolive", "{\"ID\":\"" + std::to_string(id) + "\"}");
        const auto at = reply.find("\"TTL\":\"");
        return at == std::string::npos ? -1 : std::stoll(reply.substr(at + 7));
    }
    static testing::EtcdServer* server_;
};

testing::EtcdServer* EtcdTest::server_ = nullptr;

// The key keeps the lease it was put with, and the hold's safe time moves on
// again and again (six answered keepalives, two ttls at least): the
// keepalives' answers carry the lease, and etcd still has it.
TEST_F(EtcdTest, KeepalivesKeepTheLockPastItsTtl) {
    auto a = client();
    Lock holder = a->make_lock("kept");
    holder.lock();
    const auto keys = server_->keys(prefix("kept"));
    ASSERT_EQ(keys.size(), 1u);
    const auto lease = keys.front().lease;
    ASSERT_NE(lease, 0);
    EXPECT_EQ(keys.front().create_revision, holder.fencing_token());
    // The end of the safe time, on the steady clock: it moves only when a
    // keepalive's answer comes (by the keepalive period, a third of the ttl).
    const auto safe_until = [&] { return std::chrono::steady_clock::now() + holder.safe_for().value_or(0ms); };
    int renewals = 0;
    auto last = safe_until();
    ASSERT_TRUE(wait_until([&] {
        const auto now = safe_until();
        if (now > last + options().ttl / 6) ++renewals;
        if (now > last) last = now;
        return renewals >= 6 || !holder.is_held();
    }, 60s)) << "renewed " << renewals << " times";
    EXPECT_TRUE(holder.is_held());
    EXPECT_GE(remaining(lease), 0) << "etcd no longer has the lease";
    const auto after = server_->keys(prefix("kept"));
    ASSERT_EQ(after.size(), 1u);
    EXPECT_EQ(after.front().create_revision, keys.front().create_revision);
    holder.unlock();
    EXPECT_TRUE(wait_until([&] { return server_->keys(prefix("kept")).empty(); }));
}

// The server stops answering (SIGSTOP): the holder hears nothing more, and is
// told the lock is lost once the ttl since the last answered keepalive's send
// time has passed, while the server is still stopped.
TEST_F(EtcdTest, AHolderWhoseKeepalivesGoUnansweredIsToldWhileTheServerIsSilent) {
    auto a = client();
    Lock holder = a->make_lock("silent");
    holder.lock();
    auto lost = holder.async_wait_lost(boost::asio::use_future);
    ASSERT_TRUE(server_->pause());
    const auto ec = get_within(lost, 30s);
    const bool still_paused = server_->paused();
    ASSERT_TRUE(server_->resume());
    EXPECT_EQ(ec, errc::session_expired) << ec.message();
    EXPECT_TRUE(still_paused) << "told only after the server answered again";
    EXPECT_FALSE(holder.is_held());
    EXPECT_LE(holder.safe_for().value_or(1ms), std::chrono::milliseconds::zero());
    // Its lease is revoked or runs out: the key goes, and another client gets the lock.
    auto b = client();
    Lock next = b->make_lock("silent");
    EXPECT_TRUE(next.try_lock_for(30s));
    next.unlock();
}

TEST_F(EtcdTest, AServerThatIsNotThereFailsTheAcquire) {
    EtcdLockService service("127.0.0.1:" + std::to_string(testing::free_loopback_port()), options());
    Lock lock = service.make_lock("nowhere");
    std::error_code ec;
    EXPECT_FALSE(lock.try_lock(ec));
    EXPECT_EQ(ec, errc::connection_loss) << ec.message();
}

TEST_F(EtcdTest, BadEndpointsAndOptionsAreRefused) {
    for (const char* bad : {"", "127.0.0.1:0", "unix:///x", "http://root:secret@127.0.0.1:2379"}) {
        try {
            EtcdLockService s(bad, options());
            ADD_FAILURE() << "accepted '" << bad << "'";
        } catch (const zklock::error& e) {
            EXPECT_EQ(e.code(), errc::invalid_argument) << bad;
            EXPECT_EQ(std::string(e.what()).find("secret"), std::string::npos) << e.what();
        }
    }
    auto short_ttl = options();
    short_ttl.ttl = 1500ms;
    EXPECT_THROW(EtcdLockService(server_->connect_string(), short_ttl), zklock::error);
    auto no_user = options();
    no_user.password = "secret";
    EXPECT_THROW(EtcdLockService(server_->connect_string(), no_user), zklock::error);
}

// etcd with authentication: the right password locks; a wrong one fails with
// auth_failed, and no message carries the password.
TEST(EtcdAuthTest, UserAndPasswordAuthenticateAndAWrongPasswordIsRefused) {
    testing::EtcdServerOptions so;
    so.root_password = "right-horse-battery";
    testing::EtcdServer server(so);
    EtcdOptions o;
    o.ttl = 2s;
    o.user = "root";
    o.password = "right-horse-battery";
    {
        EtcdLockService service(server.connect_string(), o);
        Lock lock = service.make_lock("authed");
        EXPECT_TRUE(lock.try_lock_for(30s));
        EXPECT_GT(lock.fencing_token(), 0);
        lock.unlock();
    }
    // Nobody: etcd refuses the unauthenticated write ("user name is empty").
    {
        auto none = o;
        none.user.clear();
        none.password.clear();
        EtcdLockService service(server.connect_string(), none);
        Lock lock = service.make_lock("authed");
        std::error_code ec;
        EXPECT_FALSE(lock.try_lock(ec));
        EXPECT_EQ(ec, errc::auth_failed) << ec.message();
    }
    auto wrong = o;
    wrong.password = "wrong-staple-7";
    EtcdLockService service(server.connect_string(), wrong);
    Lock lock = service.make_lock("authed");
    std::error_code ec;
    EXPECT_FALSE(lock.try_lock(ec));
    EXPECT_EQ(ec, errc::auth_failed) << ec.message();
    EXPECT_EQ(ec.message().find("wrong-staple-7"), std::string::npos);
    EXPECT_EQ(lock.failure_detail().find("wrong-staple-7"), std::string::npos);
    EXPECT_TRUE(server.keys("zklock/authed/").empty());
}

} // namespace
} // namespace zklock::test
