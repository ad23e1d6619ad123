// QueueWatch: the queue of a lock listed again after each change, on a real server.
#include "support.hpp"

#include <zklock/queue_lock.hpp>
#include <zklock/queue_watch.hpp>
#include <zklock/testing/faults.hpp>

#include <boost/asio/use_future.hpp>

#include <string>
#include <vector>

using namespace zklock;
using namespace zklock::test;

namespace {

class QueueWatchTest : public ServerTest {};

std::vector<std::string> nodes_of(const queue_listing& l) {
    std::vector<std::string> out;
    for (const auto& c : l.contenders) out.push_back(c.node);
    return out;
}

// async_next as a future: the listing, or a std::system_error with the code.
std::future<queue_listing> next_of(QueueWatch& watch) {
    auto p = std::make_shared<std::promise<queue_listing>>();
    watch.async_next([p](std::error_code ec, queue_listing l) {
        if (ec) p->set_exception(std::make_exception_ptr(std::system_error(ec)));
        else p->set_value(std::move(l));
    });
    return p->get_future();
}

std::string name_of(const Mutex& m) { return m.node_path().substr(m.node_path().rfind('/') + 1); }

// Listings from `watch` until one shows `want` (the lock directory's creation
// can come as a change of its own, before its first node); fails after five.
queue_listing until_nodes(QueueWatch& watch, const std::vector<std::string>& want) {
    queue_listing l;
    for (int i = 0; i < 5; ++i) {
        auto f = next_of(watch);
        l = get_within(f);
        if (nodes_of(l) == want) return l;
    }
    ADD_FAILURE() << "the watch never listed the queue as expected";
    return l;
}

TEST_F(QueueWatchTest, EachNextListsTheQueueOnceItChangedAndOnlyThen) {
    const auto path = lock_path();
    auto s = connect();
    auto s1 = connect();
    auto s2 = connect();
    QueueWatch watch(*s, path);
    EXPECT_EQ(watch.path(), path);
    const auto absent = watch.next();  // the first lists at once, the path absent
    EXPECT_TRUE(absent.contenders.empty());
    EXPECT_FALSE(absent.path_exists);
    EXPECT_FALSE(list_queue(*s, path).path_exists);

    Mutex holder(*s1, path), waiter(*s2, path);
    holder.lock();
    const auto first = until_nodes(watch, {name_of(holder)});
    EXPECT_EQ(first.contenders.at(0).fencing_token, holder.fencing_token());
    EXPECT_EQ(first.contenders.at(0).owner_session, s1->session_id());
    EXPECT_TRUE(first.path_exists);
    EXPECT_TRUE(list_queue(*s, path).path_exists);

    // Nothing changes: the next waits. A next that listed without waiting for
    // a change would have been answered before this listing on the same
    // session (ZooKeeper answers a session's requests in order), so before
    // the waiter below queues: it would show the queue without the waiter,
    // which the check of its listing below refuses.
    auto pending = next_of(watch);
    EXPECT_EQ(nodes_of(list_queue(*s, path)), std::vector<std::string>{name_of(holder)});
    EXPECT_EQ(pending.wait_for(0ms), std::future_status::timeout) << "a next completed without a change";
    // A waiter queues: that change completes it, with the waiter in the listing.
    auto granted = waiter.async_lock(boost::asio::use_future);
    ASSERT_TRUE(wait_until([&] { return !waiter.node_path().empty(); }));
    EXPECT_EQ(nodes_of(get_within(pending)), (std::vector<std::string>{name_of(holder), name_of(waiter)}));

    // Changes while nobody waits on the watch come as one listing, at once.
    holder.unlock();
    EXPECT_FALSE(get_within(granted));
    EXPECT_EQ(nodes_of(watch.next()), std::vector<std::string>{name_of(waiter)});

    // cancel() ends a pending next; the watch stays usable.
    auto cancelled = next_of(watch);
    watch.cancel();
    try {
        get_within(cancelled);
        ADD_FAILURE() << "a cancelled next gave a listing";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), std::errc::operation_canceled);
    }
    waiter.unlock();
    EXPECT_TRUE(until_nodes(watch, {}).contenders.empty());
}

TEST_F(QueueWatchTest, AfterItsSessionExpiredTheWatchListsWhatChangedMeanwhile) {
    const auto path = lock_path();
    auto s = connect();
    auto s1 = connect();
    Mutex holder(*s1, path);
    holder.lock();
    QueueWatch watch(*s, path);
    ASSERT_EQ(nodes_of(watch.next()), std::vector<std::string>{name_of(holder)});
    // The server forgets the watch with the session; the Session opens a new one.
    EventLog events(*s);
    zklock::testing::expire_session(*s);
    ASSERT_TRUE(events.wait_for(session_event::expired));
    holder.unlock();
    EXPECT_TRUE(until_nodes(watch, {}).contenders.empty());
}

TEST_F(QueueWatchTest, ABadPathIsRefusedAndASecondPendingNextIsAnError) {
    auto s = connect();
    try {
        QueueWatch bad(*s, "relative/path");
        ADD_FAILURE() << "a relative path was accepted";
    } catch (const zklock::error& e) {
        EXPECT_EQ(e.code(), errc::invalid_path);
    }
    const auto path = lock_path();
    QueueWatch watch(*s, path);
    watch.next();
    auto first = next_of(watch);
    auto second = next_of(watch);
    try {
        get_within(second);
        ADD_FAILURE() << "a second pending next was accepted";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::invalid_argument);
    }
    watch.cancel();
    EXPECT_THROW(get_within(first), std::system_error);
}

} // namespace
