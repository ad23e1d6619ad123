// The memcached backend against a real memcached: what the conformance suite
// does not cover (renewal past the ttl, a release that must not delete another
// owner's key, a server that is not there, addresses it refuses). One server
// for the suite.
#include "support.hpp"

#include <zklock/backends.hpp>
#include <zklock/memcached/memcached_lock_service.hpp>
#include <zklock/testing/memcached_server.hpp>

#include <boost/asio/use_future.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <system_error>

namespace zklock::test {
namespace {

class MemcachedTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() { server_ = new testing::MemcachedServer(); }
    static void TearDownTestSuite() {
        delete server_;
        server_ = nullptr;
    }
    static MemcachedOptions options() {
        MemcachedOptions o;
        o.ttl = 2s;
        return o;
    }
    std::unique_ptr<MemcachedLockService> client() {
        return std::make_unique<MemcachedLockService>(server_->connect_string(), options());
    }
    /// The key's CAS unique, as `gets` shows it; "" when the key is absent.
    static std::string cas_unique(const std::string& name) {
        const auto reply = server_->command("gets " + MemcachedLockService::key_for(options().key_prefix, name));
        if (!reply.starts_with("VALUE ")) return "";
        const auto line = reply.substr(0, reply.find('\r'));
        return line.substr(line.rfind(' ') + 1);
    }
    static testing::MemcachedServer* server_;
};

testing::MemcachedServer* MemcachedTest::server_ = nullptr;

// Four renewals seen (the key's CAS unique changes at each) span more than the
// 2 s ttl: the key would have expired without them.
TEST_F(MemcachedTest, TheWatchdogKeepsTheLockPastItsTtl) {
    auto a = client();
    auto b = client();
    Lock holder = a->make_lock("renewed");
    Lock other = b->make_lock("renewed");
    holder.lock();
    std::string seen = cas_unique("renewed");
    ASSERT_FALSE(seen.empty());
    const auto started = std::chrono::steady_clock::now();
    for (int renewals = 0; renewals < 4; ++renewals) {
        ASSERT_TRUE(wait_until([&] {
            const auto now = cas_unique("renewed");
            if (now.empty() || now == seen) return false;
            seen = now;
            return true;
        })) << "renewal " << renewals + 1 << " never came";
    }
    ASSERT_GT(std::chrono::steady_clock::now() - started, 2s);
    EXPECT_TRUE(holder.is_held());
    EXPECT_FALSE(other.try_lock()) << "the lock expired under a live holder";
    holder.unlock();
}

// A holder whose key was deleted behind its back and taken by another client
// must not delete the new owner's key when it releases.
TEST_F(MemcachedTest, AReleaseNeverDeletesAnotherOwnersKey) {
    auto a = client();
    auto b = client();
    auto c = client();
    Lock first = a->make_lock("handed-over");
    Lock second = b->make_lock("handed-over");
    Lock probe = c->make_lock("handed-over");
    first.lock();
    server_->command("delete " + MemcachedLockService::key_for(options().key_prefix, "handed-over"));
    ASSERT_TRUE(second.try_lock());
    auto released = first.async_unlock(boost::asio::use_future);
    const auto ec = get_within(released);
    EXPECT_TRUE(!ec || is_lock_lost(ec)) << ec.message();
    EXPECT_TRUE(second.is_held());
    EXPECT_FALSE(probe.try_lock()) << "the first holder's release deleted the second holder's key";
    auto second_released = second.async_unlock(boost::asio::use_future);
    EXPECT_FALSE(get_within(second_released));
    EXPECT_TRUE(probe.try_lock());
    probe.unlock();
}

TEST_F(MemcachedTest, ARefusedServerFailsLockAtOnceAndTryLockForUntilItsDeadline) {
    MemcachedLockService nowhere("127.0.0.1:" + std::to_string(testing::free_loopback_port()), options());
    Lock lock = nowhere.make_lock("nowhere");
    std::error_code ec;
    lock.lock(ec);
    EXPECT_EQ(ec, std::errc::connection_refused) << ec.message();
    EXPECT_FALSE(lock.is_held());
    ec = {};
    EXPECT_FALSE(lock.try_lock_for(300ms, ec));
    EXPECT_EQ(ec, std::errc::connection_refused) << ec.message();
}

TEST_F(MemcachedTest, AddressesWithCredentialsAndShortTtlsAreRefusedWithoutQuotingTheSecret) {
    BackendOptions o;
    o.memcached = "memcached://alice:s3cret@127.0.0.1:11211";
    try {
        open_lock_service("memcached", o);
        ADD_FAILURE() << "accepted credentials the backend cannot use";
    } catch (const zklock::error& e) {
        EXPECT_EQ(e.code(), errc::invalid_argument);
        EXPECT_EQ(std::string(e.what()).find("s3cret"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("no authentication"), std::string::npos) << e.what();
    }
    o.memcached = server_->connect_string();
    o.ttl = 1500ms;
    EXPECT_THROW(open_lock_service("memcached", o), zklock::error);
}

} // namespace
} // namespace zklock::test
