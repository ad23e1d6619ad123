#include <zklock/backend.hpp>
#include <zklock/lock.hpp>

#include "lock/lock_frontend.hpp"
#include "support/io_seam.hpp"

namespace zklock {

const char* to_string(dead_holder_release r) noexcept {
    switch (r) {
    case dead_holder_release::session_end: return "session end";
    case dead_holder_release::ttl_expiry: return "TTL expiry";
    case dead_holder_release::connection_end: return "connection end";
    case dead_holder_release::process_exit: return "process exit";
    }
    return "unknown";
}

std::error_code validate_lock_name(std::string_view name, std::string* reason) {
    auto refuse = [&](const char* why) {
        if (reason) *reason = why;
        return make_error_code(errc::invalid_path);
    };
    if (name.empty()) return refuse("lock name is empty");
    if (name.size() > 200) return refuse("lock name is longer than 200 characters");
    for (const char c : name) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                        c == '_' || c == '-';
        if (!ok) return refuse("lock name may hold only letters, digits, '.', '_' and '-'");
    }
    if (name == "." || name == "..") return refuse("lock name cannot be '.' or '..'");
    return {};
}

Lock::Lock(std::shared_ptr<LockBackend> backend) : backend_(std::move(backend)) {}

Lock::Lock(std::shared_ptr<LockBackend> backend, std::string subject)
    : backend_(std::move(backend)), subject_(std::move(subject)) {}

Lock& Lock::operator=(Lock&& other) noexcept {
    if (this != &other) {
        if (backend_) backend_->shutdown();
        backend_ = std::move(other.backend_);
        subject_ = std::move(other.subject_);
    }
    return *this;
}

Lock::~Lock() {
    if (backend_) backend_->shutdown();
}

void Lock::throw_failure(const std::error_code& ec, const char* op) const {
    if (!ec) return;
    std::string what = std::string("zklock::Lock::") + op + (subject_.empty() ? "" : " " + subject_);
    if (ec == errc::already_acquiring) throw error(ec, what);  // the code's message says it all
    const auto detail = backend_->failure_detail();
    throw error(ec, what + (detail.empty() ? std::string() : " (" + detail + ")"));
}

bool Lock::acquire_blocking(std::optional<std::chrono::steady_clock::time_point> deadline, bool no_wait,
                            std::error_code& ec) {
    return detail::acquire_blocking(*backend_, deadline, no_wait, ec);
}

void Lock::lock(std::error_code& ec) { acquire_blocking(std::nullopt, false, ec); }

void Lock::lock() {
    std::error_code ec;
    lock(ec);
    throw_failure(ec, "lock");
}

bool Lock::try_lock(std::error_code& ec) { return acquire_blocking(std::nullopt, true, ec); }

bool Lock::try_lock() {
    std::error_code ec;
    const bool ok = try_lock(ec);
    throw_failure(ec, "try_lock");
    return ok;
}

std::string Lock::failure_detail() const { return backend_->failure_detail(); }

void Lock::unlock() noexcept { backend_->release({}); }

void Lock::async_lock_impl(boost::asio::any_completion_handler<void(std::error_code)> handler) {
    detail::async_lock(*backend_, std::move(handler));
}

void Lock::async_try_lock_impl(std::optional<std::chrono::steady_clock::time_point> deadline, bool no_wait,
                               boost::asio::any_completion_handler<void(std::error_code, bool)> handler) {
    detail::async_acquire(*backend_, deadline, no_wait, std::move(handler));
}

void Lock::async_unlock_impl(boost::asio::any_completion_handler<void(std::error_code)> handler) {
    detail::async_release(*backend_, std::move(handler));
}

void Lock::async_wait_lost_impl(boost::asio::any_completion_handler<void(std::error_code)> handler) {
    detail::async_wait_lost(*backend_, std::move(handler));
}

void Lock::on_lost(std::function<void(std::error_code)> callback) { backend_->on_lost(std::move(callback)); }
bool Lock::is_held() const noexcept { return backend_->held(); }
std::int64_t Lock::fencing_token() const noexcept { return backend_->fencing_token(); }
std::optional<std::chrono::milliseconds> Lock::safe_for() const noexcept {
    const auto until = backend_->safe_until();
    if (!until) return std::nullopt;
    const auto left = *until - detail::clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return std::chrono::milliseconds(0);
    return std::chrono::duration_cast<std::chrono::milliseconds>(left);
}
lock_capabilities Lock::capabilities() const noexcept { return backend_->capabilities(); }

lock_stats Lock::stats() const noexcept { return backend_->stats(); }

} // namespace zklock
