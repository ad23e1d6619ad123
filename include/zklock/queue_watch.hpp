// zklock::QueueWatch: the queue of one lock, listed again after every change
// (`zklock status --watch`, dashboards, an operator's view of who waits).
#pragma once

#include <zklock/export.hpp>
#include <zklock/mutex.hpp>
#include <zklock/session.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/async_result.hpp>

#include <memory>
#include <string>
#include <system_error>

namespace zklock {

namespace detail {
struct queue_watch_state;
}

/// Follows the queue of the lock at one path. The first next() lists the queue
/// at once; each later one completes after the queue changed since the listing
/// before it (a contender queued or left, a grant passed on, the lock directory
/// created or deleted) with a fresh listing, as list_queue gives it. A listing
/// leaves one child watch on the server, so the changes between two calls come
/// as one listing and a queue that does not change costs nothing. Changes to a
/// contender's data alone are not followed.
///
/// Across a lost connection the server's watch stays and fires on reconnection
/// if the queue changed meanwhile; after the session expired (its watches die
/// with it) the next listing is taken as soon as the session is back. Only the
/// first listing waits for the connection at most SessionOptions::connect_timeout
/// (errc::timeout); later ones wait for it as long as it takes.
///
/// Errors: errc::invalid_path (constructor, thrown), errc::no_auth (the lock's
/// ACL does not let the session read it), errc::no_node (the connect string's
/// chroot does not exist), errc::session_closed, errc::invalid_argument (a next()
/// while another is pending), std::errc::operation_canceled (cancel(), the
/// watch destroyed, or the completion's cancellation slot). After an error the
/// next call lists at once.
///
/// Thread-safety: one next at a time per object; completions are posted to the
/// Session's executor (or the handler's associated executor).
class ZKLOCK_EXPORT QueueWatch {
public:
    /// Follows `path` through `session`, which must outlive this object.
    QueueWatch(Session& session, std::string path);
    /// Cancels a pending next (operation_canceled).
    ~QueueWatch();
    QueueWatch(const QueueWatch&) = delete;
    QueueWatch& operator=(const QueueWatch&) = delete;

    /// The lock path followed.
    const std::string& path() const noexcept;

    /// Blocks until the next listing (see the class); throws zklock::error.
    queue_listing next();
    /// As above; errors in `ec` (errc::would_deadlock on the session's thread).
    queue_listing next(std::error_code& ec);
    /// Completes with the next listing. Signature:
    /// void(std::error_code, queue_listing). Cancellation: terminal, partial and
    /// total (the watch on the server stays; the next call finds its change).
    template <class CompletionToken>
    auto async_next(CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, void(std::error_code, queue_listing)>(
            [this](auto handler) { async_next_impl(std::move(handler)); }, token);
    }
    /// Completes a pending next with operation_canceled; no effect without one.
    void cancel() noexcept;

private:
    void async_next_impl(boost::asio::any_completion_handler<void(std::error_code, queue_listing)> handler);

    std::shared_ptr<detail::queue_watch_state> state_;
};

} // namespace zklock
