#include <zklock/leader_election.hpp>
#include <zklock/multi_mutex.hpp>
#include <zklock/mutex.hpp>
#include <zklock/shared_mutex.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <concepts>
#include <mutex>
#include <shared_mutex>

namespace {

template <class L>
concept BasicLockable = requires(L& l) {
    l.lock();
    { l.unlock() } noexcept;
};
template <class L>
concept Lockable = BasicLockable<L> && requires(L& l) {
    { l.try_lock() } -> std::convertible_to<bool>;
};
template <class L>
concept TimedLockable = Lockable<L> && requires(L& l) {
    { l.try_lock_for(std::chrono::milliseconds(1)) } -> std::convertible_to<bool>;
    { l.try_lock_until(std::chrono::steady_clock::now()) } -> std::convertible_to<bool>;
    { l.try_lock_until(std::chrono::system_clock::now()) } -> std::convertible_to<bool>;
};

static_assert(TimedLockable<zklock::Mutex>);
static_assert(TimedLockable<zklock::RecursiveMutex>);
static_assert(TimedLockable<zklock::SharedMutex>);
static_assert(TimedLockable<zklock::MultiMutex>);
static_assert(!std::is_copy_constructible_v<zklock::MultiMutex>);
// Every recipe moves (a place in a queue is an object the caller may keep in a container).
static_assert(std::is_nothrow_move_constructible_v<zklock::Mutex>);
static_assert(std::is_nothrow_move_constructible_v<zklock::QueueLock>);
static_assert(std::is_nothrow_move_constructible_v<zklock::MultiMutex>);
static_assert(std::is_nothrow_move_constructible_v<zklock::SharedMutex>);
static_assert(std::is_nothrow_move_constructible_v<zklock::LeaderElection>);
static_assert(TimedLockable<zklock::QueueLock>);
template <class L>
concept SharedTimedLockable = requires(L& l) {
    l.lock_shared();
    { l.unlock_shared() } noexcept;
    { l.try_lock_shared() } -> std::convertible_to<bool>;
    { l.try_lock_shared_for(std::chrono::milliseconds(1)) } -> std::convertible_to<bool>;
    { l.try_lock_shared_until(std::chrono::steady_clock::now()) } -> std::convertible_to<bool>;
};
static_assert(SharedTimedLockable<zklock::SharedMutex>);
static_assert(!std::is_copy_constructible_v<zklock::Mutex>);
static_assert(!std::is_copy_constructible_v<zklock::Session>);
static_assert(std::is_error_code_enum_v<zklock::errc>);
// What std::unique_lock / std::scoped_lock need compiles:
[[maybe_unused]] void uses(zklock::Mutex& a, zklock::RecursiveMutex& b) {
    std::unique_lock ul(a, std::defer_lock);
    (void)ul.try_lock_for(std::chrono::seconds(1));
    std::scoped_lock sl(a, b);
}
[[maybe_unused]] void uses_shared(zklock::SharedMutex& m) {
    std::shared_lock reader(m);
    (void)reader.try_lock_for(std::chrono::seconds(1));
}

} // namespace

// No server is needed: every call below fails before any request is sent.
zklock::SessionOptions nowhere() {
    zklock::SessionOptions o;
    o.connect = "127.0.0.1:1";
    return o;
}

TEST(Concepts, InvalidPathIsRefusedBeforeAnyServerCall) {
    zklock::Session session(nowhere());
    EXPECT_THROW(zklock::Mutex(session, "relative/path"), zklock::error);
    try {
        zklock::Mutex m(session, "/a//b");
        FAIL() << "accepted /a//b";
    } catch (const zklock::error& e) {
        EXPECT_EQ(e.code(), zklock::errc::invalid_path);
        EXPECT_NE(std::string(e.what()).find("/a//b"), std::string::npos);
    }
}

TEST(Concepts, UniqueLockReportsTheLockError) {
    zklock::Session session(nowhere());
    std::error_code ec;
    zklock::Mutex m(session, "/trailing/", {}, ec);
    EXPECT_EQ(ec, zklock::errc::invalid_path);
    std::unique_lock ul(m, std::defer_lock);
    try {
        ul.lock();
        FAIL() << "locked an invalid path";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), zklock::errc::invalid_path);
    }
    EXPECT_FALSE(ul.owns_lock());
    EXPECT_FALSE(m.is_held());
}

TEST(Concepts, ABadLockSetIsRefusedBeforeAnyServerCallAndEveryAcquireSaysWhy) {
    zklock::Session session(nowhere());
    try {
        zklock::MultiMutex m(session, {"/locks/a", "/locks/a/b"});
        FAIL() << "accepted nested lock paths";
    } catch (const zklock::error& e) {
        EXPECT_EQ(e.code(), zklock::errc::invalid_path);
        EXPECT_NE(std::string(e.what()).find("'/locks/a/b' is under '/locks/a'"), std::string::npos) << e.what();
    }
    std::error_code ec;
    zklock::MultiMutex twice(session, {"/locks/a", "/locks/a"}, {}, ec);
    EXPECT_EQ(ec, zklock::errc::invalid_path);
    std::error_code lock_ec;
    EXPECT_FALSE(twice.try_lock_for(std::chrono::seconds(1), lock_ec));
    EXPECT_EQ(lock_ec, zklock::errc::invalid_path);
    EXPECT_NE(twice.failure_detail().find("twice"), std::string::npos);
    EXPECT_FALSE(twice.is_held());
}

// A permit that holds nothing answers its asynchronous release and loss wait
// with errc::not_held, on the handler's executor (not inside the call).
#include <zklock/semaphore.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/bind_executor.hpp>

TEST(IdlePermit, AsyncUnlockAndWaitLostCompleteWithNotHeld) {
    zklock::Session session(nowhere());
    zklock::Semaphore slots(session, "/slots", 2);
    auto idle = slots.permit();
    boost::asio::io_context ioc;
    std::error_code released, lost;
    bool released_called = false, lost_called = false;
    idle.async_unlock(boost::asio::bind_executor(ioc, [&](std::error_code ec) {
        released = ec;
        released_called = true;
    }));
    idle.async_wait_lost(boost::asio::bind_executor(ioc, [&](std::error_code ec) {
        lost = ec;
        lost_called = true;
    }));
    EXPECT_FALSE(released_called) << "completed inside the initiating call, not on the handler's executor";
    ioc.run();
    ASSERT_TRUE(released_called);
    ASSERT_TRUE(lost_called);
    EXPECT_EQ(released, zklock::errc::not_held);
    EXPECT_EQ(lost, zklock::errc::not_held);
    auto moved_to(std::move(idle));
    EXPECT_FALSE(moved_to.is_held());
}

// Every recipe reports bad input in an error_code instead of throwing, and
// every acquire of the refused object then fails with it.
TEST(Concepts, EveryRecipeHasAnErrorCodeConstructor) {
    zklock::Session session(nowhere());
    std::error_code ec;
    zklock::Semaphore zero(session, "/slots", 0, {}, ec);
    EXPECT_EQ(ec, zklock::errc::invalid_argument);
    auto refused = zero.permit();
    std::error_code lock_ec;
    EXPECT_FALSE(refused.try_lock(lock_ec));
    EXPECT_EQ(lock_ec, zklock::errc::invalid_argument);
    EXPECT_NE(refused.failure_detail().find("at least 1"), std::string::npos) << refused.failure_detail();

    zklock::Semaphore bad_path(session, "slots", 2, {}, ec);
    EXPECT_EQ(ec, zklock::errc::invalid_path);
    EXPECT_EQ(bad_path.permit().try_lock(lock_ec), false);
    EXPECT_EQ(lock_ec, zklock::errc::invalid_path);

    zklock::SharedMutex rw(session, "/rw/", {}, ec);
    EXPECT_EQ(ec, zklock::errc::invalid_path);
    EXPECT_FALSE(rw.reader().try_lock(lock_ec));
    EXPECT_EQ(lock_ec, zklock::errc::invalid_path);

    zklock::LeaderElection election(session, "/e", std::string(2'000'000, 'x'), {}, ec);
    EXPECT_EQ(ec, zklock::errc::invalid_argument);
    election.campaign(lock_ec);
    EXPECT_EQ(lock_ec, zklock::errc::invalid_argument);

    zklock::RecursiveMutex recursive(session, "//", {}, ec);
    EXPECT_EQ(ec, zklock::errc::invalid_path);
}
