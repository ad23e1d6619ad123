// Asio plumbing shared by the ZooKeeper session and every other backend:
// completing user handlers, the own-thread io_context, the cancellation code.
// No ZooKeeper here, so the Redis and PostgreSQL libraries need no ZooKeeper headers.
#pragma once

#include "support/loop_baton.hpp"

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/execution.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <future>
#include <functional>
#include <memory>
#include <system_error>
#include <thread>

#include <pthread.h>

namespace zklock::detail {

/// Completes a user handler: posted through the session's executor, then
/// dispatched to the handler's associated executor. User completions never run
/// inline inside a C callback or on the strand. A cancellation handler the
/// operation installed in the handler's slot is removed right before the call.
/// The handler's executor has outstanding work from this call until the handler
/// has run there, so a user io_context waiting only for it stays in run().
template <class Handler, class... Args>
void post_completion(Handler handler, const boost::asio::any_io_executor& io_ex, Args... args) {
    auto work = boost::asio::prefer(boost::asio::get_associated_executor(handler, io_ex),
                                    boost::asio::execution::outstanding_work.tracked);
    boost::asio::post(io_ex, [h = std::move(handler), io_ex, work = std::move(work), ... a = std::move(args)]() mutable {
        auto ex = boost::asio::get_associated_executor(h, io_ex);
        // A copy of the work, not the work: this lambda's own is released only
        // after dispatch returned. Asio signals the handler's io_context after
        // queueing; had the handler carried the only work, its thread could run
        // it, see no work left, return from run() and destroy the io_context
        // before that signal (ThreadSanitizer: tsan_tests).
        boost::asio::dispatch(ex, [h = std::move(h), work, ... a = std::move(a)]() mutable {
            // The slot belongs to the handler's executor (where the user emits on
            // it): detach our cancellation handler there, not on the strand.
            auto slot = boost::asio::get_associated_cancellation_slot(h);
            if (slot.is_connected()) slot.clear();
            std::move(h)(std::move(a)...);
        });
    });
}

/// How zklock reports a cancelled operation.
inline std::error_code operation_aborted() noexcept { return std::make_error_code(std::errc::operation_canceled); }

/// The io_context and thread of a Session that brought no executor. The thread
/// holds the context, so a Session destroyed by one of its own handlers does not
/// destroy the io_context under the running thread. A blocking call may run
/// the loop on its caller's thread instead (baton, drive_until).
struct own_context : std::enable_shared_from_this<own_context> {
    boost::asio::io_context ioc{1};
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard{ioc.get_executor()};
    std::promise<void> finished;
    std::future<void> finished_future = finished.get_future();
    std::atomic<bool> done{false};  // the thread has left run(): nothing runs the io_context
    loop_baton baton{ioc};
    /// Handlers posted through the owner's post() (session_impl::post) and not
    /// run yet: a driver runs them before it gives the loop up.
    std::atomic<long> queued{0};
    /// The driver runs a handler's work inline (session_impl::run_or_post); driver only.
    bool inline_running = false;
    std::thread thread;

    static std::shared_ptr<own_context> start() {
        auto c = std::make_shared<own_context>();
        c->thread = std::thread([c] {
            c->ioc.run();
            c->baton.stop();
            c->done = true;
            c->finished.set_value();
        });
        return c;
    }
    /// The baton's holder runs the loop on its thread until `done()`; then,
    /// with `drain` or handlers queued, whatever is ready. False when the loop
    /// stopped first (`done()` may come later, from another thread).
    template <class Done> bool drive_until(Done&& done, bool drain) {
        while (!done())
            if (ioc.run_one() == 0) return false;
        if (drain || queued.load() > 0) ioc.poll();
        return true;
    }
    /// start(), on a thread that blocks SIGPIPE: for the clients that write to
    /// their sockets with write(2) (hiredis, libmemcached), a server that closed
    /// the connection must give EPIPE, not kill the process.
    static std::shared_ptr<own_context> start_blocking_sigpipe() {
        auto c = start();
        boost::asio::post(c->ioc, [] {
            sigset_t set;
            sigemptyset(&set);
            sigaddset(&set, SIGPIPE);
            pthread_sigmask(SIG_BLOCK, &set, nullptr);
        });
        return c;
    }
    /// Lets the thread finish the handlers still queued (the close cancels every
    /// wait), then joins it; handlers still queued after `drain` run here. When
    /// work is left after `drain` (a connect that a partition keeps waiting),
    /// `overdue` is called first and gets a moment to end it (it should close
    /// what still waits, so that no handler stays behind holding its owner).
    /// Called on the thread itself, it only lets the thread end when its work
    /// is done.
    void stop_and_join(std::chrono::milliseconds drain = std::chrono::seconds(5),
                       const std::function<void()>& overdue = {}) {
        const bool driver = baton.driven_here();
        baton.stop();
        guard.reset();
        if (!thread.joinable()) return;
        // From the thread itself, or from a caller driving the loop (a handler
        // it runs destroys the Session): the loop's thread finishes alone.
        if (thread.get_id() == std::this_thread::get_id() || driver) {
            thread.detach();
            return;
        }
        if (finished_future.wait_for(drain) != std::future_status::ready) {
            if (overdue) overdue();
            if (!overdue || finished_future.wait_for(std::chrono::seconds(1)) != std::future_status::ready) ioc.stop();
        }
        thread.join();
        ioc.restart();
        ioc.poll();
    }
    ~own_context() {
        if (thread.joinable()) thread.detach();  // only reached on the thread itself
    }
};

} // namespace zklock::detail
