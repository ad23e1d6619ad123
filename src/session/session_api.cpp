// The public Session (session.hpp) over session_impl: construction on an
// executor or a thread of its own, connect, close, subscriptions.
#include "support/blocking_call.hpp"
#include "support/io_seam.hpp"
#include "session/session_impl.hpp"

#include "fsm/client_log.hpp"
#include "fsm/limits.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/dispatch.hpp>

#include <zookeeper_log.h>

#include <cstdio>
#include <future>

namespace zklock {
namespace asio = boost::asio;

// ---- Session ---------------------------------------------------------------------

Subscription::~Subscription() { reset(); }

void Subscription::reset() noexcept {
    if (auto impl = impl_.lock()) impl->remove_listener(id_);
    impl_.reset();
    id_ = 0;
}

namespace {
SessionOptions checked(SessionOptions options) {
    if (const auto check = detail::validate_session_options(options); !check)
        throw error(check.error, "zklock::Session: " + check.reason);
    return options;
}
} // namespace

Session::Session(SessionOptions options) {
    options = checked(std::move(options));
    auto own = detail::own_context::start();
    auto ex = asio::any_io_executor(own->ioc.get_executor());
    impl_ = std::make_shared<detail::session_impl>(ex, std::move(options), std::move(own));
    impl_->post([impl = impl_.get()] { impl->start(); });
}

Session::Session(executor_type executor, SessionOptions options)
    : impl_(std::make_shared<detail::session_impl>(std::move(executor), checked(std::move(options)), nullptr)) {
    impl_->post([impl = impl_.get()] { impl->start(); });
}

Session::~Session() {
    impl_->close_and_wait();
    impl_->shutdown_own_thread();
}

void Session::close() noexcept { impl_->close_and_wait(); }

session_state Session::state() const noexcept { return impl_->state(); }
std::int64_t Session::session_id() const noexcept { return impl_->session_id(); }
std::chrono::milliseconds Session::negotiated_timeout() const noexcept { return impl_->negotiated_timeout(); }
const SessionOptions& Session::options() const noexcept { return impl_->options(); }
std::string Session::identity() const { return zklock::identity(impl_->options().auth); }
Session::executor_type Session::get_executor() const noexcept { return impl_->user_executor(); }

Subscription Session::subscribe(std::function<void(session_event, std::int64_t)> callback) {
    Subscription s;
    s.impl_ = impl_;
    s.id_ = impl_->add_listener(std::move(callback));
    return s;
}

void Session::async_connect_impl(asio::any_completion_handler<void(std::error_code)> handler) {
    struct op {
        asio::any_completion_handler<void(std::error_code)> handler;
        detail::timer timer;
        std::uint64_t waiter = 0;
        std::uint64_t refusals = 0;
        bool done = false;
    };
    auto impl = impl_;
    auto o = std::make_shared<op>(op{std::move(handler), detail::timer(impl->strand()), 0, 0, false});
    auto finish = [impl, o](std::error_code ec) {
        if (o->done) return;
        o->done = true;
        o->timer.cancel();
        if (o->waiter) impl->cancel_connect_waiter(o->waiter);
        if (o->refusals) impl->cancel_refusal_waiter(o->refusals);
        detail::post_completion(std::move(o->handler), impl->user_executor(), ec);
    };
    auto slot = asio::get_associated_cancellation_slot(o->handler);
    if (slot.is_connected()) {
        slot.assign([impl, finish](asio::cancellation_type) {
            impl->post([finish] { finish(detail::operation_aborted()); });
        });
    }
    impl->post([impl, o, finish] {
        o->timer.expires_after(impl->options().connect_timeout);
        o->timer.async_wait([impl, finish](boost::system::error_code ec) {
            if (!ec) finish(make_error_code(errc::timeout));
        });
        o->waiter = impl->when_connected(finish);
        // Every address refusing is an answer: nothing listens there now.
        if (!o->done) o->refusals = impl->when_all_refused([finish] { finish(make_error_code(errc::connection_refused)); });
    });
}

void Session::connect(std::error_code& ec) {
    // On a Session of its own thread, the caller runs the loop while it waits
    // (support/loop_baton.hpp): the blocking calls that follow find it theirs.
    ec = std::get<0>(detail::wait_for_completion<>(impl_->on_session_thread(), {impl_->own_loop(), true},
                                                   [&](auto done) { async_connect_impl(done); }));
}

void Session::connect() {
    std::error_code ec;
    connect(ec);
    if (ec == errc::timeout)
        throw error(ec, "could not connect to " + impl_->options().connect + " within " +
                            std::to_string(impl_->options().connect_timeout.count()) + " ms");
    if (ec == errc::connection_refused)
        throw error(ec, "could not connect to " + impl_->options().connect);
    if (ec == errc::invalid_argument) throw error(ec, "zklock::Session: invalid connect string '" + impl_->options().connect + "'");
    throw_if(ec, "zklock::Session::connect");
}

} // namespace zklock
