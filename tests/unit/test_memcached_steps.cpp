// The memcached recipe's decisions (backends/memcached/memcached_steps), without a server.
#include "backends/memcached/memcached_steps.hpp"

#include <zklock/error.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <system_error>

namespace zklock::detail::memcached {
namespace {

using namespace std::chrono_literals;

address parsed(const std::string& text) {
    std::error_code ec;
    std::string reason;
    auto a = parse_address(text, ec, &reason);
    EXPECT_FALSE(ec) << text << ": " << reason;
    return a;
}

std::string refusal(const std::string& text) {
    std::error_code ec;
    std::string reason;
    parse_address(text, ec, &reason);
    EXPECT_EQ(ec, errc::invalid_argument) << text;
    return reason;
}

TEST(MemcachedSteps, AddressesAreHostPortHostOrAUrl) {
    EXPECT_EQ(parsed("127.0.0.1:11311"), (address{"127.0.0.1", 11311}));
    EXPECT_EQ(parsed("cache.example"), (address{"cache.example", 11211}));
    EXPECT_EQ(parsed("memcached://cache.example:5000"), (address{"cache.example", 5000}));
    EXPECT_EQ(parsed("memcached://cache.example"), (address{"cache.example", 11211}));
    EXPECT_EQ(parsed("[::1]:11212"), (address{"::1", 11212}));
}

TEST(MemcachedSteps, BadAddressesAreRefusedWithAReasonThatQuotesNoSecret) {
    EXPECT_NE(refusal("").find("no host"), std::string::npos);
    EXPECT_NE(refusal(":11211").find("no host"), std::string::npos);
    EXPECT_NE(refusal("h:0").find("1..65535"), std::string::npos);
    EXPECT_NE(refusal("h:70000").find("1..65535"), std::string::npos);
    EXPECT_NE(refusal("h:12x").find("1..65535"), std::string::npos);
    EXPECT_NE(refusal("h:").find("empty port"), std::string::npos);
    EXPECT_NE(refusal("redis://h:1").find("scheme"), std::string::npos);
    EXPECT_NE(refusal("::1").find("brackets"), std::string::npos);
    EXPECT_NE(refusal("memcached://h/0").find("path"), std::string::npos);
    const auto why = refusal("memcached://alice:s3cret@h:1");
    EXPECT_NE(why.find("no authentication"), std::string::npos) << why;
    EXPECT_EQ(why.find("s3cret"), std::string::npos) << why;
}

TEST(MemcachedSteps, TtlIsWholeSecondsRoundedUpAndTheLeaseCountsOneLess) {
    EXPECT_EQ(ttl_seconds(2000ms), 2u);
    EXPECT_EQ(ttl_seconds(2001ms), 3u);
    EXPECT_EQ(ttl_seconds(10s), 10u);
    EXPECT_EQ(ttl_seconds(1ms), 1u);
    // Beyond 30 days memcached reads a Unix time: capped there.
    EXPECT_EQ(ttl_seconds(std::chrono::hours(24 * 365)), 60u * 60 * 24 * 30);
    EXPECT_EQ(lease_validity(2000ms), 1000ms);
    EXPECT_EQ(lease_validity(2500ms), 2000ms);
}

TEST(MemcachedSteps, AnAddStoredGrantsATakenKeyPollsOrGivesUp) {
    EXPECT_EQ(next_after_add(answer::done, false, false, false, false), after_add::grant);
    EXPECT_EQ(next_after_add(answer::refused, false, false, false, false), after_add::poll);
    EXPECT_EQ(next_after_add(answer::refused, false, true, false, false), after_add::poll);
    EXPECT_EQ(next_after_add(answer::refused, true, false, false, false), after_add::give_up);
    EXPECT_EQ(next_after_add(answer::refused, false, true, true, false), after_add::give_up);
    EXPECT_EQ(next_after_add(answer::refused, false, false, false, true), after_add::give_up);
}

TEST(MemcachedSteps, AServerThatFailsFailsLockAndTryLockButTryLockForRetriesUntilItsDeadline) {
    EXPECT_EQ(next_after_add(answer::failed, false, false, false, false), after_add::fail);   // lock()
    EXPECT_EQ(next_after_add(answer::failed, true, false, false, false), after_add::fail);    // try_lock()
    EXPECT_EQ(next_after_add(answer::failed, false, true, false, false), after_add::retry_on_error);
    EXPECT_EQ(next_after_add(answer::failed, false, true, true, false), after_add::fail);
    EXPECT_EQ(next_after_add(answer::failed, false, true, false, true), after_add::fail);
}

TEST(MemcachedSteps, OwnershipIsTheValueComparedWithOurs) {
    EXPECT_EQ(owner_of(answer::done, "abc", "abc"), ownership::ours);
    EXPECT_EQ(owner_of(answer::done, "abd", "abc"), ownership::taken);
    EXPECT_EQ(owner_of(answer::done, "", "abc"), ownership::taken);
    EXPECT_EQ(owner_of(answer::not_found, "", "abc"), ownership::gone);
    EXPECT_EQ(owner_of(answer::failed, "", "abc"), ownership::unknown);
}

TEST(MemcachedSteps, ARenewalExtendsOnlyOurUnchangedKey) {
    EXPECT_EQ(after_renew(ownership::ours, answer::done), renewal::extended);
    EXPECT_EQ(after_renew(ownership::gone, answer::failed), renewal::lost);
    EXPECT_EQ(after_renew(ownership::taken, answer::failed), renewal::lost);
    // Changed or gone between the gets and the cas: a new owner's add.
    EXPECT_EQ(after_renew(ownership::ours, answer::refused), renewal::lost);
    EXPECT_EQ(after_renew(ownership::ours, answer::not_found), renewal::lost);
    // No answer: not known to be lost; the lease decides.
    EXPECT_EQ(after_renew(ownership::unknown, answer::failed), renewal::retry_sooner);
    EXPECT_EQ(after_renew(ownership::ours, answer::failed), renewal::retry_sooner);
}

TEST(MemcachedSteps, AReleaseDeletesOnlyOurKeyAndSaysWhenItWasLostBefore) {
    const auto loss = make_error_code(errc::connection_loss);
    EXPECT_EQ(after_release(ownership::ours, answer::done, answer::done, {}), std::error_code{});
    EXPECT_EQ(after_release(ownership::gone, answer::failed, answer::failed, {}), errc::node_deleted);
    EXPECT_EQ(after_release(ownership::taken, answer::failed, answer::failed, {}), errc::node_deleted);
    EXPECT_EQ(after_release(ownership::ours, answer::refused, answer::failed, {}), errc::node_deleted);
    EXPECT_EQ(after_release(ownership::ours, answer::done, answer::not_found, {}), errc::node_deleted);
    EXPECT_EQ(after_release(ownership::unknown, answer::failed, answer::failed, loss), errc::connection_loss);
    EXPECT_EQ(after_release(ownership::ours, answer::failed, answer::failed, loss), errc::connection_loss);
    EXPECT_EQ(after_release(ownership::ours, answer::done, answer::failed, loss), errc::connection_loss);
}

TEST(MemcachedSteps, PollingBacksOffFromTenMillisecondsToTwoHundredCappedByTheTtl) {
    EXPECT_EQ(poll_cap(first_poll, 10s), 10ms);
    EXPECT_EQ(next_backoff(10ms), 20ms);
    EXPECT_EQ(next_backoff(160ms), 200ms);
    EXPECT_EQ(next_backoff(200ms), 200ms);
    EXPECT_EQ(poll_cap(200ms, 100ms), 100ms);
    EXPECT_EQ(poll_cap(0ms, 100ms), 1ms);
}

} // namespace
} // namespace zklock::detail::memcached
