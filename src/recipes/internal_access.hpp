// How zklock's own code (the recipes, the ZooKeeper lock service, the test
// fixtures) reaches the internals of its public classes: the session state a
// recipe works on, the queue place a Mutex drives, a Mutex under another queue
// rule. The public classes name this as a friend instead of handing their
// internals to every user.
#pragma once

#include <zklock/mutex.hpp>
#include <zklock/session.hpp>

#include <memory>
#include <string>
#include "fsm/lock_node.hpp"

namespace zklock::detail {

struct internal_access {
    static const std::shared_ptr<session_impl>& session(const Session& s) noexcept { return s.impl_; }
    static const std::shared_ptr<contender_engine>& engine(const Mutex& m) noexcept { return m.contender_; }
    /// A Mutex whose queue rule decides who holds (SharedMutex's sides).
    static Mutex make_mutex(Session& s, std::string path, MutexOptions options, queue_rule rule) {
        return Mutex(s, std::move(path), std::move(options), std::move(rule), nullptr);
    }
    /// The same on the heap (a Semaphore's waiters).
    static std::unique_ptr<Mutex> new_mutex(Session& s, std::string path, MutexOptions options, queue_rule rule) {
        return std::unique_ptr<Mutex>(new Mutex(s, std::move(path), std::move(options), std::move(rule), nullptr));
    }
};

} // namespace zklock::detail
