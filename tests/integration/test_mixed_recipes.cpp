// zklock's own recipes on one path: every recipe sees every other one's nodes
// (src/fsm/dialect.hpp), so a Mutex, a SharedMutex and a Semaphore that share a
// path by mistake still never hold beside one another, in any naming they write.
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
        wait_for_contenders(*observer, path, n, 10s);
    }

    // The exclusive side of a Mutex (itself) or of a SharedMutex (its writer).
    static Lock& last_lock(Mutex& m) { return m; }
    static Lock& last_lock(SharedMutex& m) { return m.writer(); }

    // `first` holds; `reader` queues for the shared side, then `last` for the
    // exclusive one: each is granted only after the one ahead of it has left.
    template <class Last>
    void expect_turns(const std::string& path, Mutex& first, SharedMutex& reader, Last& last,
                      const char* reader_beside_first, const char* last_beside_reader) {
        const auto reader_granted = grant::make();
        const auto last_granted = grant::make();
        first.lock();
        reader.reader().async_lock(on_grant(reader_granted));
        wait_for_queue(path, 2);
        last_lock(last).async_lock(on_grant(last_granted));
        wait_for_queue(path, 3);

        const auto first_leave = monotonic_ns();
        first.unlock();
        ASSERT_FALSE(get_within(reader_granted->result));
        const auto reader_leave = monotonic_ns();
        reader.unlock_shared();
        ASSERT_FALSE(get_within(last_granted->result));
        last.unlock();
        EXPECT_LT(first_leave, reader_granted->at.load()) << reader_beside_first;
        EXPECT_LT(reader_leave, last_granted->at.load()) << last_beside_reader;
    }
};

} // namespace

TEST_F(MixedRecipesTest, AMutexAndASharedMutexReaderOnOnePathTakeTurns) {
    const auto path = lock_path();
    auto s1 = connect();
    auto s2 = connect();
    auto s3 = connect();
    Mutex first(*s1, path);
    SharedMutex reader(*s2, path);
    Mutex last(*s3, path);
    expect_turns(path, first, reader, last, "a reader held beside a Mutex holder", "a Mutex held beside a reader");
}

TEST_F(MixedRecipesTest, ASemaphoreWaitsForAReaderAhead) {
    const auto path = lock_path();
    auto s1 = connect();
    auto s2 = connect();
    SharedMutex reader(*s1, path);
    Semaphore semaphore(*s2, path, 2);
    reader.lock_shared();
    // Position 1 of 2 permits, but a reader is not one of the semaphore's holders.
    auto permit = semaphore.permit();
    EXPECT_FALSE(permit.try_lock()) << "a semaphore permit was granted beside a reader";
    // unlock_shared() does not wait for the delete, and another session's try
    // may reach the server first: wait until the reader's node is gone.
    std::promise<std::error_code> released;
    auto gone = released.get_future();
    reader.reader().async_unlock([&](std::error_code ec) { released.set_value(ec); });
    ASSERT_FALSE(get_within(gone));
    EXPECT_TRUE(permit.try_lock());
}

// Each naming (MutexOptions::names) is read back with its kind: zklock clients
// writing different namings on one path still queue together.
TEST_F(MixedRecipesTest, ClientsWritingDifferentNamingsTakeTurns) {
    const auto path = lock_path();
    auto s1 = connect();
    auto s2 = connect();
    auto s3 = connect();
    MutexOptions kazoo, curator;
    kazoo.names = node_names::kazoo;
    curator.names = node_names::curator;
    Mutex first(*s1, path, kazoo);
    SharedMutex reader(*s2, path, curator);
    SharedMutex writer(*s3, path, kazoo);
    expect_turns(path, first, reader, writer, "a __READ__ reader held beside a __lock__ Mutex",
                 "a __lock__ writer held beside a __READ__ reader");
}

// No peer semaphore queues on lock nodes: a Semaphore writes only zklock's names.
TEST_F(MixedRecipesTest, ASemaphoreRefusesAPeersNaming) {
    auto s = connect();
    for (const auto names : {node_names::curator, node_names::kazoo}) {
        SemaphoreOptions options;
        options.names = names;
        try {
            Semaphore semaphore(*s, lock_path(), 2, options);
            ADD_FAILURE() << "a Semaphore accepted " << to_string(names) << "'s names";
        } catch (const error& e) {
            EXPECT_EQ(e.code(), errc::invalid_argument) << e.what();
        }
    }
}
