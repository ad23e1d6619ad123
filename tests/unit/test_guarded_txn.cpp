// The guarded transaction's decisions without a server: what is refused before
// sending, and what the multi's answer means (src/fsm/guarded_txn.hpp).
#include "fsm/guarded_txn.hpp"

#include <zklock/error.hpp>

#include <gtest/gtest.h>

#include <zookeeper.h>

#include <optional>
#include <string>
#include <vector>

using namespace zklock;
using namespace zklock::detail;

namespace {

constexpr std::size_t max_request = 0xfffff;

} // namespace

TEST(GuardedTxn, InputIsCheckedBeforeSending) {
    const std::vector<std::string> node{"/locks/job/_c_0f-lock-0000000001"};
    EXPECT_TRUE(validate_guarded(node, {guarded_op::create("/data/x", "v"), guarded_op::check("/data/y", 3)}, max_request));
    EXPECT_TRUE(validate_guarded(node, {}, max_request)) << "a transaction of checks only is still a question worth asking";

    auto r = validate_guarded({}, {guarded_op::create("/data/x")}, max_request);
    EXPECT_EQ(r.error, errc::invalid_argument);
    EXPECT_NE(r.reason.find("at least one lock node"), std::string::npos) << r.reason;

    r = validate_guarded({"locks/job/n"}, {}, max_request);
    EXPECT_EQ(r.error, errc::invalid_path);
    EXPECT_EQ(r.reason.rfind("lock node: ", 0), 0u) << r.reason;

    r = validate_guarded(node, {guarded_op::create("/data/x"), guarded_op::set_data("/data//y", "v")}, max_request);
    EXPECT_EQ(r.error, errc::invalid_path);
    EXPECT_EQ(r.reason.rfind("operation 1: ", 0), 0u) << r.reason;

    r = validate_guarded(node, {guarded_op::erase("/data/x", -2)}, max_request);
    EXPECT_EQ(r.error, errc::invalid_argument);
    r = validate_guarded(node, {{guarded_op::kind::check, "/data/x", "data", -1}}, max_request);
    EXPECT_EQ(r.error, errc::invalid_argument);

    r = validate_guarded(node, {guarded_op::create("/data/x", std::string(600000, 'a')),
                                guarded_op::create("/data/y", std::string(600000, 'b'))},
                         max_request);
    EXPECT_EQ(r.error, errc::invalid_argument);
    EXPECT_NE(r.reason.find("more than the server reads in one request"), std::string::npos) << r.reason;
}

TEST(GuardedTxn, TheAnswerSaysWhichPartFailed) {
    // Committed.
    auto o = read_guarded_answer(ZOK, {ZOK, ZOK, ZOK}, 1);
    EXPECT_FALSE(o.error);
    EXPECT_FALSE(o.failed_op);

    // The guard: the lock's node is gone.
    o = read_guarded_answer(ZNONODE, {ZNONODE, ZRUNTIMEINCONSISTENCY, ZRUNTIMEINCONSISTENCY}, 1);
    EXPECT_EQ(o.error, errc::node_deleted);
    EXPECT_FALSE(o.failed_op);
    // The second guard of a set.
    o = read_guarded_answer(ZNONODE, {ZOK, ZNONODE, ZRUNTIMEINCONSISTENCY}, 2);
    EXPECT_EQ(o.error, errc::node_deleted);
    EXPECT_FALSE(o.failed_op);

    // The caller's second operation: its own error, and its index among the caller's.
    o = read_guarded_answer(ZBADVERSION, {ZOK, ZOK, ZBADVERSION, ZRUNTIMEINCONSISTENCY}, 1);
    EXPECT_EQ(o.error, errc::bad_version);
    ASSERT_TRUE(o.failed_op);
    EXPECT_EQ(*o.failed_op, 1u);
    // A caller's missing node is no_node, not a lost lock.
    o = read_guarded_answer(ZNONODE, {ZOK, ZNONODE}, 1);
    EXPECT_EQ(o.error, errc::no_node);
    EXPECT_EQ(o.failed_op, std::optional<std::size_t>(0));

    // The request as a whole: no operation was reached.
    o = read_guarded_answer(ZSESSIONEXPIRED, {}, 1);
    EXPECT_EQ(o.error, errc::session_expired);
    EXPECT_FALSE(o.failed_op);
    o = read_guarded_answer(ZCONNECTIONLOSS, {ZOK, ZOK}, 1);
    EXPECT_EQ(o.error, errc::connection_loss);
    EXPECT_FALSE(o.failed_op);
    o = read_guarded_answer(ZCONNECTIONLOSS, {ZCONNECTIONLOSS, ZCONNECTIONLOSS}, 1);
    EXPECT_EQ(o.error, errc::connection_loss);
    EXPECT_FALSE(o.failed_op) << "a code every operation got is the request's";
    o = read_guarded_answer(ZCLOSING, {0, 0}, 1);
    EXPECT_EQ(o.error, errc::session_closed);
}
