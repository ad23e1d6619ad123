// The lock directories a session has seen (fsm/known_dirs.hpp): what an
// acquire in a directory sends ahead of its node's create.
#include "fsm/known_dirs.hpp"

#include <gtest/gtest.h>

using zklock::detail::known_dirs;

TEST(KnownDirs, ASeenDirectoryIsKnownUntilACreateFindsItGone) {
    known_dirs d;
    EXPECT_FALSE(d.contains("/locks/a"));
    d.seen("/locks/a");
    d.seen("/locks/a");
    EXPECT_TRUE(d.contains("/locks/a"));
    EXPECT_FALSE(d.contains("/locks/b"));
    EXPECT_EQ(d.size(), 1u);
    d.gone("/locks/a");
    EXPECT_FALSE(d.contains("/locks/a"));
}

TEST(KnownDirs, WhenFullItForgetsEveryDirectoryBeforeTakingANewOne) {
    known_dirs d(2);
    d.seen("/a");
    d.seen("/b");
    d.seen("/b");  // known already: nothing forgotten
    EXPECT_TRUE(d.contains("/a"));
    d.seen("/c");
    EXPECT_FALSE(d.contains("/a"));
    EXPECT_FALSE(d.contains("/b"));
    EXPECT_TRUE(d.contains("/c"));
    EXPECT_EQ(d.size(), 1u);
}
