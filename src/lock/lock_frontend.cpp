#include "lock/lock_frontend.hpp"

#include "support/blocking_call.hpp"
#include "support/io_seam.hpp"
#include "support/async_support.hpp"

#include <future>

namespace zklock::detail {
namespace asio = boost::asio;

namespace {
// Moves a user's completion handler into a callback the backend calls on its
// own thread, which posts the handler to its associated executor. The handler
// and its work guard share one allocation; the callback holds a pointer to it.
// While the operation is pending, the handler's executor has outstanding work
// (as every Asio operation gives it): a user's io_context that runs only this
// handler does not return from run() before the handler has run.
template <class... Args, class Handler> auto post_to(Handler handler, const asio::any_io_executor& fallback) {
    using work_type = decltype(asio::prefer(asio::get_associated_executor(handler, fallback),
                                            asio::execution::outstanding_work.tracked));
    struct pending {
        work_type work;  // declared first, so a handler never called is destroyed while its executor has work
        Handler handler;
    };
    auto work = asio::prefer(asio::get_associated_executor(handler, fallback), asio::execution::outstanding_work.tracked);
    auto p = std::make_shared<pending>(pending{std::move(work), std::move(handler)});
    return [p, fallback](Args... args) {
        post_completion(std::move(p->handler), fallback, args...);  // which keeps the work until the handler ran
        p->work = work_type();
    };
}

// As std::timed_mutex::try_lock_for: a deadline that has already passed
// (try_lock_for(0)) means one try, not an immediate "not acquired".
void try_once_if_passed(std::optional<time_point>& deadline, bool& no_wait) {
    if (deadline && *deadline <= detail::clock::now()) {
        deadline.reset();
        no_wait = true;
    }
}

// How a blocking call on `backend` may drive its loop (support/blocking_call.hpp).
drive_options drive_of(const LockBackend& backend) {
    const auto* d = dynamic_cast<const drivable*>(&backend);
    return d ? d->drive() : drive_options{};
}
} // namespace

bool acquire_blocking(LockBackend& backend, std::optional<time_point> deadline, bool no_wait, std::error_code& ec) {
    try_once_if_passed(deadline, no_wait);
    const auto [e, acquired] = detail::wait_for_completion<bool>(
        backend.on_backend_thread(), drive_of(backend), [&](auto done) { backend.acquire(deadline, no_wait, {}, done); });
    ec = e;
    return acquired;
}

bool acquire_blocking(LockBackend& backend, const acquire_start& start, std::optional<time_point> deadline,
                      std::error_code& ec) {
    bool no_wait = false;
    try_once_if_passed(deadline, no_wait);
    const auto [e, acquired] = detail::wait_for_completion<bool>(
        backend.on_backend_thread(), drive_of(backend), [&](auto done) { start(deadline, no_wait, {}, done); });
    ec = e;
    return acquired;
}

void async_acquire(LockBackend& backend, const acquire_start& start, std::optional<time_point> deadline,
                   asio::any_completion_handler<void(std::error_code, bool)> handler) {
    bool no_wait = false;
    try_once_if_passed(deadline, no_wait);
    const auto slot = asio::get_associated_cancellation_slot(handler);
    start(deadline, no_wait, slot, post_to<std::error_code, bool>(std::move(handler), backend.executor()));
}

void async_lock(LockBackend& backend, const acquire_start& start,
                asio::any_completion_handler<void(std::error_code)> handler) {
    const auto slot = asio::get_associated_cancellation_slot(handler);
    start(std::nullopt, false, slot,
          [done = post_to<std::error_code>(std::move(handler), backend.executor())](std::error_code e, bool) {
              done(e);
          });
}

void async_acquire(LockBackend& backend, std::optional<time_point> deadline, bool no_wait,
                   asio::any_completion_handler<void(std::error_code, bool)> handler) {
    try_once_if_passed(deadline, no_wait);
    const auto slot = asio::get_associated_cancellation_slot(handler);
    backend.acquire(deadline, no_wait, slot, post_to<std::error_code, bool>(std::move(handler), backend.executor()));
}

void async_lock(LockBackend& backend, asio::any_completion_handler<void(std::error_code)> handler) {
    const auto slot = asio::get_associated_cancellation_slot(handler);
    backend.acquire(std::nullopt, false, slot,
                    [done = post_to<std::error_code>(std::move(handler), backend.executor())](std::error_code e, bool) {
                        done(e);
                    });
}

void async_release(LockBackend& backend, asio::any_completion_handler<void(std::error_code)> handler) {
    auto done = post_to<std::error_code>(std::move(handler), backend.executor());
    if (const auto ec = backend.release(done)) done(ec);
}

void async_wait_lost(LockBackend& backend, asio::any_completion_handler<void(std::error_code)> handler) {
    const auto slot = asio::get_associated_cancellation_slot(handler);
    backend.wait_lost(slot, post_to<std::error_code>(std::move(handler), backend.executor()));
}

} // namespace zklock::detail
