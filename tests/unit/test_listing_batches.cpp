// Listings shared by one session's contenders in one directory
// (fsm/listing_batches.hpp): at most one outstanding per directory, and every
// call answered by a listing sent after it was made.
#include "fsm/listing_batches.hpp"

#include <zookeeper.h>

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

using zklock::detail::listing_batches;

namespace {

// What the calls were answered with, in the order they were answered: "name:rc:children".
struct answers {
    std::vector<std::string> got;
    listing_batches::answer_fn to(std::string name) {
        return [this, name = std::move(name)](int rc, const zklock::detail::children_listing& children) {
            std::string line = name + ":" + std::to_string(rc) + ":";
            for (const auto& c : children.children()) line += c + ",";
            got.push_back(line);
        };
    }
};

} // namespace

TEST(ListingBatches, OnlyTheFirstCallSendsAndTheCallsMadeMeanwhileShareTheNextListing) {
    listing_batches b;
    answers a;
    EXPECT_TRUE(b.ask("/locks/x", a.to("first")));  // sent now: listing 1
    EXPECT_FALSE(b.ask("/locks/x", a.to("second")));  // made after listing 1 was sent
    EXPECT_FALSE(b.ask("/locks/x", a.to("third")));
    EXPECT_EQ(b.waiting("/locks/x"), 3u);

    // Listing 1 answers only the call made before it was sent: the others'
    // nodes may be missing from it. The next is to be sent for both of them.
    EXPECT_TRUE(b.answer("/locks/x", ZOK, {"n-1"}));
    EXPECT_EQ(a.got, (std::vector<std::string>{"first:0:n-1,"}));
    EXPECT_EQ(b.waiting("/locks/x"), 2u);

    EXPECT_FALSE(b.answer("/locks/x", ZOK, {"n-1", "n-2", "n-3"}));
    EXPECT_EQ(a.got, (std::vector<std::string>{"first:0:n-1,", "second:0:n-1,n-2,n-3,", "third:0:n-1,n-2,n-3,"}));
    EXPECT_EQ(b.outstanding(), 0u);
    EXPECT_TRUE(b.ask("/locks/x", a.to("later")));  // nothing outstanding: sent at once
}

TEST(ListingBatches, DirectoriesAreBatchedApart) {
    listing_batches b;
    answers a;
    EXPECT_TRUE(b.ask("/locks/x", a.to("x")));
    EXPECT_TRUE(b.ask("/locks/y", a.to("y")));
    EXPECT_EQ(b.outstanding(), 2u);
    EXPECT_FALSE(b.answer("/locks/y", ZOK, {"y-1"}));
    EXPECT_EQ(a.got, (std::vector<std::string>{"y:0:y-1,"}));
    EXPECT_EQ(b.waiting("/locks/x"), 1u);
}

TEST(ListingBatches, ACallMadeWhileAnAnswerIsDeliveredWaitsForTheNextListing) {
    listing_batches b;
    answers a;
    bool asked_again = false;
    ASSERT_TRUE(b.ask("/locks/x", [&](int, const zklock::detail::children_listing&) {
        // A contender that lists again on this answer (its predecessor went):
        // the answer was sent before this call, so it may not do.
        asked_again = !b.ask("/locks/x", a.to("again"));
    }));
    EXPECT_TRUE(b.answer("/locks/x", ZOK, {"n-1"}));  // the next is to be sent
    EXPECT_TRUE(asked_again);
    EXPECT_TRUE(a.got.empty());
    EXPECT_FALSE(b.answer("/locks/x", ZOK, {"n-2"}));
    EXPECT_EQ(a.got, (std::vector<std::string>{"again:0:n-2,"}));
}

TEST(ListingBatches, AFailedListingAnswersItsCallsWithItsCode) {
    listing_batches b;
    answers a;
    ASSERT_TRUE(b.ask("/locks/x", a.to("first")));
    ASSERT_FALSE(b.ask("/locks/x", a.to("second")));
    // A lost connection answers the outstanding listing; the next one is sent
    // (it waits in the C client, or fails too, until the session is back).
    EXPECT_TRUE(b.answer("/locks/x", ZCONNECTIONLOSS, {}));
    EXPECT_EQ(a.got, (std::vector<std::string>{"first:" + std::to_string(ZCONNECTIONLOSS) + ":"}));
    EXPECT_FALSE(b.answer("/locks/x", ZOK, {"n-1"}));
    EXPECT_EQ(a.got.back(), "second:0:n-1,");
}

TEST(ListingBatches, AnAnswerForAPathWithNothingOutstandingIsIgnored) {
    listing_batches b;
    EXPECT_FALSE(b.answer("/locks/x", ZOK, {"n-1"}));
    EXPECT_EQ(b.outstanding(), 0u);
}
