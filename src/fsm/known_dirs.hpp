// The lock directories a session has seen exist, or has sent the create of.
//
// The first acquire in a directory the session does not know sends the
// directory's create (a container) ahead of its node's, in the same round trip:
// a new lock costs one round trip, not a create the server refuses (NONODE),
// the directory's, then the node's. A directory seen before gets no such
// create: one the server refuses (NODEEXISTS) is still a transaction it logs,
// and on an ensemble one more proposal. A directory the server reaped since it
// was seen is found by the node's create (NONODE), and created then.
//
// Bounded: when full it forgets every directory, and the next acquire in each
// pays one refused create again.
#pragma once

#include <cstddef>
#include <string>
#include <unordered_set>

namespace zklock::detail {

class known_dirs {
public:
    explicit known_dirs(std::size_t capacity = 4096) : capacity_(capacity == 0 ? 1 : capacity) {}

    bool contains(const std::string& dir) const { return dirs_.contains(dir); }
    /// The directory exists (a node was created in it, or it was created).
    void seen(const std::string& dir) {
        if (dirs_.size() >= capacity_ && !dirs_.contains(dir)) dirs_.clear();
        dirs_.insert(dir);
    }
    /// The directory is gone (a create in it found no parent).
    void gone(const std::string& dir) { dirs_.erase(dir); }
    std::size_t size() const noexcept { return dirs_.size(); }

private:
    std::size_t capacity_;
    std::unordered_set<std::string> dirs_;
};

} // namespace zklock::detail
