#include <zklock/mutex.hpp>

#include "contender.hpp"
#include "lock_frontend.hpp"

#include <zklock/detail/path.hpp>

#include <future>

namespace zklock {
namespace asio = boost::asio;

namespace {

std::shared_ptr<detail::contender_engine> make_contender(Session& session, const std::string& path,
                                                         const MutexOptions& options, detail::queue_rule rule = {}) {
    rule.watch_parent = rule.watch_parent || options.watch_all_children;
    return detail::contender_engine::make(session.impl(), path, std::move(rule),
                                   options.node_data.empty() ? detail::default_node_data() : options.node_data);
}

} // namespace

Mutex::Mutex(Session& session, std::string path, MutexOptions options) : path_(std::move(path)) {
    const auto check = detail::validate_lock_path(path_);
    if (!check) throw error(check.error, "zklock::Mutex: " + check.reason + ": '" + path_ + "'");
    contender_ = make_contender(session, path_, options);
}

Mutex::Mutex(Session& session, std::string path, MutexOptions options, detail::queue_rule rule)
    : path_(std::move(path)) {
    const auto check = detail::validate_lock_path(path_);
    if (!check) throw error(check.error, "zklock: " + check.reason + ": '" + path_ + "'");
    contender_ = make_contender(session, path_, options, std::move(rule));
}

Mutex::Mutex(Session& session, std::string path, MutexOptions options, std::error_code& ec) : path_(std::move(path)) {
    const auto check = detail::validate_lock_path(path_);
    path_error_ = ec = check.error;
    contender_ = make_contender(session, path_, options);
}

Mutex::~Mutex() { contender_->shutdown(); }

bool Mutex::acquire_blocking(std::optional<std::chrono::steady_clock::time_point> deadline, bool no_wait,
                             std::error_code& ec) {
    if (path_error_) {
        ec = path_error_;
        return false;
    }
    return detail::acquire_blocking(*contender_, deadline, no_wait, ec);
}

void Mutex::lock(std::error_code& ec) { acquire_blocking(std::nullopt, false, ec); }

void Mutex::lock() {
    std::error_code ec;
    lock(ec);
    if (ec == errc::already_acquiring)
        throw std::system_error(std::make_error_code(std::errc::resource_deadlock_would_occur),
                                "zklock::Mutex::lock: this Mutex already holds or waits for " + path_);
    throw_if(ec, ("zklock::Mutex::lock " + path_).c_str());
}

bool Mutex::try_lock(std::error_code& ec) { return acquire_blocking(std::nullopt, true, ec); }

bool Mutex::try_lock() {
    std::error_code ec;
    const bool ok = try_lock(ec);
    throw_if(ec, "zklock::Mutex::try_lock");
    return ok;
}

bool Mutex::try_lock_until_steady(std::chrono::steady_clock::time_point deadline, std::error_code& ec) {
    return acquire_blocking(deadline, false, ec);
}

void Mutex::unlock() noexcept { contender_->release({}); }

void Mutex::async_lock_impl(asio::any_completion_handler<void(std::error_code)> handler) {
    if (path_error_) return detail::post_completion(std::move(handler), contender_->executor(), path_error_);
    detail::async_lock(*contender_, std::move(handler));
}

void Mutex::async_try_lock_impl(std::optional<std::chrono::steady_clock::time_point> deadline, bool no_wait,
                                asio::any_completion_handler<void(std::error_code, bool)> handler) {
    if (path_error_) return detail::post_completion(std::move(handler), contender_->executor(), path_error_, false);
    detail::async_acquire(*contender_, deadline, no_wait, std::move(handler));
}

void Mutex::async_unlock_impl(asio::any_completion_handler<void(std::error_code)> handler) {
    detail::async_release(*contender_, std::move(handler));
}

void Mutex::async_wait_lost_impl(asio::any_completion_handler<void(std::error_code)> handler) {
    detail::async_wait_lost(*contender_, std::move(handler));
}

void Mutex::on_lost(std::function<void(std::error_code)> callback) { contender_->on_lost(std::move(callback)); }

void Mutex::on_queue_position(std::function<void(std::size_t)> callback) {
    auto shared = std::make_shared<std::function<void(std::size_t)>>(std::move(callback));
    contender_->on_position(
        [shared, ex = contender_->session()->user_executor()](std::size_t p) { asio::post(ex, [shared, p] { (*shared)(p); }); });
}
bool Mutex::is_held() const noexcept { return contender_->held(); }
std::int64_t Mutex::fencing_token() const noexcept { return contender_->fencing_token(); }
std::string Mutex::node_path() const { return contender_->node_path(); }
std::optional<std::size_t> Mutex::queue_position() const noexcept { return contender_->queue_position(); }
lock_stats Mutex::stats() const { return contender_->stats(); }

std::vector<contender> Mutex::contenders(std::error_code& ec) const {
    if (path_error_) {
        ec = path_error_;
        return {};
    }
    return detail::list_contenders(contender_->session(), path_, ec);
}

std::vector<contender> Mutex::contenders() const {
    std::error_code ec;
    auto out = contenders(ec);
    throw_if(ec, "zklock::Mutex::contenders");
    return out;
}

} // namespace zklock
