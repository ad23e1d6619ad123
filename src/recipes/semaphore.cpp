#include <zklock/semaphore.hpp>

#include "support/blocking_call.hpp"
#include "recipes/internal_access.hpp"
#include "session/session_impl.hpp"

#include "fsm/lock_delay.hpp"
#include "fsm/path.hpp"
#include "fsm/reply_kind.hpp"
#include "fsm/limits.hpp"
#include "fsm/lock_node.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>

#include <charconv>
#include <future>
#include <mutex>

namespace zklock {
namespace {
/// A semaphore's lock directory keeps its permit count as "permits=K":
/// written by every waiter's claim (make_waiter), read by stored_permits.
constexpr std::string_view permits_key = "permits=";
} // namespace
namespace asio = boost::asio;

struct Semaphore::failure_record {
    mutable std::mutex mutex;
    std::string detail;
    void keep(const Mutex& failed) {
        auto d = failed.failure_detail();
        std::lock_guard lk(mutex);
        detail = std::move(d);
    }
};

Semaphore::Semaphore(Session& session, std::string path, std::size_t permits, SemaphoreOptions options)
    : session_(session), path_(std::move(path)), permits_(permits), options_(std::move(options)),
      last_failure_(std::make_shared<failure_record>()) {
    const auto check = detail::validate_lock_path(path_);
    if (!check) throw error(check.error, "zklock::Semaphore: " + check.reason + ": '" + path_ + "'");
    if (permits_ == 0) throw error(make_error_code(errc::invalid_argument), "zklock::Semaphore: permits must be at least 1");
    if (permits_ > detail::max_permits)
        throw error(make_error_code(errc::invalid_argument),
                    "zklock::Semaphore: " + std::to_string(permits_) + " permits is more than " +
                        std::to_string(detail::max_permits));
    make_waiter();  // refuses node data or an ACL the server would refuse, now
}

// A waiter is a Mutex under the semaphore's rule; its Lock part is the permit.
Mutex Semaphore::permit() const { return std::move(*make_waiter()); }

std::unique_ptr<Mutex> Semaphore::make_waiter() const {
    detail::queue_rule rule;
    rule.role = detail::node_role::permit;
    rule.permits = permits_;
    rule.dir_data = std::string(permits_key) + std::to_string(permits_);
    MutexOptions mo;
    mo.node_data = options_.node_data;
    mo.acl = options_.acl;
    mo.names = options_.names;  // anything but zklock's: errc::invalid_argument
    mo.lock_delay = options_.lock_delay;
    auto m = detail::internal_access::new_mutex(session_, path_, std::move(mo), std::move(rule));
    if (options_.on_position) m->on_queue_position(options_.on_position);
    if (options_.on_event) m->on_event(options_.on_event);
    return m;
}

std::optional<Lease> Semaphore::acquire_until(std::optional<std::chrono::steady_clock::time_point> deadline,
                                              std::error_code& ec) {
    auto m = make_waiter();
    bool granted = false;
    if (deadline) {
        granted = m->try_lock_until(*deadline, ec);
    } else {
        m->lock(ec);
        granted = !ec;
    }
    if (ec) last_failure_->keep(*m);
    if (ec || !granted) return std::nullopt;
    return Lease(std::move(m));
}

Lease Semaphore::acquire(std::error_code& ec) {
    auto lease = acquire_until(std::nullopt, ec);
    return lease ? std::move(*lease) : Lease();
}

Lease Semaphore::acquire() {
    std::error_code ec;
    auto lease = acquire(ec);
    throw_if(ec, ("zklock::Semaphore::acquire " + path_).c_str());
    return lease;
}

std::optional<Lease> Semaphore::try_acquire(std::error_code& ec) {
    auto m = make_waiter();
    const bool granted = m->try_lock(ec);
    if (ec) last_failure_->keep(*m);
    if (ec || !granted) return std::nullopt;
    return Lease(std::move(m));
}

std::optional<Lease> Semaphore::try_acquire() {
    std::error_code ec;
    auto lease = try_acquire(ec);
    throw_if(ec, "zklock::Semaphore::try_acquire " + path_);
    return lease;
}

template <class Result>
void Semaphore::start_waiter(std::optional<std::chrono::steady_clock::time_point> deadline, bool no_wait,
                             asio::any_completion_handler<void(std::error_code, Result)> handler) {
    auto waiter = std::make_shared<std::unique_ptr<Mutex>>(make_waiter());
    Mutex& m = **waiter;
    const auto slot = asio::get_associated_cancellation_slot(handler);
    auto ex = session_.get_executor();
    // The inner completion runs on the user handler's executor, where the user
    // also emits on the slot: the slot is detached there, never on the session thread.
    auto user_ex = asio::get_associated_executor(handler, ex);
    auto done = asio::bind_cancellation_slot(
        slot, asio::bind_executor(user_ex, [waiter, ex, failure = last_failure_,
                                            h = std::move(handler)](std::error_code ec, bool granted) mutable {
            if (ec) failure->keep(**waiter);
            Result result{};
            if (!ec && granted) result = Lease(std::move(*waiter));
            detail::post_completion(std::move(h), ex, ec, std::move(result));
        }));
    if (no_wait) m.async_try_lock(std::move(done));
    else if (!deadline) m.async_try_lock_for(std::chrono::hours::max(), std::move(done));  // no deadline
    else m.async_try_lock_for(*deadline - std::chrono::steady_clock::now(), std::move(done));
}

void Semaphore::async_acquire_impl(asio::any_completion_handler<void(std::error_code, Lease)> handler) {
    start_waiter<Lease>(std::nullopt, false, std::move(handler));
}

void Semaphore::async_try_acquire_impl(std::optional<std::chrono::steady_clock::time_point> deadline, bool no_wait,
                                       asio::any_completion_handler<void(std::error_code, std::optional<Lease>)> handler) {
    start_waiter<std::optional<Lease>>(deadline, no_wait, std::move(handler));
}

std::vector<contender> Semaphore::contenders() const { return list_contenders(session_, path_); }

std::string Semaphore::failure_detail() const {
    std::lock_guard lk(last_failure_->mutex);
    return last_failure_->detail;
}

std::optional<std::size_t> stored_permits(Session& session, const std::string& path, std::error_code& ec) {
    ec.clear();
    if (const auto check = detail::validate_lock_path(path); !check) {
        ec = check.error;
        return std::nullopt;
    }
    const auto impl = detail::internal_access::session(session);
    const auto [refused, rc, data] =
        detail::wait_for_completion<int, std::string>(impl->on_session_thread(), [&](auto done) {
            impl->post([impl, path, done] {
                impl->get_data(path, {}, [done](int rc, std::string data, const detail::node_stat&) {
                    done({}, rc, std::move(data));
                });
            });
        });
    if (refused) {
        ec = refused;
        return std::nullopt;
    }
    if (rc == ZNONODE) return std::nullopt;
    if (rc != ZOK) {
        ec = detail::reply_error(rc);
        return std::nullopt;
    }
    // Lock-delay's release record, if any, follows the count.
    const auto base = detail::split_release_marker(data).base;
    if (!base.starts_with(permits_key)) return std::nullopt;
    std::size_t permits = 0;
    const auto digits = base.substr(permits_key.size());
    const auto [end, parse] = std::from_chars(digits.data(), digits.data() + digits.size(), permits);
    if (parse != std::errc() || end != digits.data() + digits.size() || permits == 0) return std::nullopt;
    return permits;
}

} // namespace zklock
