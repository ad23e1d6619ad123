// The check the interop tests make when a peer library's semaphore holds a
// path: zklock's Semaphore refuses it, naming the peer, and leaves nothing.
#pragma once

#include "support.hpp"

#include <zklock/error.hpp>
#include <zklock/semaphore.hpp>

#include <string>

namespace zklock::test {

/// A permit of a Semaphore of 2 on `path` fails with errc::foreign_recipe, its
/// failure_detail() names `peer`, and none of zklock's nodes is left. Returns
/// the path's listing for the caller's own checks of the peer's children.
inline queue_listing expect_refused_beside_a_peer_semaphore(Session& session, const std::string& path,
                                                             const std::string& peer) {
    Semaphore sem(session, path, 2);
    auto permit = sem.permit();
    std::error_code ec;
    EXPECT_FALSE(permit.try_lock_for(30s, ec));
    EXPECT_EQ(ec, errc::foreign_recipe) << ec.message();
    EXPECT_NE(permit.failure_detail().find(peer), std::string::npos) << permit.failure_detail();
    auto listing = list_queue(session, path, ec);
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_TRUE(listing.contenders.empty()) << listing.contenders.front().node;  // none of ours left
    return listing;
}

} // namespace zklock::test
