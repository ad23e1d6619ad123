// Listings of one lock directory shared by the contenders of one session.
//
// Every newcomer lists its lock's queue once its node is created, and every
// waiter whose listing a lost connection cut off lists it again once
// connected. When a session has many contenders in one directory (a worker
// pool on one session, a fleet's waiters after a reconnect), each listing
// carries the whole queue: n contenders read n copies of up to n names, the
// server serialises them one after another, and a session busy reading them
// can fall silent long enough to lose its connection, whose retries then list
// again, all at once.
//
// So at most one listing per directory is outstanding on a session. A call
// made while one is outstanding waits for the next, sent as soon as the
// outstanding one has been answered, and shared by every call that waited
// (and every call made while the answer was being delivered). Each call is
// answered by a listing sent after it was made: the session's requests reach
// the server in order, so that listing shows everything the caller's own
// earlier requests did (its node's create above all), as a listing of its own
// would have.
#pragma once

#include "fsm/lock_node.hpp"

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace zklock::detail {

class listing_batches {
public:
    using answer_fn = std::function<void(int rc, const children_listing& children)>;

    /// A call wants a listing of `path`. True: none is outstanding, and the
    /// caller sends one now (its answer goes to answer()); false: the call
    /// waits for the next one.
    bool ask(const std::string& path, answer_fn fn);

    /// The outstanding listing of `path` was answered (`rc`, and `children`
    /// when ZOK): calls every call it answers, in the order they were made,
    /// with one children_listing (sorted once for all of them).
    /// True: calls are waiting (made while it was outstanding, or by the calls
    /// just answered), and the caller sends the next listing now.
    bool answer(const std::string& path, int rc, const std::vector<std::string>& children);

    /// Calls waiting for a listing of `path` (answered by the outstanding one or the next).
    std::size_t waiting(const std::string& path) const;
    /// Directories with a listing outstanding.
    std::size_t outstanding() const noexcept { return batches_.size(); }

private:
    struct batch {
        std::vector<answer_fn> sent;  // answered by the outstanding listing
        std::vector<answer_fn> next;  // made since it was sent: answered by the next
    };
    std::map<std::string, batch, std::less<>> batches_;
};

} // namespace zklock::detail
