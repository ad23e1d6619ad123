// Lock-delay's decisions: the clean-release record in a directory's data, and
// whether a handover was clean.
#include "fsm/lock_delay.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

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
    EXPECT_FALSE(clean_handover(h)) << "no directory: never made, or reaped after a loss with its record";
    h.before->exists = true;
    EXPECT_FALSE(clean_handover(h)) << "never a child: it may have been made again after a reap";
    h.before->cversion = 8;
    h.before->pzxid = 100;
    h.before->mzxid = 90;
    h.checked = child_counters{9, 1};  // our create since the read
    EXPECT_FALSE(clean_handover(h)) << "the last node went without a record";
    h.before->mzxid = 100;
    h.before->data.released = 7;
    EXPECT_TRUE(clean_handover(h)) << "the last child change was a clean release";
    h.checked.reset();
    EXPECT_FALSE(clean_handover(h)) << "the directory not read at the check: what came since cannot be told";
    h.checked = child_counters{11, 1};
    EXPECT_FALSE(clean_handover(h)) << "a node made and gone (one create, one delete) besides our create";
    h.ahead_now = {8};
    h.checked = child_counters{10, 2};
    EXPECT_TRUE(clean_handover(h)) << "made since the read and still ahead of us (a semaphore's other holder)";
    h.before->cversion = 2147483647;
    h.checked = child_counters{-2147483647, 2};
    EXPECT_TRUE(clean_handover(h)) << "the same across the cversion's wrap";
    h.checked = child_counters{-2147483645, 2};
    EXPECT_FALSE(clean_handover(h)) << "and one made and gone across it";
    h.ahead_now.clear();
    h.before->cversion = 8;
    h.before->num_children = 1;
    h.checked = child_counters{9, 1};
    EXPECT_FALSE(clean_handover(h)) << "a node there before our create is gone now";
    h.ahead_now = {7};
    h.checked = child_counters{9, 2};
    EXPECT_TRUE(clean_handover(h)) << "it is still ahead of us (a semaphore's other holder)";
}

namespace {
// A zklock node of sequence `seq` (a guid of its own, as every contender's).
std::string node_of(int seq) {
    char name[80];
    std::snprintf(name, sizeof name, "_c_00000000-0000-4000-8000-%012d-lock-%010d", seq, seq);
    return name;
}
} // namespace

TEST(LockDelay, AContenderKeepsTheSequencesAheadOfItInQueueOrder) {
    // Listed out of order, as the server lists them; a stranger is not in the queue.
    const std::vector<std::string> children{node_of(7), "stranger", node_of(3), node_of(5), node_of(9)};
    const children_listing listing(children);
    EXPECT_EQ(sequences_ahead(listing, node_of(9)).to_vector(), (std::vector<std::int32_t>{3, 5, 7}));
    EXPECT_EQ(sequences_ahead(listing, node_of(3)).to_vector(), std::vector<std::int32_t>{});
    EXPECT_EQ(sequences_ahead(listing, node_of(4)).to_vector(), std::vector<std::int32_t>{}) << "not in the listing";
    // Granted by one deletion: that contender is gone, the others are still ahead.
    const auto ahead = sequences_ahead(listing, node_of(9));
    const auto now = without(ahead, node_of(5));
    EXPECT_EQ(now.to_vector(), (std::vector<std::int32_t>{3, 7}));
    EXPECT_EQ(without(now, node_of(5)).to_vector(), (std::vector<std::int32_t>{3, 7})) << "gone once";
    EXPECT_EQ(without(now, node_of(11)).to_vector(), (std::vector<std::int32_t>{3, 7})) << "never ahead of us";
    EXPECT_EQ(ahead.to_vector(), (std::vector<std::int32_t>{3, 5, 7})) << "the list it was taken from stays";
}

TEST(LockDelay, TheContendersOfOneListingShareItsSequencesInsteadOfCopyingThem) {
    // A long queue answered by one listing (a session's shared listing answers
    // every newcomer that waited for it): each waiter far enough back keeps
    // the front of the listing's one list of sequences, not a copy of its own.
    std::vector<std::string> children;
    for (int seq = 0; seq < 300; ++seq) children.push_back(node_of(seq));
    const children_listing listing(children);
    const auto far = sequences_ahead(listing, node_of(250));
    const auto farther = sequences_ahead(listing, node_of(299));
    ASSERT_NE(far.listing(), nullptr);
    EXPECT_EQ(far.listing(), listing.sequences().get());
    EXPECT_EQ(farther.listing(), listing.sequences().get());
    const auto seqs = far.to_vector();
    ASSERT_EQ(seqs.size(), 250u);
    for (std::size_t i = 0; i < seqs.size(); ++i) ASSERT_EQ(seqs[i], static_cast<std::int32_t>(i));
    // Granted by one deletion, a waiter drops that one and still shares the rest.
    const auto granted = without(farther, node_of(298));
    EXPECT_EQ(granted.listing(), listing.sequences().get());
    const auto left = granted.to_vector();
    ASSERT_EQ(left.size(), 298u);
    EXPECT_EQ(left.back(), 297);
    // Near the front, a few sequences are copied: they do not keep the whole listing alive.
    const auto near = sequences_ahead(listing, node_of(2));
    EXPECT_NE(near.listing(), listing.sequences().get());
    EXPECT_EQ(near.to_vector(), (std::vector<std::int32_t>{0, 1}));
}

TEST(LockDelay, TheSequencesAheadOutliveTheListingTheyCameFrom) {
    // A shared listing's answer lives only while it is delivered
    // (listing_batches::answer); a waiter keeps its sequences until its grant.
    queue_ahead far;
    queue_ahead near;
    {
        std::vector<std::string> children;
        for (int seq = 0; seq < 100; ++seq) children.push_back(node_of(seq));
        const children_listing listing(children);
        far = sequences_ahead(listing, node_of(90));
        near = sequences_ahead(listing, node_of(3));
    }
    const auto seqs = far.to_vector();
    ASSERT_EQ(seqs.size(), 90u);
    EXPECT_EQ(seqs.front(), 0);
    EXPECT_EQ(seqs.back(), 89);
    EXPECT_EQ(without(near, node_of(1)).to_vector(), (std::vector<std::int32_t>{0, 2}));
}
