// The fencing rule every validator applies, and the text form of a token.
#include <zklock/fencing.hpp>

#include <gtest/gtest.h>

namespace zklock {
namespace {

TEST(Fencing, AdmitsEqualAndHigherTokensAndAnyTokenWhenNoneIsStored) {
    EXPECT_TRUE(fence_admits(1, std::nullopt));
    EXPECT_TRUE(fence_admits(7, 7)) << "the same holder writes twice";
    EXPECT_TRUE(fence_admits(8, 7));
    EXPECT_FALSE(fence_admits(6, 7));
    EXPECT_FALSE(fence_admits(1, INT64_MAX));
    EXPECT_TRUE(fence_admits(INT64_MAX, INT64_MAX));
    static_assert(fence_admits(3, 2) && !fence_admits(2, 3));
}

TEST(Fencing, DecideReportsTheStoredTokenThatRefused) {
    EXPECT_EQ(fence_decide(5, std::nullopt), (fenced_write_result{true, 5}));
    EXPECT_EQ(fence_decide(5, 5), (fenced_write_result{true, 5}));
    EXPECT_EQ(fence_decide(9, 5), (fenced_write_result{true, 9}));
    EXPECT_EQ(fence_decide(4, 5), (fenced_write_result{false, 5}));
    EXPECT_FALSE(fence_decide(4, 5));
    EXPECT_TRUE(fence_decide(6, 5));
}

TEST(Fencing, ValidTokensArePositive) {
    EXPECT_TRUE(valid_fencing_token(1));
    EXPECT_TRUE(valid_fencing_token(INT64_MAX));
    EXPECT_FALSE(valid_fencing_token(0)) << "fencing_token() of a lock that is not held";
    EXPECT_FALSE(valid_fencing_token(-1));
}

TEST(Fencing, ParsesTheTextFormStrictly) {
    EXPECT_EQ(parse_fencing_token("1"), 1);
    EXPECT_EQ(parse_fencing_token("4294967298"), 4294967298);
    EXPECT_EQ(parse_fencing_token("9223372036854775807"), INT64_MAX);
    std::string why;
    for (const char* bad : {"", "0", "007", "-5", "+5", " 5", "5 ", "5\n", "12abc", "0x10", "9223372036854775808",
                            "99999999999999999999999"}) {
        why.clear();
        EXPECT_EQ(parse_fencing_token(bad, &why), std::nullopt) << "'" << bad << "'";
        EXPECT_NE(why.find("invalid fencing token '"), std::string::npos) << why;
    }
    EXPECT_EQ(parse_fencing_token("0", &why), std::nullopt);
    EXPECT_NE(why.find("not held"), std::string::npos) << why;
    EXPECT_EQ(parse_fencing_token("9223372036854775808", &why), std::nullopt);
    EXPECT_NE(why.find("larger than the largest token"), std::string::npos) << why;
    // Control characters are not echoed to a terminal.
    EXPECT_EQ(parse_fencing_token("\x1b[2J", &why), std::nullopt);
    EXPECT_EQ(why.find('\x1b'), std::string::npos) << why;
}

} // namespace
} // namespace zklock
