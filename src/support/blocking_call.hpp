// The blocking form of an asynchronous operation: start it, then wait on the
// calling thread for its completion. Refused on the thread that would run the
// completion, which would wait for itself. On an own io_context whose baton
// the caller can take (support/loop_baton.hpp), the caller runs the loop
// itself while it waits: no other thread is woken for the call.
#pragma once

#include "support/async_support.hpp"

#include <zklock/error.hpp>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <system_error>
#include <tuple>
#include <utility>

namespace zklock::detail {

/// What the owner of a loop tells a caller about to drive it.
struct drive_options {
    own_context* own = nullptr;  ///< the loop; null: never driven, the caller waits
    bool drain = false;          ///< after the completion, run what else is ready (user handlers were posted)
};

/// A backend (LockBackend) whose blocking calls may drive its loop.
class drivable {
public:
    virtual drive_options drive() const noexcept = 0;

protected:
    ~drivable() = default;
};

/// Calls `start(done)` and waits until `done(ec, r...)` is called; returns
/// what it was called with. errc::would_deadlock, and nothing started, when
/// `on_own_thread` (the caller is the thread that would call `done`). With
/// `drive.own`, the caller runs that loop while it waits when it can take
/// its baton.
template <class... R, class Start>
std::tuple<std::error_code, R...> wait_for_completion(bool on_own_thread, drive_options drive, Start&& start) {
    if (on_own_thread) return {make_error_code(errc::would_deadlock), R{}...};
    struct slot {
        std::mutex m;
        std::condition_variable cv;
        std::atomic<bool> done{false};
        std::optional<std::tuple<std::error_code, R...>> result;
    } s;
    const auto finish = [&s](std::error_code ec, R... r) {
        // Notified under the lock: the waiter may destroy `s` once it has it.
        std::lock_guard lk(s.m);
        s.result.emplace(ec, std::move(r)...);
        s.done.store(true, std::memory_order_release);
        s.cv.notify_one();
    };
    own_context* own = drive.own && !drive.own->done.load() && drive.own->baton.begin(true) ? drive.own : nullptr;
    if (own) {
        struct give_up {
            own_context* own;
            ~give_up() { own->baton.end(own->queued.load() > 0); }
        } scope{own};
        std::forward<Start>(start)(finish);
        own->drive_until([&s] { return s.done.load(std::memory_order_acquire); }, drive.drain);
    } else {
        std::forward<Start>(start)(finish);
    }
    std::unique_lock lk(s.m);
    s.cv.wait(lk, [&s] { return s.done.load(std::memory_order_acquire); });
    return std::move(*s.result);
}

/// As above, the caller never driving.
template <class... R, class Start>
std::tuple<std::error_code, R...> wait_for_completion(bool on_own_thread, Start&& start) {
    return wait_for_completion<R...>(on_own_thread, drive_options{}, std::forward<Start>(start));
}

} // namespace zklock::detail
