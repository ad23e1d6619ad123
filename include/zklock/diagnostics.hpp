// What the library is doing inside a Session or a lock's place in its queue,
// in words, for diagnosing a program (or a test) that stopped making progress:
// the session's state and the C client's, the socket and timer it waits on, the
// deletes it still owes; the acquire protocol's phase, its node and what it
// watches. The text is for people; its form may change in any release.
#pragma once

#include <zklock/export.hpp>
#include <zklock/queue_lock.hpp>
#include <zklock/session.hpp>

#include <chrono>
#include <string>

namespace zklock {

/// Reads the state on the session's strand, waiting at most `timeout` for it;
/// when a handler holds the strand longer (a blocked call, a SessionFreeze),
/// says so instead. Thread-safe; never call it from the session's own thread.
ZKLOCK_EXPORT std::string describe_internals(const Session& session,
                                             std::chrono::milliseconds timeout = std::chrono::seconds(2));
/// The same for a place in a queue (a Mutex, a permit, a SharedMutex's side).
ZKLOCK_EXPORT std::string describe_internals(const QueueLock& lock,
                                             std::chrono::milliseconds timeout = std::chrono::seconds(2));

} // namespace zklock
