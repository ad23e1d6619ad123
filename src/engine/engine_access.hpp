// How zklock's own code reaches the engine behind a queue place or a lock set,
// and makes a QueueLock around an engine (queue_factory.hpp is the one place
// that does): QueueLock and MultiMutex name this as their friend instead of
// handing their internals to every user.
#pragma once

#include <zklock/multi_mutex.hpp>
#include <zklock/queue_lock.hpp>

#include <memory>
#include <string>
#include <utility>

namespace zklock::detail {

class contender_engine;

struct engine_access {
    static const std::shared_ptr<contender_engine>& engine(const QueueLock& l) noexcept { return l.engine_; }
    static const std::shared_ptr<contender_engine>& engine(const MultiMutex& m) noexcept { return m.engine_; }
    static QueueLock queue_lock(std::shared_ptr<contender_engine> engine, std::string path) {
        return QueueLock(std::move(engine), std::move(path));
    }
};

} // namespace zklock::detail
