// Who runs an own io_context (own_context, async_support.hpp): the thread
// made for it, or a caller waiting in a blocking call. A caller that takes
// the baton runs the loop itself (io_context::run_one on its own thread)
// while its call waits, so the call needs no thread handoff: no futex, no
// wake-up of the loop's thread, no context switch. The loop's thread steps
// out of the loop (parks inside a handler of its own) when a caller asks it
// to, and stays out while callers keep coming: it takes the loop back once
// no caller has run it for idle_limit, at once when work is posted from
// another thread (nudge), and for good when stopped. A caller that finds the
// baton taken waits as before, on the loop's thread or on the driver.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace zklock::detail {

class loop_baton {
public:
    using clock = std::chrono::steady_clock;
    /// How long the loop may stay unrun after a caller's last turn before the
    /// loop's thread runs it again (timers due, a notification, the C client's
    /// ping): the latency of what arrives while no caller runs the loop.
    static constexpr std::chrono::milliseconds idle_limit{10};
    /// The parked thread looks again after idle_limit, twice as long each time
    /// it finds a caller driving, up to this: a caller that keeps driving (a
    /// contended wait) wakes it 20 times a second, not 100, and one that goes
    /// away after a long drive leaves the loop unrun for at most this long.
    static constexpr std::chrono::milliseconds busy_limit{50};

    explicit loop_baton(boost::asio::io_context& ioc) noexcept : ioc_(ioc) {}
    loop_baton(const loop_baton&) = delete;
    loop_baton& operator=(const loop_baton&) = delete;

    /// A caller (not the loop's thread) takes the loop for this thread. When
    /// the loop's thread runs it and `may_park`, asks it to step out and
    /// waits for that; otherwise (or taken by another caller, or stopped)
    /// returns false and the caller waits as before.
    bool begin(bool may_park) {
        std::unique_lock lk(m_);
        if (stopping_ || driving_) return false;
        if (!parked_) {
            if (!may_park) return false;
            ++wanting_;
            if (!park_asked_) {
                park_asked_ = true;
                lk.unlock();
                boost::asio::post(ioc_, [this] { park(); });
                lk.lock();
            }
            c_cv_.wait(lk, [&] { return (parked_ && !driving_) || stopping_; });
            --wanting_;
            if (stopping_) return false;
        }
        driving_ = true;
        driver_.store(std::this_thread::get_id(), std::memory_order_relaxed);
        return true;
    }

    /// The driver gives the loop up (its thread parked still, until idle_limit
    /// or a nudge). `queued`: work is posted that nobody ran.
    void end(bool queued) noexcept {
        std::lock_guard lk(m_);
        driving_ = false;
        driver_.store(std::thread::id(), std::memory_order_relaxed);
        last_end_ = clock::now();
        if (queued) {
            resume_ = true;
            t_cv_.notify_one();
        }
        if (wanting_ > 0) c_cv_.notify_all();
    }

    /// True on the thread that holds the baton.
    bool driven_here() const noexcept {
        return driver_.load(std::memory_order_relaxed) == std::this_thread::get_id();
    }

    /// Work was posted from a thread that neither runs nor drives the loop:
    /// the loop's thread, parked with no driver, runs it now.
    void nudge() noexcept {
        if (!parked_flag_.load(std::memory_order_acquire)) return;
        std::lock_guard lk(m_);
        if (!parked_ || driving_) return;  // the driver runs it, or end() sees it queued
        resume_ = true;
        t_cv_.notify_one();
    }

    /// Stops: the loop's thread returns to the loop for good, waiting callers
    /// give up, and no caller takes the loop again.
    void stop() noexcept {
        std::lock_guard lk(m_);
        stopping_ = true;
        t_cv_.notify_all();
        c_cv_.notify_all();
    }

private:
    // The loop's thread, inside a handler: out of the loop until a caller no
    // longer needs it.
    void park() {
        std::unique_lock lk(m_);
        park_asked_ = false;
        parked_ = true;
        parked_flag_.store(true, std::memory_order_release);
        last_end_ = clock::now();
        c_cv_.notify_all();
        auto wait = std::chrono::duration_cast<clock::duration>(idle_limit);
        while (!stopping_) {
            if (driving_ || wanting_ > 0) {
                t_cv_.wait_for(lk, wait);
                wait = std::min<clock::duration>(2 * wait, busy_limit);
                continue;
            }
            const auto now = clock::now();
            if (resume_ || now - last_end_ >= idle_limit) break;
            wait = std::chrono::duration_cast<clock::duration>(idle_limit);
            t_cv_.wait_until(lk, last_end_ + idle_limit);
        }
        resume_ = false;
        parked_ = false;
        parked_flag_.store(false, std::memory_order_release);
    }

    boost::asio::io_context& ioc_;
    std::mutex m_;
    std::condition_variable t_cv_;  // the parked loop thread waits here
    std::condition_variable c_cv_;  // callers wait here for the park
    bool parked_ = false;           // the loop's thread is in park()
    bool park_asked_ = false;       // a park() is posted
    bool driving_ = false;          // a caller runs the loop
    bool resume_ = false;           // the parked thread is to run the loop again
    bool stopping_ = false;
    int wanting_ = 0;               // callers waiting in begin() for the park
    clock::time_point last_end_{};  // the last driver's end()
    std::atomic<bool> parked_flag_{false};  // parked_, read without the mutex
    std::atomic<std::thread::id> driver_{};
};

} // namespace zklock::detail
