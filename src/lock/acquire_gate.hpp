// The acquire front half the Redis, PostgreSQL and flock backends share: one
// acquire per lock object at a time (a second one is errc::already_acquiring),
// the busy/held snapshot the public API reads from any thread, and the id of
// the acquire a cancellation slot was given to, so that a signal bound to an
// earlier acquire can stop neither a later one nor free a hold. (The ZooKeeper
// engine makes the same decisions on its strand, contender.cpp.)
#pragma once

#include <zklock/error.hpp>
#include <zklock/lock_stats.hpp>

#include "support/io_seam.hpp"

#include <boost/asio/cancellation_signal.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <system_error>

namespace zklock::detail {

class acquire_gate {
public:
    /// Any thread: claims the object for a new acquire and returns its id
    /// (never 0); 0 when the object already acquires or holds.
    std::uint64_t begin() noexcept {
        if (busy_.exchange(true)) return 0;
        started_ = now();
        const auto id = next_id_.fetch_add(1) + 1;
        running_ = id;
        return id;
    }
    /// True while acquire `id` has not ended: a cancellation for it applies.
    bool running(std::uint64_t id) const noexcept { return id != 0 && running_.load() == id; }
    /// The acquire in progress (0: none).
    std::uint64_t running() const noexcept { return running_.load(); }
    /// Backend thread: the running acquire ended, granted or not.
    void end(bool granted) noexcept {
        running_ = 0;
        if (granted) {
            const auto t = now();
            total_wait_ += t - started_.load();
            held_since_ = t;
            held_ = true;
        } else {
            busy_ = false;
        }
    }
    /// Any thread, the user's release: true when it held; the object takes a
    /// new acquire from now on.
    bool release() noexcept {
        if (!held_.exchange(false)) return false;
        total_hold_ += now() - held_since_.load();
        busy_ = false;
        return true;
    }
    /// Backend thread: the hold ended without the user (lost, shut down); true
    /// when it held. The object takes a new acquire before held() turns false,
    /// so an acquire made on seeing held() false is never refused.
    bool end_hold() noexcept {
        if (!held_.load()) return false;
        busy_ = false;
        if (!held_.exchange(false)) return false;
        total_hold_ += now() - held_since_.load();
        return true;
    }
    bool held() const noexcept { return held_.load(); }
    bool busy() const noexcept { return busy_.load(); }
    /// `s` with the time waited for grants and the time held, summed.
    lock_stats with_times(lock_stats s) const noexcept {
        s.total_wait = std::chrono::nanoseconds(total_wait_.load());
        s.total_hold = std::chrono::nanoseconds(total_hold_.load());
        return s;
    }

private:
    std::atomic<bool> busy_{false};
    std::atomic<bool> held_{false};
    std::atomic<std::uint64_t> running_{0};
    std::atomic<std::uint64_t> next_id_{0};
    // Steady-clock nanoseconds.
    static std::int64_t now() noexcept {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(detail::clock::now().time_since_epoch())
            .count();
    }
    std::atomic<std::int64_t> started_{0}, held_since_{0}, total_wait_{0}, total_hold_{0};
};

/// The start of every backend's acquire(): claims `self`'s gate (the member
/// `gate`); when the object already acquires or holds, `post`s the refusal to
/// `callback`; otherwise gives `slot` a handler that `post`s `abort(*self)` as
/// long as this acquire still runs. Returns the acquire's id, or 0 when refused.
template <class Backend, class Post, class Abort>
std::uint64_t begin_acquire(const std::shared_ptr<Backend>& self, acquire_gate Backend::*gate, const Post& post,
                            boost::asio::cancellation_slot slot,
                            std::function<void(std::error_code, bool)>& callback, Abort abort) {
    const auto id = ((*self).*gate).begin();
    if (id == 0) {
        post([cb = std::move(callback)] { cb(make_error_code(errc::already_acquiring), false); });
        return 0;
    }
    if (slot.is_connected()) {
        slot.assign([weak = std::weak_ptr<Backend>(self), gate, post, abort, id](boost::asio::cancellation_type) {
            if (auto s = weak.lock())
                post([s, gate, abort, id] {
                    if (((*s).*gate).running(id)) abort(*s);
                });
        });
    }
    return id;
}

} // namespace zklock::detail
