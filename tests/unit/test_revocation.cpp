// Cooperative revocation's decisions (fsm/revocation.hpp), without a server:
// what a holder makes of its node's data, whom a request to a lock's holders
// goes to, and which nodes may take a request at all.
#include "fsm/revocation.hpp"
#include <zklock/error.hpp>
#include <zklock/revocation.hpp>

#include "node_name_samples.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace zklock;
using namespace zklock::detail;
using zklock::test::node;
using zklock::test::seq;

TEST(Revocation, TheRequestIsCuratorsRevokeMessageExactly) {
    // LockInternals.REVOKE_MESSAGE = "__REVOKE__".getBytes(), compared with Arrays.equals.
    EXPECT_EQ(revocation_request_data, "__REVOKE__");
    EXPECT_TRUE(is_revocation_request("__REVOKE__"));
    for (const char* other : {"", "__REVOKE", "__REVOKE__ ", "x__REVOKE__", "__revoke__", "host:42"})
        EXPECT_FALSE(is_revocation_request(other)) << other;
    EXPECT_FALSE(is_revocation_request(std::string("__REVOKE__\0", 11)));
}

TEST(Revocation, AHoldIsToldOfEachRequestOnceAndHonoursItOnlyWhenRevocable) {
    revocation_watch kept(false);
    EXPECT_EQ(kept.read("host:42", 0), revocation_step::none);
    EXPECT_EQ(kept.read("__REVOKE__", 1), revocation_step::ignore);
    EXPECT_EQ(kept.read("__REVOKE__", 1), revocation_step::none);  // read again after a reconnect
    EXPECT_EQ(kept.read("__REVOKE__", 2), revocation_step::ignore);  // asked again
    revocation_watch revocable(true);
    EXPECT_EQ(revocable.read("", 0), revocation_step::none);
    EXPECT_EQ(revocable.read("__REVOKE__", 0), revocation_step::honour);
    EXPECT_EQ(revocable.read("__REVOKE__", 0), revocation_step::none);
    EXPECT_EQ(revocable.read("__REVOKE__", 5), revocation_step::honour);
}

TEST(Revocation, TheHoldersOfAQueueUnderEachRule) {
    const std::string a = node(test::uuid, 1), b = node("1b4e28ba-2fa1-11d2-883f-0016d3cca427", 2),
                      c = node("6fa459ea-ee8a-3ca4-894e-db77e160355e", 3);
    const std::vector<std::string> three{c, "leases", a, b};  // listing order, a foreign child among them
    queue_rule mutex;
    EXPECT_EQ(holders_under(mutex, three), (std::vector<std::string>{a}));
    EXPECT_TRUE(holders_under(mutex, {"leases"}).empty());
    EXPECT_TRUE(holders_under(mutex, {}).empty());
    queue_rule semaphore;
    semaphore.permits = 2;
    EXPECT_EQ(holders_under(semaphore, three), (std::vector<std::string>{a, b}));
    // Read-write: the readers ahead of the first writer, or that writer.
    const std::string r1 = "_c_" + test::uuid + "-read-" + seq(1), r2 = "_c_" + test::uuid + "-read-" + seq(2),
                      w3 = "_c_" + test::uuid + "-write-" + seq(3), r4 = "_c_" + test::uuid + "-read-" + seq(4);
    queue_rule rw;
    rw.read_write = true;
    EXPECT_EQ(holders_under(rw, {w3, r4, r2, r1}), (std::vector<std::string>{r1, r2}));
    EXPECT_EQ(holders_under(rw, {w3, r4}), (std::vector<std::string>{w3}));
    // Peers' nodes hold as zklock's do: a Curator reader and a kazoo lock.
    const std::string curator_read = "_c_" + test::uuid + "-__READ__" + seq(7);
    const std::string kazoo = test::hex32 + "__lock__" + seq(8);
    EXPECT_EQ(holders_under(rw, {kazoo, curator_read}), (std::vector<std::string>{curator_read}));
    EXPECT_EQ(holders_under(mutex, {kazoo, curator_read}), (std::vector<std::string>{curator_read}));
}

TEST(Revocation, OnlyALockNodeMayTakeARequest) {
    EXPECT_TRUE(check_revocation_target("/locks/job/" + node(test::uuid, 7)));
    EXPECT_TRUE(check_revocation_target("/locks/job/" + test::hex32 + "__lock__" + seq(7)));  // kazoo's
    EXPECT_TRUE(check_revocation_target("/locks/job/_c_" + test::uuid + "-latch-" + seq(7)));  // LeaderLatch's
    // The lock directory (a semaphore's permit count is its data), any other node.
    for (const char* dir : {"/locks/job", "/locks/job/leases", "/config"}) {
        const auto r = check_revocation_target(dir);
        EXPECT_EQ(r.error, errc::invalid_argument) << dir;
        EXPECT_NE(r.reason.find("not a lock node"), std::string::npos) << r.reason;
    }
    for (const char* bad : {"", "locks/x-lock-0000000001", "/locks//x", "/zookeeper/quota", "/"})
        EXPECT_EQ(check_revocation_target(bad).error, errc::invalid_path) << bad;
}
