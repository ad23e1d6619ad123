// zklock's own recipes on one path: every recipe sees every other one's nodes
// (detail/dialect.hpp), so a Mutex, a SharedMutex and a Semaphore that share a
// path by mistake still never hold beside one another.
#include "grant_support.hpp"
#include "support.hpp"

#include <zklock/semaphore.hpp>
#include <zklock/shared_mutex.hpp>

using namespace zklock;
using namespace zklock::test;

namespace {

class MixedRecipesTest : public ServerTest {
protected:
    void wait_for_queue(const std::string& path, std::size_t n) {
        auto observer = connect();
        std::size_t seen = 0;
        EXPECT_TRUE(wait_until([&] { return (seen = list_contenders(*observer, path).size()) == n; }))
            << seen << " contenders, not " << n;
    }
};

} // namespace

TEST_F(MixedRecipesTest, AMutexAndASharedMutexReaderOnOnePathTakeTurns) {
    const auto path = lock_path();
    const auto reader_granted = grant::make();
    const auto mutex_granted = grant::make();
    auto s1 = connect();
    auto s2 = connect();
    auto s3 = connect();
    Mutex first(*s1, path);
    SharedMutex reader(*s2, path);
    Mutex last(*s3, path);

    first.lock();
    reader.async_lock_shared(on_grant(reader_granted));
    wait_for_queue(path, 2);
    last.async_lock(on_grant(mutex_granted));
    wait_for_queue(path, 3);

    const auto first_leave = monotonic_ns();
    first.unlock();
    ASSERT_FALSE(get_within(reader_granted->result));
    const auto reader_leave = monotonic_ns();
    reader.unlock_shared();
    ASSERT_FALSE(get_within(mutex_granted->result));
    last.unlock();
    EXPECT_LT(first_leave, reader_granted->at.load()) << "a reader held beside a Mutex holder";
    EXPECT_LT(reader_leave, mutex_granted->at.load()) << "a Mutex held beside a reader";
}

TEST_F(MixedRecipesTest, ASemaphoreWaitsForAReaderAhead) {
    const auto path = lock_path();
    auto s1 = connect();
    auto s2 = connect();
    SharedMutex reader(*s1, path);
    Semaphore semaphore(*s2, path, 2);
    reader.lock_shared();
    // Position 1 of 2 permits, but a reader is not one of the semaphore's leases.
    EXPECT_FALSE(semaphore.try_acquire()) << "a semaphore lease was granted beside a reader";
    reader.unlock_shared();
    auto lease = semaphore.try_acquire();
    EXPECT_TRUE(lease);
}
