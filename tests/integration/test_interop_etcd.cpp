// zklock's etcd backend and etcd's own Go Mutex (clientv3/concurrency, from
// Debian's golang-etcd-server-dev, run by the harness tests/interop/etcd_peer.go
// as a process) on one prefix: mutual exclusion under churn, and FIFO by create
// revision both ways. Both write <prefix>/<lease id in hex> and order the keys
// by create revision, so each queues behind the other.
#include "grant_support.hpp"
#include "reporting_peer.hpp"
#include "sections.hpp"
#include "support.hpp"

#include <zklock/etcd/etcd_lock_service.hpp>
#include <zklock/testing/etcd_server.hpp>
#include <zklock/testing/process.hpp>

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace zklock::test {
namespace {

std::optional<std::string> etcd_peer_unavailable() {
    if (::access(ZKLOCK_ETCD_PEER, X_OK) != 0)
        return std::string(ZKLOCK_ETCD_PEER) +
               " was not built: go or etcd's clientv3 sources were missing when zklock was configured (scripts/setup "
               "installs golang-go and golang-etcd-server-dev; configure again)";
    return std::nullopt;
}

std::string etcd_peer_program() { return ZKLOCK_ETCD_PEER; }

class EtcdInteropTest : public ::testing::Test {
protected:
    void SetUp() override {
        if (const auto why = etcd_peer_unavailable()) GTEST_SKIP() << "etcd interop: " << *why;
    }

    /// One etcd for the suite (ctest runs it as one process); each test has its own prefix.
    static testing::EtcdServer& server() {
        static const auto s = std::make_unique<testing::EtcdServer>();
        return *s;
    }

    static EtcdOptions options() {
        EtcdOptions o;
        o.ttl = std::chrono::seconds(5);
        return o;
    }

    /// The lock's name, and the prefix the Go Mutex is given for it (zklock's
    /// key prefix and the name; the Mutex appends '/').
    std::string lock_name() const {
        return std::string("interop-") + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    }
    std::string go_prefix() const { return options().key_prefix + lock_name(); }
    std::string queue() const { return EtcdLockService::prefix_for(options().key_prefix, lock_name()); }

    std::unique_ptr<ReportingPeer> peer(const std::string& name, std::vector<std::string> args = {}) {
        args.insert(args.end(), {"--ttl", "5"});
        return std::make_unique<ReportingPeer>("etcd", std::vector<std::string>{etcd_peer_program()}, dir_.path(),
                                               server().connect_string(), go_prefix(), name, std::move(args));
    }

    /// The keys of the queue in create-revision order, once there are `n`.
    std::vector<testing::EtcdKey> wait_for_keys(std::size_t n) {
        std::vector<testing::EtcdKey> keys;
        EXPECT_TRUE(wait_until([&] { return (keys = server().keys(queue())).size() == n; }, 60s))
            << "the queue holds " << keys.size() << " keys, not " << n;
        return keys;
    }

    testing::TempDir dir_{"zklock-etcd-go-"};
};

TEST_F(EtcdInteropTest, MutualExclusionUnderChurnWithGoMutexes) {
    constexpr int rounds = 20;
    std::vector<std::unique_ptr<ReportingPeer>> go;
    for (const auto* name : {"g1", "g2"})
        go.push_back(peer(name, {"--mode", "churn", "--wait-for-go", "--iterations", std::to_string(rounds)}));
    for (auto& p : go) ASSERT_TRUE(p->wait_for("ready"));
    std::vector<std::unique_ptr<EtcdLockService>> services;
    for (int c = 0; c < 2; ++c) services.push_back(std::make_unique<EtcdLockService>(server().connect_string(), options()));
    for (auto& p : go) p->go();

    std::mutex m;
    std::vector<section> all;
    std::vector<std::string> errors;
    {
        std::vector<std::jthread> clients;
        for (std::size_t c = 0; c < services.size(); ++c) {
            clients.emplace_back([&, c] {
                try {
                    Lock lock = services[c]->make_lock(lock_name());
                    for (int i = 0; i < rounds; ++i) {
                        if (!lock.try_lock_for(60s)) throw std::runtime_error("no lock within 60 s");
                        const auto enter = monotonic_ns();
                        (void)server().keys(queue());  // a server round trip while holding
                        const auto leave = monotonic_ns();
                        lock.unlock();
                        std::lock_guard lk(m);
                        all.push_back({"zklock " + std::to_string(c), enter, leave});
                    }
                } catch (const std::exception& e) {
                    std::lock_guard lk(m);
                    errors.push_back(e.what());
                }
            });
        }
    }
    EXPECT_TRUE(errors.empty()) << errors.front();
    EXPECT_EQ(all.size(), services.size() * rounds) << "zklock made no full progress";
    for (auto& p : go) {
        ASSERT_TRUE(p->exited_cleanly());
        const auto s = p->sections();
        EXPECT_EQ(s.size(), static_cast<std::size_t>(rounds)) << p->name() << " made no full progress";
        all.insert(all.end(), s.begin(), s.end());
    }
    expect_turns_without_overlap(all, "etcd");
    services.clear();
    EXPECT_TRUE(wait_for_keys(0).empty());
}

// Go holds; zklock queues behind it; another Go Mutex queues behind zklock:
// each is granted only after the one before let go.
TEST_F(EtcdInteropTest, ZklockQueuesBetweenGoMutexesInCreateOrder) {
    auto first = peer("first");
    ASSERT_TRUE(first->wait_for("acquired"));
    const auto first_key = first->wait_for_value("key");

    EtcdLockService service(server().connect_string(), options());
    Lock waiter = service.make_lock(lock_name());
    const auto granted = grant::make();
    waiter.async_lock(on_grant(granted));
    wait_for_keys(2);

    auto last = peer("last");
    const auto last_key = last->wait_for_value("key");
    const auto keys = wait_for_keys(3);
    ASSERT_EQ(keys.size(), 3u);
    EXPECT_EQ(keys[0].key, first_key);
    EXPECT_EQ(keys[2].key, last_key);
    EXPECT_TRUE(pending(granted)) << "zklock acquired beside the Go holder";

    first->release();
    ASSERT_FALSE(get_within(granted->result, 60s));
    EXPECT_LT(first->sections().at(0).leave, granted->at.load()) << "zklock acquired while the first Go Mutex held";
    EXPECT_EQ(waiter.fencing_token(), keys[1].create_revision) << "the token is not the key's create revision";
    EXPECT_TRUE(last->values("acquired").empty()) << "the last Go Mutex acquired beside zklock";
    const auto zk_leave = monotonic_ns();
    waiter.unlock();
    const auto last_acquired = last->wait_for("acquired");
    last->release();
    ASSERT_TRUE(first->exited_cleanly());
    ASSERT_TRUE(last->exited_cleanly());
    ASSERT_TRUE(last_acquired);
    EXPECT_LT(zk_leave, *last_acquired) << "the last Go Mutex acquired while zklock held the lock";
}

// zklock holds; a Go Mutex queues behind it; another zklock Lock queues behind
// the Go one: the Go Mutex is granted first, then the second zklock Lock.
TEST_F(EtcdInteropTest, GoQueuesBetweenZklockLocksInCreateOrder) {
    EtcdLockService service(server().connect_string(), options());
    Lock holder = service.make_lock(lock_name());
    Lock second = service.make_lock(lock_name());
    holder.lock();
    auto go = peer("go");
    const auto go_key = go->wait_for_value("key");
    wait_for_keys(2);
    const auto granted = grant::make();
    second.async_lock(on_grant(granted));
    const auto keys = wait_for_keys(3);
    ASSERT_EQ(keys.size(), 3u);
    EXPECT_EQ(keys[1].key, go_key);

    const auto holder_leave = monotonic_ns();
    holder.unlock();
    const auto go_acquired = go->wait_for("acquired");
    ASSERT_TRUE(go_acquired);
    EXPECT_LT(holder_leave, *go_acquired) << "the Go Mutex acquired while zklock held the lock";
    EXPECT_TRUE(pending(granted)) << "the second zklock Lock overtook the Go Mutex";
    go->release();
    ASSERT_FALSE(get_within(granted->result, 60s));
    ASSERT_TRUE(go->exited_cleanly());
    EXPECT_LT(go->sections().at(0).leave, granted->at.load()) << "zklock acquired while the Go Mutex held";
    second.unlock();
}

} // namespace
} // namespace zklock::test
