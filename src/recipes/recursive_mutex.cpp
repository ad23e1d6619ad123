#include <zklock/mutex.hpp>

#include <string>

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

bool RecursiveMutex::enter_local(std::optional<std::chrono::steady_clock::time_point> deadline, std::error_code& ec) {
    std::unique_lock lk(local_);
    const auto me = std::this_thread::get_id();
    if (count_ > 0 && owner_ == me) {
        if (!mutex_.is_held()) {
            // The ZooKeeper hold is gone: counting one more level would claim a
            // lock nobody holds.
            {
                std::lock_guard l(loss_->m);
                ec = loss_->reason;
            }
            if (!ec) ec = make_error_code(errc::node_deleted);  // lost; the reason is still on its way
            return false;
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

bool RecursiveMutex::acquire(std::optional<std::chrono::steady_clock::time_point> deadline, std::error_code& ec) {
    ec.clear();
    if (!enter_local(deadline, ec)) return false;
    if (hold_count() > 1) return true;
    bool ok = false;
    if (deadline) {
        ok = mutex_.try_lock_until(*deadline, ec);
    } else {
        mutex_.lock(ec);
        ok = !ec;
    }
    if (!ok) leave_local();
    return ok;
}

bool RecursiveMutex::acquire_or_throw(std::optional<std::chrono::steady_clock::time_point> deadline, const char* op) {
    std::error_code ec;
    const bool ok = acquire(deadline, ec);
    if (!ec) return ok;
    if (hold_count() > 0)  // refused as a re-entry: this thread still holds its levels
        throw error(ec, "zklock::RecursiveMutex: re-entry after the lock of " + mutex_.path() + " was lost");
    const auto detail = mutex_.failure_detail();
    throw error(ec, std::string("zklock::RecursiveMutex::") + op + " " + mutex_.path() +
                        (detail.empty() ? std::string() : " (" + detail + ")"));
}

void RecursiveMutex::lock() { acquire_or_throw(std::nullopt, "lock"); }
void RecursiveMutex::lock(std::error_code& ec) { acquire(std::nullopt, ec); }
// A deadline already passed: one try (as Lock::try_lock).
bool RecursiveMutex::try_lock() { return acquire_or_throw(std::chrono::steady_clock::now(), "try_lock"); }
bool RecursiveMutex::try_lock(std::error_code& ec) { return acquire(std::chrono::steady_clock::now(), ec); }
bool RecursiveMutex::try_lock_within(std::optional<std::chrono::steady_clock::time_point> deadline) {
    return acquire_or_throw(deadline, "try_lock_for");
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

void RecursiveMutex::requeue(std::error_code& ec) {
    ec.clear();
    {
        std::lock_guard lk(local_);
        if (count_ == 0 || owner_ != std::this_thread::get_id()) {
            ec = make_error_code(errc::not_held);
            return;
        }
        if (count_ > 1) {
            ec = make_error_code(errc::invalid_argument);
            return;
        }
        if (!mutex_.is_held()) {
            // The ZooKeeper hold is gone: report its loss, as a re-entry does,
            // and the thread's level with it.
            {
                std::lock_guard l(loss_->m);
                ec = loss_->reason;
            }
            if (!ec) ec = make_error_code(errc::node_deleted);  // lost; the reason is still on its way
        }
    }
    if (ec) return leave_local();
    // The thread keeps its local ownership while it waits in the queue.
    mutex_.requeue(ec);
    if (ec) leave_local();
}

void RecursiveMutex::requeue() {
    const auto levels = hold_count();
    const bool lost = levels == 1 && !mutex_.is_held();
    std::error_code ec;
    requeue(ec);
    if (!ec) return;
    if (lost) throw error(ec, "zklock::RecursiveMutex::requeue: the lock of " + mutex_.path() + " was lost");
    if (levels > 1)
        throw error(ec, "zklock::RecursiveMutex::requeue " + mutex_.path() + ": held " + std::to_string(levels) +
                            " times by this thread; requeue only at the outermost level");
    const auto detail = mutex_.failure_detail();
    throw error(ec, "zklock::RecursiveMutex::requeue " + mutex_.path() +
                        (detail.empty() ? std::string() : " (" + detail + ")"));
}

std::size_t RecursiveMutex::hold_count() const {
    std::lock_guard lk(local_);
    return owner_ == std::this_thread::get_id() ? count_ : 0;
}

} // namespace zklock
