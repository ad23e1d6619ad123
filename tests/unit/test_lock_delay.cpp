// Lock-delay's decisions: the clean-release record in a directory's data, and
// whether a handover was clean.
#include "fsm/lock_delay.hpp"

#include <gtest/gtest.h>

using namespace zklock::detail;

TEST(LockDelay, TheRecordKeepsWhatTheDirectoryHeld) {
    EXPECT_EQ(with_release_marker("", 7), "zklock released=7");
    EXPECT_EQ(with_release_marker("permits=3", 7), "permits=3\nzklock released=7");
    EXPECT_EQ(with_release_marker("permits=3\nzklock released=7", -2147483648), "permits=3\nzklock released=-2147483648");
    const auto d = split_release_marker("permits=3\nzklock released=42");
    EXPECT_EQ(d.base, "permits=3");
    EXPECT_EQ(d.released, 42);
    EXPECT_EQ(split_release_marker("zklock released=5").base, "");
    EXPECT_EQ(split_release_marker("permits=3").released, std::nullopt);
    // Not a record: inside another line, or not a number.
    EXPECT_EQ(split_release_marker("xzklock released=5").released, std::nullopt);
    EXPECT_EQ(split_release_marker("zklock released=5x").released, std::nullopt);
}

namespace {
handover later(std::vector<std::int32_t> before, std::vector<std::int32_t> now, std::optional<std::int32_t> released,
               bool exclusive = true) {
    handover h;
    h.ahead_before = std::move(before);
    h.ahead_now = std::move(now);
    h.now.released = released;
    h.exclusive = exclusive;
    return h;
}
} // namespace

TEST(LockDelay, AMutexHandoverIsCleanWhenTheNewestThatLeftRecordedItsRelease) {
    EXPECT_TRUE(clean_handover(later({4}, {}, 4)));
    EXPECT_FALSE(clean_handover(later({4}, {}, 3))) << "the holder went without a record: a loss";
    EXPECT_FALSE(clean_handover(later({4}, {}, std::nullopt)));
    // Two ahead left: the newer held last (after the older), and released cleanly.
    EXPECT_TRUE(clean_handover(later({4, 6}, {}, 6)));
    // The older released cleanly, the newer (which then held) went without a record.
    EXPECT_FALSE(clean_handover(later({4, 6}, {}, 4)));
}

TEST(LockDelay, SharedHoldersAreJudgedConservatively) {
    EXPECT_TRUE(clean_handover(later({4, 6}, {6}, 4, false)));
    EXPECT_FALSE(clean_handover(later({4, 6}, {}, 6, false))) << "two left: one may have died";
    EXPECT_FALSE(clean_handover(later({4, 6}, {6}, 5, false)));
}

TEST(LockDelay, AFirstListingIsJudgedByTheDirectoryReadBeforeTheCreate) {
    handover h;
    EXPECT_FALSE(clean_handover(h)) << "not read: a doubt is a loss";
    h.before = directory_before{};
    EXPECT_TRUE(clean_handover(h)) << "no directory: nobody held";
    h.before->exists = true;
    EXPECT_TRUE(clean_handover(h)) << "never a child";
    h.before->cversion = 8;
    h.before->pzxid = 100;
    h.before->mzxid = 90;
    EXPECT_FALSE(clean_handover(h)) << "the last node went without a record";
    h.before->mzxid = 100;
    h.before->data.released = 7;
    EXPECT_TRUE(clean_handover(h)) << "the last child change was a clean release";
    h.before->num_children = 1;
    EXPECT_FALSE(clean_handover(h)) << "a node there before our create is gone now";
    h.ahead_now = {9};
    EXPECT_TRUE(clean_handover(h)) << "it is still ahead of us (a semaphore's other holder)";
}
