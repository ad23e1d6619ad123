#include <zklock/mutex.hpp>

#include "contender.hpp"
#include "detail/internal_access.hpp"
#include "lock_frontend.hpp"

#include <zklock/detail/path.hpp>

#include <future>

namespace zklock {
namespace asio = boost::asio;

namespace {

// Checks what a Mutex is given, before any server call: the path, the ACL, and
// that the node data fits in one request.
detail::check_result check_input(const Session& session, const std::string& path, const MutexOptions& options,
                                 const detail::queue_rule& rule, const std::string& data) {
    if (auto check = detail::validate_lock_path(path); !check) return check;
    const auto& so = session.options();
    const acl_list& acl = options.acl ? *options.acl : so.acl;
    std::string reason;
    if (const auto ec = validate_acl(acl, !so.auth.empty(), &reason)) return {ec, reason};
    const auto form = detail::form_of(rule.names, rule.role);
    if (!form)
        return {make_error_code(errc::invalid_argument),
                "a Semaphore writes only zklock's node names, not " + std::string(to_string(rule.names)) + "'s"};
    // The request path: chroot, lock path, the name prefix (the server appends the sequence).
    const auto server_path =
        detail::chroot_of(so.connect).size() + path.size() + 1 + detail::node_name_prefix_size(*form);
    return detail::check_node_data(data.size(), server_path, acl, so.max_request_bytes);
}

} // namespace

Mutex::Mutex(Session& session, std::string path, MutexOptions options, detail::queue_rule rule, std::error_code* ec)
    : path_(std::move(path)) {
    rule.watch_parent = rule.watch_parent || options.watch_all_children;
    rule.names = options.names;
    rule.lock_delay = options.lock_delay;
    std::string data = options.node_data.empty() ? detail::default_node_data() : std::move(options.node_data);
    const auto check = check_input(session, path_, options, rule, data);
    if (check.error && !ec) throw error(check.error, "zklock: " + check.reason + ": '" + path_ + "'");
    if (ec) *ec = check.error;
    config_error_ = check.error;
    config_reason_ = check.reason;
    contender_ = detail::contender_engine::make(
        detail::internal_access::session(session), path_, std::move(rule), std::move(data),
        options.acl ? std::make_shared<const detail::c_acl>(std::move(*options.acl)) : nullptr);
}

Mutex::Mutex(Session& session, std::string path, MutexOptions options)
    : Mutex(session, std::move(path), std::move(options), detail::queue_rule{}, nullptr) {}

Mutex::Mutex(Session& session, std::string path, MutexOptions options, std::error_code& ec)
    : Mutex(session, std::move(path), std::move(options), detail::queue_rule{}, &ec) {}

Mutex::~Mutex() { contender_->shutdown(); }

bool Mutex::acquire_blocking(std::optional<std::chrono::steady_clock::time_point> deadline, bool no_wait,
                             std::error_code& ec) {
    if (config_error_) {
        ec = config_error_;
        return false;
    }
    return detail::acquire_blocking(*contender_, deadline, no_wait, ec);
}

void Mutex::lock(std::error_code& ec) { acquire_blocking(std::nullopt, false, ec); }

void Mutex::lock() {
    std::error_code ec;
    lock(ec);
    if (ec == errc::already_acquiring)
        throw error(ec, "zklock::Mutex::lock: this Mutex already holds or waits for " + path_);
    if (ec) {
        const auto detail = failure_detail();
        throw error(ec, "zklock::Mutex::lock " + path_ + (detail.empty() ? std::string() : " (" + detail + ")"));
    }
}

bool Mutex::try_lock(std::error_code& ec) { return acquire_blocking(std::nullopt, true, ec); }

bool Mutex::try_lock() {
    std::error_code ec;
    const bool ok = try_lock(ec);
    throw_if(ec, "zklock::Mutex::try_lock");
    return ok;
}

bool Mutex::try_lock_within(std::optional<std::chrono::steady_clock::time_point> deadline, std::error_code& ec) {
    return acquire_blocking(deadline, false, ec);
}

std::string Mutex::failure_detail() const { return config_error_ ? config_reason_ : contender_->failure_detail(); }

void Mutex::unlock() noexcept { contender_->release({}); }

void Mutex::async_lock_impl(asio::any_completion_handler<void(std::error_code)> handler) {
    if (config_error_) return detail::post_completion(std::move(handler), contender_->executor(), config_error_);
    detail::async_lock(*contender_, std::move(handler));
}

void Mutex::async_try_lock_impl(std::optional<std::chrono::steady_clock::time_point> deadline, bool no_wait,
                                asio::any_completion_handler<void(std::error_code, bool)> handler) {
    if (config_error_)
        return detail::post_completion(std::move(handler), contender_->executor(), config_error_, false);
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
void Mutex::on_event(std::function<void(const lock_event&)> callback) {
    auto shared = std::make_shared<std::function<void(const lock_event&)>>(std::move(callback));
    contender_->on_event([shared, ex = contender_->session()->user_executor()](lock_event e) {
        asio::post(ex, [shared, e = std::move(e)] { (*shared)(e); });
    });
}
bool Mutex::is_held() const noexcept { return contender_->held(); }
std::int64_t Mutex::fencing_token() const noexcept { return contender_->fencing_token(); }
std::string Mutex::node_path() const { return contender_->node_path(); }
std::optional<std::size_t> Mutex::queue_position() const noexcept { return contender_->queue_position(); }
lock_stats Mutex::stats() const { return contender_->stats(); }

std::vector<contender> Mutex::contenders(std::error_code& ec) const {
    if (const auto check = detail::validate_lock_path(path_); !check) {
        ec = check.error;
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
