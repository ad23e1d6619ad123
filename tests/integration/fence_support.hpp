// Shared scenarios of the fencing validator tests (PostgresFence, RedisFence):
// a paused holder's late write, and concurrent writers in random order.
#pragma once

#include "descriptors.hpp"
#include "support.hpp"

#include <zklock/fencing.hpp>
#include <zklock/testing/faults.hpp>

#include <algorithm>
#include <filesystem>
#include <set>
#include <functional>
#include <ostream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <fcntl.h>

namespace zklock {
// Readable failure messages.
inline void PrintTo(const fenced_write_result& r, std::ostream* os) {
    *os << (r.applied ? "{applied, stored " : "{refused, stored ") << r.stored_token << "}";
}
inline void PrintTo(const fenced_value& v, std::ostream* os) {
    *os << "{token " << v.fencing_token << ", \"" << v.value << "\"}";
}
} // namespace zklock

namespace zklock::test::fence {

/// A write to the fenced resource under test: (token, value) -> result.
using write_fn = std::function<fenced_write_result(std::int64_t token, const std::string& value)>;
/// What the resource holds now.
using read_fn = std::function<std::optional<fenced_value>()>;

/// A ZooKeeper server with a small tickTime: sessions of 0.2-4 s.
inline testing::ZooKeeperServerOptions zookeeper_options() {
    testing::ZooKeeperServerOptions o;
    o.tick_time_ms = 100;
    o.max_session_timeout_ms = 4000;
    return o;
}

inline SessionOptions session_options(const testing::ZooKeeperServer& zk) {
    SessionOptions o;
    o.connect = zk.connect_string();
    o.session_timeout = std::chrono::milliseconds(2000);
    o.connect_timeout = std::chrono::seconds(10);
    return o;
}

/// Holder A takes a real ZooKeeper lock and writes; then A is paused past its
/// session timeout (the server expires its session while A's I/O is held, as
/// for a stopped process); B acquires with a higher token and writes; then A
/// wakes up and writes with the token it still has. A's late write must be
/// refused by the resource, which keeps B's value and token.
inline void paused_holder_late_write_is_refused(const testing::ZooKeeperServer& zk, const write_fn& write,
                                                const read_fn& read) {
    const std::string path = "/zklock-tests/fence/" +
                             std::string(::testing::UnitTest::GetInstance()->current_test_info()->name());
    Session session_a(session_options(zk)), session_b(session_options(zk));
    session_a.connect();
    session_b.connect();
    Mutex a(session_a, path), b(session_b, path);
    a.lock();
    const std::int64_t token_a = a.fencing_token();
    ASSERT_GT(token_a, 0);
    EXPECT_EQ(write(token_a, "A1"), (fenced_write_result{true, token_a}));

    testing::expire_session(session_a);  // A is paused; the server gives up on it
    ASSERT_TRUE(b.try_lock_for(std::chrono::seconds(10))) << "B never got the lock A lost";
    const std::int64_t token_b = b.fencing_token();
    ASSERT_GT(token_b, token_a);
    EXPECT_EQ(write(token_b, "B"), (fenced_write_result{true, token_b}));

    // A resumes and writes with its old token before it has noticed the loss.
    EXPECT_EQ(write(token_a, "A-late"), (fenced_write_result{false, token_b})) << "the paused holder's late write";
    EXPECT_EQ(read(), (fenced_value{token_b, "B"}));
    b.unlock();

    Session observer(session_options(zk));
    observer.connect();
    EXPECT_TRUE(wait_until([&] {
        std::error_code ec;
        return list_contenders(observer, path, ec).empty() && !ec;
    })) << "lock nodes left under " << path;
}

/// The same holder writing twice with one token is accepted, a higher token
/// is accepted, a lower one is refused.
inline void equal_and_higher_accepted_lower_refused(const write_fn& write, const read_fn& read) {
    EXPECT_EQ(read(), std::nullopt);
    EXPECT_EQ(write(5, "first"), (fenced_write_result{true, 5}));
    EXPECT_EQ(write(5, "again"), (fenced_write_result{true, 5})) << "the same holder writing twice";
    EXPECT_EQ(read(), (fenced_value{5, "again"}));
    EXPECT_EQ(write(7, "higher"), (fenced_write_result{true, 7}));
    EXPECT_EQ(write(6, "stale"), (fenced_write_result{false, 7}));
    EXPECT_EQ(write(1, "staler"), (fenced_write_result{false, 7}));
    EXPECT_EQ(read(), (fenced_value{7, "higher"}));
    // Large tokens (czxids of a long-lived ensemble) compare exactly, past 2^53.
    const std::int64_t big = (std::int64_t{1} << 62) + 1;
    EXPECT_EQ(write(big, "big"), (fenced_write_result{true, big}));
    EXPECT_EQ(write(big - 1, "one less"), (fenced_write_result{false, big}));
    EXPECT_EQ(read(), (fenced_value{big, "big"}));
}

/// Tokens base+1 .. base+n in random order, dealt round-robin to `lanes`
/// writers that each write their share in order; the highest token goes
/// first in its lane, so a resource without the check would end with a lower
/// token's value. Returns each lane's tokens.
inline std::vector<std::vector<std::int64_t>> shuffled_lanes(std::int64_t base, std::size_t n, std::size_t lanes,
                                                             std::uint32_t seed) {
    std::vector<std::int64_t> tokens;
    for (std::size_t i = 1; i <= n; ++i) tokens.push_back(base + static_cast<std::int64_t>(i));
    std::mt19937 rng(seed);
    std::shuffle(tokens.begin(), tokens.end(), rng);
    std::vector<std::vector<std::int64_t>> out(lanes);
    for (std::size_t i = 0; i < tokens.size(); ++i) out[i % lanes].push_back(tokens[i]);
    for (auto& lane : out) {
        const auto top = std::max_element(lane.begin(), lane.end());
        if (*top == base + static_cast<std::int64_t>(n)) std::iter_swap(lane.begin(), top);
    }
    return out;
}

/// Every result agrees with the rule: applied with its own token, or refused
/// by a higher one.
inline void expect_consistent(std::int64_t token, const fenced_write_result& r) {
    if (r.applied) EXPECT_EQ(r.stored_token, token);
    else EXPECT_GT(r.stored_token, token);
}

inline std::string value_of(std::int64_t token) { return "value-of-" + std::to_string(token); }

// The close-on-exec checks' descriptor listings (descriptors.hpp).
using zklock::test::inheritable_since;
using zklock::test::open_descriptors;

} // namespace zklock::test::fence
