// What the SQL lock services (PostgreSQL and MySQL) decide alike, without a server.
#include "backends/sql/sql_steps.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string_view>

namespace zklock::detail::sql_steps {
namespace {

TEST(SqlSteps, ARenewalThatMatchedNoRowLosesTheLease) {
    EXPECT_EQ(after_renewal(false, 1), renewal::extended);
    EXPECT_EQ(after_renewal(false, 0), renewal::lost);
    EXPECT_EQ(after_renewal(true, 0), renewal::retry_soon);
    EXPECT_EQ(after_renewal(true, 1), renewal::retry_soon);
}

TEST(SqlSteps, ALeaseAndAVersionRowLiveByTheirTtl) {
    EXPECT_TRUE(lives_by_ttl(method::lease));
    EXPECT_TRUE(lives_by_ttl(method::version));
    EXPECT_FALSE(lives_by_ttl(method::advisory));
    EXPECT_FALSE(lives_by_ttl(method::row));
}

TEST(SqlSteps, OnlyAPositiveIntegerIsAToken) {
    EXPECT_EQ(token_of("42"), 42);
    EXPECT_EQ(token_of("9223372036854775807"), 9223372036854775807);
    EXPECT_EQ(token_of(std::nullopt), 0);
    EXPECT_EQ(token_of(""), 0);
    EXPECT_EQ(token_of("0"), 0);
    EXPECT_EQ(token_of("-3"), 0);
    EXPECT_EQ(token_of("12x"), 0);
    EXPECT_EQ(token_of("99999999999999999999"), 0);  // out of range
}

// The hash names PostgreSQL channels and long GET_LOCK names, which every
// client of the same lock, of any zklock version, must compute alike: these
// values never change.
TEST(SqlSteps, HashedNamesNeverChange) {
    EXPECT_EQ(hashed_name(""), "14650fb0739d0383");
    EXPECT_EQ(hashed_name("a"), "44bd8ad473cd9906");
    EXPECT_EQ(hashed_name("foobar"), "88fad7c0a8ff07f2");
}

} // namespace
} // namespace zklock::detail::sql_steps
