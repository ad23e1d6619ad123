#include <zklock/mutex.hpp>

namespace zklock {

RecursiveMutex::RecursiveMutex(Session& session, std::string path, MutexOptions options)
    : mutex_(session, std::move(path), std::move(options)) {
    keep_loss_reason();
}

RecursiveMutex::RecursiveMutex(Session& session, std::string path, MutexOptions options, std::error_code& ec)
    : mutex_(session, std::move(path), std::move(options), ec) {
    keep_loss_reason();
}

void RecursiveMutex::keep_loss_reason() {
    mutex_.on_lost([l = loss_](std::error_code ec) {
        std::lock_guard lk(l->m);
        l->reason = ec;
    });
}

bool RecursiveMutex::enter_local(std::optional<std::chrono::steady_clock::time_point> deadline) {
    std::unique_lock lk(local_);
    const auto me = std::this_thread::get_id();
    if (count_ > 0 && owner_ == me) {
        if (!mutex_.is_held()) {
            // The ZooKeeper hold is gone: counting one more level would claim a
            // lock nobody holds.
            std::error_code why;
            {
                std::lock_guard l(loss_->m);
                why = loss_->reason;
            }
            if (!why) why = make_error_code(errc::node_deleted);  // lost; the reason is still on its way
            throw error(why, "zklock::RecursiveMutex: re-entry after the lock of " + mutex_.path() + " was lost");
        }
        ++count_;
        return true;
    }
    auto free = [this] { return count_ == 0; };
    if (deadline) {
        if (!free_.wait_until(lk, *deadline, free)) return false;
    } else {
        free_.wait(lk, free);
    }
    owner_ = me;
    count_ = 1;
    return true;
}

void RecursiveMutex::leave_local() {
    {
        std::lock_guard lk(local_);
        count_ = 0;
        owner_ = {};
    }
    free_.notify_one();
}

void RecursiveMutex::lock() {
    enter_local(std::nullopt);
    if (hold_count() > 1) return;
    try {
        mutex_.lock();
    } catch (...) {
        leave_local();
        throw;
    }
}

bool RecursiveMutex::try_lock() {
    if (!enter_local(std::chrono::steady_clock::now())) return false;
    if (hold_count() > 1) return true;
    bool ok = false;
    try {
        ok = mutex_.try_lock();
    } catch (...) {
        leave_local();
        throw;
    }
    if (!ok) leave_local();
    return ok;
}

bool RecursiveMutex::try_lock_within(std::optional<std::chrono::steady_clock::time_point> deadline) {
    if (!enter_local(deadline)) return false;
    if (hold_count() > 1) return true;
    bool ok = false;
    try {
        if (deadline) {
            ok = mutex_.try_lock_until(*deadline);
        } else {
            mutex_.lock();
            ok = true;
        }
    } catch (...) {
        leave_local();
        throw;
    }
    if (!ok) leave_local();
    return ok;
}

void RecursiveMutex::unlock() noexcept {
    {
        std::lock_guard lk(local_);
        if (count_ == 0 || owner_ != std::this_thread::get_id()) return;
        if (--count_ > 0) return;
        // Release before another thread can see the count at zero: unlock() returns
        // at once, and after it the Mutex accepts the next acquire.
        mutex_.unlock();
        owner_ = {};
    }
    free_.notify_one();
}

std::size_t RecursiveMutex::hold_count() const {
    std::lock_guard lk(local_);
    return owner_ == std::this_thread::get_id() ? count_ : 0;
}

} // namespace zklock
