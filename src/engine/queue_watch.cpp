#include <zklock/queue_watch.hpp>

#include "support/async_support.hpp"
#include "support/blocking_call.hpp"
#include "session/session_access.hpp"
#include "engine/queue_listing.hpp"
#include "session/session_impl.hpp"

#include "fsm/path.hpp"

#include <future>

namespace zklock {

namespace asio = boost::asio;

namespace detail {

using listing_handler = asio::any_completion_handler<void(std::error_code, queue_listing)>;

// Everything below runs on the session's strand, except the constructor and
// the listener's removal.
struct queue_watch_state : std::enable_shared_from_this<queue_watch_state> {
    std::shared_ptr<session_impl> session;
    std::string path;
    std::uint64_t listener = 0;
    bool changed = true;     // the next call lists at once
    bool first = true;       // no listing has succeeded yet: it gets the connect deadline
    bool listing = false;    // a listing is in flight
    std::unique_ptr<listing_handler> pending;
    std::uint64_t op = 0;    // the pending call's number, for its cancellation

    void complete(std::error_code ec, queue_listing out) {
        auto h = std::move(pending);
        if (!h) return;
        post_completion(std::move(*h), session->user_executor(), ec, std::move(out));
    }

    void request(listing_handler handler, std::uint64_t id) {
        if (pending) {
            post_completion(std::move(handler), session->user_executor(), make_error_code(errc::invalid_argument),
                            queue_listing{});
            return;
        }
        pending = std::make_unique<listing_handler>(std::move(handler));
        op = id;
        if (session->state() == session_state::closed) return complete(session->close_reason(), {});
        if (changed && !listing) list();
    }

    void cancel(std::uint64_t id) {
        if (pending && (id == 0 || id == op)) complete(operation_aborted(), {});
    }

    void on_change() {
        changed = true;
        if (pending && !listing) list();
    }

    void on_session_event(session_event e) {
        if (e == session_event::expired) on_change();  // the server forgot the watch
        else if (e == session_event::closed) complete(session->close_reason(), {});
    }

    void list() {
        changed = false;
        listing = true;
        std::weak_ptr<queue_watch_state> weak = weak_from_this();
        list_queue_async(
            session, path,
            [weak] {
                if (auto self = weak.lock()) self->on_change();
            },
            first,
            [weak](std::error_code ec, queue_listing out) {
                auto self = weak.lock();
                if (!self) return;
                self->listing = false;
                // No watch was left, or nobody took the listing: the next call lists again.
                if (ec || !self->pending) self->changed = true;
                if (!ec) self->first = false;
                self->complete(ec, std::move(out));
            });
    }
};

} // namespace detail

QueueWatch::QueueWatch(Session& session, std::string path) {
    if (const auto check = detail::validate_lock_path(path); !check)
        throw error(check.error, "zklock::QueueWatch: " + check.reason + ": '" + path + "'");
    state_ = std::make_shared<detail::queue_watch_state>();
    state_->session = detail::session_access::session(session);
    state_->path = std::move(path);
    std::weak_ptr<detail::queue_watch_state> weak = state_;
    state_->listener = state_->session->add_listener([weak](session_event e, std::int64_t) {
        if (auto self = weak.lock()) self->on_session_event(e);
    });
}

QueueWatch::~QueueWatch() {
    state_->session->remove_listener(state_->listener);
    cancel();
}

const std::string& QueueWatch::path() const noexcept { return state_->path; }

void QueueWatch::cancel() noexcept {
    state_->session->post([s = state_] { s->cancel(0); });
}

void QueueWatch::async_next_impl(detail::listing_handler handler) {
    static std::atomic<std::uint64_t> ids{0};
    const auto id = ++ids;
    auto slot = asio::get_associated_cancellation_slot(handler);
    if (slot.is_connected()) {
        slot.assign([s = state_, id](asio::cancellation_type) { s->session->post([s, id] { s->cancel(id); }); });
    }
    state_->session->post([s = state_, h = std::move(handler), id]() mutable { s->request(std::move(h), id); });
}

queue_listing QueueWatch::next(std::error_code& ec) {
    auto [e, out] = detail::wait_for_completion<queue_listing>(state_->session->on_session_thread(),
                                                               [&](auto done) { async_next_impl(done); });
    ec = e;
    return std::move(out);
}

queue_listing QueueWatch::next() {
    std::error_code ec;
    auto out = next(ec);
    throw_if(ec, ("zklock::QueueWatch::next " + state_->path).c_str());
    return out;
}

} // namespace zklock
