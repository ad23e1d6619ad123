#include <zklock/multi_mutex.hpp>

#include "detail/internal_access.hpp"
#include "lock_frontend.hpp"
#include "set_contender.hpp"

#include <zklock/detail/lock_set.hpp>

namespace zklock {
namespace asio = boost::asio;

namespace {

// The paths, the ACL, and that each node's data fits one request.
detail::check_result check_input(const Session& session, const std::vector<std::string>& paths,
                                 const MultiMutexOptions& options, const std::string& data) {
    if (auto check = detail::validate_lock_set(paths); !check) return check;
    const auto& so = session.options();
    const acl_list& acl = options.acl ? *options.acl : so.acl;
    std::string reason;
    if (const auto ec = validate_acl(acl, !so.auth.empty(), &reason)) return {ec, reason};
    // One transaction carries every create: they share one request.
    std::size_t request = 0;
    for (const auto& p : paths) {
        const auto server_path = detail::chroot_of(so.connect).size() + p.size() + 1 +
                                 detail::node_name_prefix_size(detail::node_form{});
        request += data.size() + detail::create_request_overhead(server_path, acl);
    }
    if (request > so.max_request_bytes)
        return {make_error_code(errc::invalid_argument),
                "the set's transaction (" + std::to_string(request) + " bytes with the node data) would exceed the " +
                    std::to_string(so.max_request_bytes) + "-byte request limit (SessionOptions::max_request_bytes)"};
    return {};
}

} // namespace

MultiMutex::MultiMutex(Session& session, std::vector<std::string> paths, MultiMutexOptions options, std::error_code* ec)
    : paths_(std::move(paths)) {
    const auto data = detail::set_node_data(
        options.node_data.empty() ? detail::default_node_data() : options.node_data, paths_);
    const auto check = check_input(session, paths_, options, data);
    if (check.error && !ec) throw error(check.error, "zklock::MultiMutex: " + check.reason);
    if (ec) *ec = check.error;
    config_error_ = check.error;
    config_reason_ = check.reason;
    // A refused set still gets an engine (with no paths it never sends anything).
    engine_ = detail::set_contender::make(
        detail::internal_access::session(session), check.error ? std::vector<std::string>{} : paths_, data,
        options.acl ? std::make_shared<const detail::c_acl>(std::move(*options.acl)) : nullptr, options.lock_delay);
}

MultiMutex::MultiMutex(Session& session, std::vector<std::string> paths, MultiMutexOptions options)
    : MultiMutex(session, std::move(paths), std::move(options), nullptr) {}

MultiMutex::MultiMutex(Session& session, std::vector<std::string> paths, MultiMutexOptions options, std::error_code& ec)
    : MultiMutex(session, std::move(paths), std::move(options), &ec) {}

MultiMutex::~MultiMutex() { engine_->shutdown(); }

bool MultiMutex::try_lock_within(std::optional<std::chrono::steady_clock::time_point> deadline, std::error_code& ec) {
    if (config_error_) {
        ec = config_error_;
        return false;
    }
    return detail::acquire_blocking(*engine_, deadline, false, ec);
}

void MultiMutex::lock(std::error_code& ec) { try_lock_within(std::nullopt, ec); }

void MultiMutex::lock() {
    std::error_code ec;
    lock(ec);
    if (ec) {
        const auto detail = failure_detail();
        throw error(ec, "zklock::MultiMutex::lock" + (detail.empty() ? std::string() : " (" + detail + ")"));
    }
}

bool MultiMutex::try_lock(std::error_code& ec) {
    if (config_error_) {
        ec = config_error_;
        return false;
    }
    return detail::acquire_blocking(*engine_, std::nullopt, true, ec);
}

bool MultiMutex::try_lock() {
    std::error_code ec;
    const bool ok = try_lock(ec);
    throw_if(ec, "zklock::MultiMutex::try_lock");
    return ok;
}

void MultiMutex::unlock() noexcept { engine_->release({}); }

void MultiMutex::async_lock_impl(asio::any_completion_handler<void(std::error_code)> handler) {
    if (config_error_) return detail::post_completion(std::move(handler), engine_->executor(), config_error_);
    detail::async_lock(*engine_, std::move(handler));
}

void MultiMutex::async_try_lock_impl(std::optional<std::chrono::steady_clock::time_point> deadline, bool no_wait,
                                     asio::any_completion_handler<void(std::error_code, bool)> handler) {
    if (config_error_) return detail::post_completion(std::move(handler), engine_->executor(), config_error_, false);
    detail::async_acquire(*engine_, deadline, no_wait, std::move(handler));
}

void MultiMutex::async_unlock_impl(asio::any_completion_handler<void(std::error_code)> handler) {
    detail::async_release(*engine_, std::move(handler));
}

void MultiMutex::async_wait_lost_impl(asio::any_completion_handler<void(std::error_code)> handler) {
    detail::async_wait_lost(*engine_, std::move(handler));
}

void MultiMutex::on_lost(std::function<void(std::error_code)> callback) { engine_->on_lost(std::move(callback)); }
bool MultiMutex::is_held() const noexcept { return engine_->held(); }
std::int64_t MultiMutex::fencing_token() const noexcept { return engine_->fencing_token(); }
std::vector<std::string> MultiMutex::node_paths() const { return engine_->node_paths(); }
std::vector<std::optional<std::size_t>> MultiMutex::queue_positions() const { return engine_->queue_positions(); }
lock_stats MultiMutex::stats() const { return engine_->stats(); }
std::string MultiMutex::failure_detail() const { return config_error_ ? config_reason_ : engine_->failure_detail(); }

} // namespace zklock
