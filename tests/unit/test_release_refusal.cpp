// A refused release transaction: which op the server refused, and whether the
// release goes again without its proof or its mark (fsm/release_refusal.hpp).
#include "fsm/release_refusal.hpp"

#include <gtest/gtest.h>

#include <zookeeper.h>

#include <vector>

namespace zklock::detail {
namespace {

using role = release_role;

TEST(ReleaseRefusal, TheRefusedOpIsTheFirstNeitherOkNorRolledBack) {
    const std::vector<role> roles{role::proof, role::proof, role::mark, role::remove, role::extra};
    // The server reports the ops before the refused one as ZOK, the ones after as rolled back.
    const auto r = find_refused_op({ZOK, ZOK, ZNOAUTH, ZRUNTIMEINCONSISTENCY, ZRUNTIMEINCONSISTENCY}, roles);
    EXPECT_EQ(r.at, 2u);
    EXPECT_EQ(r.role, role::mark);
    const auto first = find_refused_op({ZNODEEXISTS, ZRUNTIMEINCONSISTENCY, ZRUNTIMEINCONSISTENCY}, roles);
    EXPECT_EQ(first.at, 0u);
    EXPECT_EQ(first.role, role::proof);
    // An op past the roles (a requeue's create appended after them) has none.
    const auto create = find_refused_op({ZOK, ZOK, ZNOAUTH}, {role::mark, role::remove});
    EXPECT_EQ(create.at, 2u);
    EXPECT_FALSE(create.role.has_value());
    // No code at all (a connection loss fails the multi without per-op codes).
    EXPECT_FALSE(find_refused_op({}, roles).role.has_value());
}

TEST(ReleaseRefusal, ARefusedSiblingIsLeftOutButNotForALostConnectionOrAGoneDirectory) {
    EXPECT_EQ(retry_after_refusal(role::proof, ZNODEEXISTS), release_retry::without_proof);
    EXPECT_EQ(retry_after_refusal(role::proof, ZNOAUTH), release_retry::without_proof);
    EXPECT_EQ(retry_after_refusal(role::proof, ZNONODE), release_retry::no);  // the directory, and the node, gone
    EXPECT_EQ(retry_after_refusal(role::proof, ZCONNECTIONLOSS), release_retry::no);  // sent again whole
    EXPECT_EQ(retry_after_refusal(role::proof, ZSESSIONEXPIRED), release_retry::no);
}

TEST(ReleaseRefusal, AMarkTheAclRefusesIsLeftOutAndNothingElseIs) {
    EXPECT_EQ(retry_after_refusal(role::mark, ZNOAUTH), release_retry::without_mark);
    EXPECT_EQ(retry_after_refusal(role::mark, ZNONODE), release_retry::no);  // the node gone
    EXPECT_EQ(retry_after_refusal(role::remove, ZNOAUTH), release_retry::no);
    EXPECT_EQ(retry_after_refusal(role::extra, ZNOAUTH), release_retry::no);
    EXPECT_EQ(retry_after_refusal(std::nullopt, ZNOAUTH), release_retry::no);
}

} // namespace
} // namespace zklock::detail
