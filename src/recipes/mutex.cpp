#include <zklock/mutex.hpp>

#include "engine/contender.hpp"
#include "recipes/internal_access.hpp"
#include "lock/lock_frontend.hpp"

#include "fsm/path.hpp"
#include "fsm/limits.hpp"
#include "fsm/lock_node.hpp"

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

// The engine of a Mutex on `path`; bad input throws, or with `ec` refuses
// every acquire.
std::shared_ptr<detail::contender_engine> make_engine(Session& session, const std::string& path,
                                                      MutexOptions options, detail::queue_rule rule,
                                                      std::error_code* ec) {
    rule.watch_parent = rule.watch_parent || options.watch_all_children;
    rule.names = options.names;
    rule.lock_delay = options.lock_delay;
    rule.mark_releases = options.mark_release;
    const auto& impl = detail::internal_access::session(session);
    // No data of its own: the session's default, one copy for all its locks.
    auto data = options.node_data.empty() ? impl->default_data()
                                          : std::make_shared<const std::string>(std::move(options.node_data));
    const auto check = check_input(session, path, options, rule, *data);
    if (check.error && !ec) throw error(check.error, "zklock: " + check.reason + ": '" + path + "'");
    if (ec) *ec = check.error;
    auto engine = detail::contender_engine::make(
        impl, path, std::move(rule), std::move(data),
        options.acl ? std::make_shared<const detail::c_acl>(std::move(*options.acl)) : nullptr);
    if (check.error) engine->refuse(check.error, check.reason);
    return engine;
}

} // namespace

Mutex::Mutex(Session& session, std::string path, MutexOptions options, const detail::queue_rule& rule,
             std::error_code* ec)
    : Mutex(make_engine(session, path, std::move(options), rule, ec), path) {}

Mutex::Mutex(std::shared_ptr<detail::contender_engine> engine, std::string path)
    : Lock(engine, std::move(path)), contender_(std::move(engine)) {}

Mutex::Mutex(Session& session, std::string path, MutexOptions options)
    : Mutex(session, std::move(path), std::move(options), detail::queue_rule{}, nullptr) {}

Mutex::Mutex(Session& session, std::string path, MutexOptions options, std::error_code& ec)
    : Mutex(session, std::move(path), std::move(options), detail::queue_rule{}, &ec) {}

void Mutex::on_queue_position(std::function<void(std::size_t)> callback) {
    auto shared = std::make_shared<std::function<void(std::size_t)>>(std::move(callback));
    contender_->on_position(
        [shared, ex = contender_->session()->user_executor()](std::size_t p) { asio::post(ex, [shared, p] { (*shared)(p); }); });
}
void Mutex::on_event(std::function<void(const lock_event&)> callback) { contender_->on_user_event(std::move(callback)); }
std::string Mutex::node_path() const { return contender_->node_path(); }
std::optional<std::size_t> Mutex::queue_position() const noexcept { return contender_->queue_position(); }

std::vector<contender> Mutex::contenders(std::error_code& ec) const {
    if (const auto check = detail::validate_lock_path(path()); !check) {
        ec = check.error;
        return {};
    }
    return detail::list_contenders(contender_->session(), path(), ec);
}

std::vector<contender> Mutex::contenders() const {
    std::error_code ec;
    auto out = contenders(ec);
    throw_if(ec, "zklock::Mutex::contenders");
    return out;
}

} // namespace zklock
