// One suite for every backend: what a lock must do, tested the same way.
// Tests a backend cannot pass by design are skipped with the reason taken from
// its capabilities(), never silently.
#include "backend_env.hpp"

#include "../proof_support.hpp"
#include "../support.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/use_future.hpp>

#include <atomic>
#include <set>

namespace zklock::conformance {

using namespace std::chrono_literals;

std::map<std::string, EnvFactory>& registry() {
    static std::map<std::string, EnvFactory> backends;
    return backends;
}

bool BackendEnv::waits(LockService&, Lock& waiter, const std::string&, std::size_t, std::string& how) {
    how = "the waiter asked twice while the lock was held and holds nothing";
    return zklock::test::wait_until([&] { return waiter.stats().attempts >= 2 && !waiter.is_held(); }, 20s);
}

namespace {

using namespace std::chrono_literals;
using zklock::test::get_within;
using zklock::test::wait_until;

class Conformance : public ::testing::TestWithParam<std::string> {
protected:
    // One environment (its servers) per backend for the whole process: each
    // test works on its own names and checks them for leftovers, and no test
    // breaks a server (crash() drops a client, steal() deletes a key, a row or
    // a node). ctest runs each backend's tests in one process.
    void SetUp() override {
        static std::map<std::string, std::unique_ptr<BackendEnv>> envs;
        auto& env = envs[GetParam()];
        if (!env) env = registry().at(GetParam())();
        env_ = env.get();
    }
    void TearDown() override {
        if (!env_) return;
        for (const auto& name : names_)
            EXPECT_TRUE(wait_until([&] { return env_->leftovers(name) == 0; }, 15s)) << "left behind for " << name;
    }
    std::string name(const std::string& suffix = "lock") {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        std::string n = std::string(info->name()).substr(0, std::string(info->name()).find('/')) + "-" + suffix;
        names_.push_back(n);
        return n;
    }
    BackendEnv* env_ = nullptr;
    std::vector<std::string> names_;
};

// Backends without fencing tokens (capabilities().fencing_tokens false) must
// report token 0; each holder's lock is then checked by another client's
// try_lock, which must fail.
TEST_P(Conformance, MutualExclusionOfEightClientsCheckedByFencingTokens) {
    const auto lock_name = name();
    constexpr int clients = 8;
    constexpr int rounds = 5;
    std::mutex m;
    int inside = 0, violations = 0;
    std::int64_t highest = 0;
    std::vector<std::int64_t> tokens;
    std::vector<std::unique_ptr<LockService>> services;
    for (int i = 0; i < clients; ++i) services.push_back(env_->client());
    std::vector<std::thread> threads;
    for (int i = 0; i < clients; ++i) {
        threads.emplace_back([&, i] {
            Lock lock = services[static_cast<std::size_t>(i)]->make_lock(lock_name);
            // Another client's lock on the same name, for backends without tokens.
            Lock probe = services[static_cast<std::size_t>((i + 1) % clients)]->make_lock(lock_name);
            for (int r = 0; r < rounds; ++r) {
                std::unique_lock guard(lock);
                std::lock_guard lk(m);
                if (++inside != 1) ++violations;
                if (lock.capabilities().fencing_tokens) {
                    if (lock.fencing_token() <= highest) ++violations;
                    highest = lock.fencing_token();
                } else {
                    if (lock.fencing_token() != 0) ++violations;  // promises none: gives none
                    // No token orders the grants: another client must find the lock taken.
                    if (probe.try_lock()) {
                        ++violations;
                        probe.unlock();
                    }
                    highest = static_cast<std::int64_t>(tokens.size()) + 1;  // the grant's order stands in
                }
                tokens.push_back(highest);
                --inside;
            }
        });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(violations, 0);
    EXPECT_EQ(tokens.size(), static_cast<std::size_t>(clients * rounds));
    EXPECT_EQ(std::set<std::int64_t>(tokens.begin(), tokens.end()).size(), tokens.size());
}

TEST_P(Conformance, TryLockForTimesOutAndLeavesNothing) {
    const auto lock_name = name();
    auto a = env_->client();
    auto b = env_->client();
    Lock holder = a->make_lock(lock_name);
    Lock waiter = b->make_lock(lock_name);
    holder.lock();
    EXPECT_FALSE(waiter.try_lock_for(300ms));
    EXPECT_FALSE(waiter.try_lock());
    EXPECT_FALSE(waiter.is_held());
    holder.unlock();
    EXPECT_TRUE(waiter.try_lock_for(10s));
    waiter.unlock();
}

TEST_P(Conformance, CancelledAcquireLeavesNothing) {
    const auto lock_name = name();
    auto a = env_->client();
    auto b = env_->client();
    Lock holder = a->make_lock(lock_name);
    Lock waiter = b->make_lock(lock_name);
    holder.lock();
    boost::asio::cancellation_signal cancel;
    std::promise<std::error_code> result;
    waiter.async_lock(boost::asio::bind_cancellation_slot(cancel.slot(), [&](std::error_code ec) { result.set_value(ec); }));
    auto f = result.get_future();
    // Seen waiting behind the holder, the waiter can be granted only by the
    // holder's release, which does not come before the cancel.
    std::string how;
    ASSERT_TRUE(env_->waits(*b, waiter, lock_name, 1, how)) << "never seen waiting: " << how;
    EXPECT_EQ(f.wait_for(0ms), std::future_status::timeout) << "acquired a held lock (seen waiting: " << how << ")";
    cancel.emit(boost::asio::cancellation_type::terminal);
    EXPECT_EQ(get_within(f), std::errc::operation_canceled);
    EXPECT_FALSE(waiter.is_held());
    holder.unlock();
}

// A cancellation signal belongs to the acquire it was bound to: emitted after
// that acquire ended, it neither frees the hold for a second acquire through
// the same object nor stops a later acquire.
TEST_P(Conformance, ASignalOfAnEarlierAcquireLeavesTheHoldAndLaterAcquiresAlone) {
    const auto lock_name = name();
    auto a = env_->client();
    auto b = env_->client();
    Lock lock = b->make_lock(lock_name);
    boost::asio::cancellation_signal first;
    std::promise<std::error_code> granted;
    lock.async_lock(boost::asio::bind_cancellation_slot(first.slot(), [&](std::error_code ec) { granted.set_value(ec); }));
    auto g = granted.get_future();
    ASSERT_EQ(get_within(g, 30s), std::error_code{});

    first.emit(boost::asio::cancellation_type::terminal);
    std::promise<std::pair<std::error_code, bool>> second;
    lock.async_try_lock([&](std::error_code ec, bool ok) { second.set_value({ec, ok}); });
    auto s = second.get_future();
    const auto [second_ec, second_ok] = get_within(s, 30s);
    EXPECT_EQ(second_ec, errc::already_acquiring) << second_ec.message();
    EXPECT_FALSE(second_ok);
    EXPECT_TRUE(lock.is_held());
    lock.unlock();

    Lock holder = a->make_lock(lock_name);
    holder.lock();
    std::promise<std::error_code> later;
    lock.async_lock([&](std::error_code ec) { later.set_value(ec); });
    first.emit(boost::asio::cancellation_type::terminal);
    holder.unlock();
    auto l = later.get_future();
    EXPECT_EQ(get_within(l, 30s), std::error_code{}) << "the earlier acquire's signal stopped a later one";
    EXPECT_TRUE(lock.is_held());
    lock.unlock();
}

TEST_P(Conformance, NonOwnerReleaseIsRefused) {
    const auto lock_name = name();
    auto a = env_->client();
    auto b = env_->client();
    auto c = env_->client();
    Lock holder = a->make_lock(lock_name);
    Lock other = b->make_lock(lock_name);
    Lock probe = c->make_lock(lock_name);
    holder.lock();
    auto refused = other.async_unlock(boost::asio::use_future);
    EXPECT_EQ(get_within(refused), errc::not_held);
    EXPECT_TRUE(holder.is_held());
    EXPECT_FALSE(probe.try_lock()) << "another client's release freed the lock";
    holder.unlock();
}

TEST_P(Conformance, DeadOwnerIsReleased) {
    if (const auto why = env_->cannot_crash()) GTEST_SKIP() << *why;
    const auto lock_name = name();
    auto a = env_->crashable_client();
    auto b = env_->client();
    Lock holder = a->make_lock(lock_name);
    Lock next = b->make_lock(lock_name);
    holder.lock();
    const auto token = holder.fencing_token();
    env_->crash(*a);
    EXPECT_TRUE(next.try_lock_for(30s)) << "not released at " << to_string(next.capabilities().dead_holder);
    if (next.capabilities().fencing_tokens) {
        EXPECT_GT(next.fencing_token(), token);
    }
    next.unlock();
}

TEST_P(Conformance, LossIsReportedToTheHolder) {
    const auto lock_name = name();
    auto a = env_->client();
    Lock holder = a->make_lock(lock_name);
    if (!holder.capabilities().reports_loss) GTEST_SKIP() << holder.capabilities().limits;
    holder.lock();
    auto lost = holder.async_wait_lost(boost::asio::use_future);
    env_->steal(lock_name);
    EXPECT_TRUE(is_lock_lost(get_within(lost, 30s)));
    EXPECT_FALSE(holder.is_held());
}

TEST_P(Conformance, EveryOnLostCallbackIsToldOnceTheLockSaysItIsNotHeld) {
    const auto lock_name = name();
    auto a = env_->client();
    Lock holder = a->make_lock(lock_name);
    if (!holder.capabilities().reports_loss) GTEST_SKIP() << holder.capabilities().limits;
    // Callbacks are a list (each registered one is called), posted once the
    // lock's state says it is no longer held.
    std::promise<std::pair<std::error_code, bool>> first, second;
    holder.on_lost([&](std::error_code ec) { first.set_value({ec, holder.is_held()}); });
    holder.on_lost([&](std::error_code ec) { second.set_value({ec, holder.is_held()}); });
    holder.lock();
    env_->steal(lock_name);
    for (auto* p : {&first, &second}) {
        auto f = p->get_future();
        const auto [ec, held] = get_within(f, 30s);
        EXPECT_TRUE(is_lock_lost(ec)) << ec.message();
        EXPECT_FALSE(held);
    }
}

TEST_P(Conformance, CancellingOneLossWaiterLeavesTheOthersWaiting) {
    const auto lock_name = name();
    auto a = env_->client();
    Lock holder = a->make_lock(lock_name);
    holder.lock();
    boost::asio::cancellation_signal cancel_first;
    auto first = holder.async_wait_lost(boost::asio::bind_cancellation_slot(cancel_first.slot(), boost::asio::use_future));
    auto second = holder.async_wait_lost(boost::asio::use_future);
    cancel_first.emit(boost::asio::cancellation_type::terminal);
    EXPECT_EQ(get_within(first), std::errc::operation_canceled);
    // The second waiter is still waiting: the release completes it, with no error.
    holder.unlock();
    EXPECT_EQ(get_within(second), std::error_code{});
}

TEST_P(Conformance, BadNamesAreRefusedWithAReason) {
    auto a = env_->client();
    for (const char* bad : {"", "a/b", "white space", "..", "ünï"}) {
        try {
            a->make_lock(bad);
            ADD_FAILURE() << "accepted '" << bad << "'";
        } catch (const zklock::error& e) {
            EXPECT_EQ(e.code(), errc::invalid_path) << bad;
            EXPECT_GT(std::string(e.what()).size(), 10u);
        }
    }
    EXPECT_THROW(a->make_lock(std::string(201, 'x')), zklock::error);
}

TEST_P(Conformance, GrantsFollowArrivalOrderWhenFair) {
    const auto lock_name = name();
    auto a = env_->client();
    Lock holder = a->make_lock(lock_name);
    if (!holder.capabilities().fair_fifo) GTEST_SKIP() << "not FIFO by design: " << holder.capabilities().limits;
    holder.lock();
    // The grants as the waiters record them, between the releases the test
    // notes before it makes them: a waiter that overtook another is noted
    // granted before it, one granted beside a holder is crowded.
    zklock::test::GrantLog log;
    log.holds("holder");
    std::vector<std::unique_ptr<LockService>> services;
    std::vector<Lock> waiters;
    std::vector<std::future<std::error_code>> grants;
    std::vector<std::string> expected{"-holder"};
    for (int i = 0; i < 4; ++i) {
        services.push_back(env_->client());
        waiters.push_back(services.back()->make_lock(lock_name));
        grants.push_back(log.lock(waiters.back(), "w" + std::to_string(i)));
        ASSERT_TRUE(wait_until([&] { return env_->leftovers(lock_name) == static_cast<std::size_t>(i + 2); }));
        std::string how;
        ASSERT_TRUE(env_->waits(*services.back(), waiters.back(), lock_name, static_cast<std::size_t>(i + 1), how))
            << "waiter " << i << " never seen waiting: " << how;
        expected.push_back("+w" + std::to_string(i));
        expected.push_back("-w" + std::to_string(i));
    }
    log.releasing("holder");
    holder.unlock();
    for (std::size_t i = 0; i < waiters.size(); ++i) {
        EXPECT_FALSE(get_within(grants[i]));
        for (std::size_t j = i + 1; j < waiters.size(); ++j)
            EXPECT_EQ(grants[j].wait_for(0ms), std::future_status::timeout) << j << " overtook " << i;
        log.releasing("w" + std::to_string(i));
        waiters[i].unlock();
    }
    EXPECT_EQ(log.entries(), expected) << "granted out of arrival order";
    EXPECT_TRUE(log.crowded().empty()) << log.crowded().front();
}

std::vector<std::string> backends() {
    std::vector<std::string> out;
    for (const auto& [n, f] : registry()) out.push_back(n);
    return out;
}

INSTANTIATE_TEST_SUITE_P(Backends, Conformance, ::testing::ValuesIn(backends()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                             std::string n = info.param;
                             std::replace(n.begin(), n.end(), '-', '_');
                             return n;
                         });

} // namespace
} // namespace zklock::conformance
