#include <zklock/multi_mutex.hpp>

#include "session/session_access.hpp"
#include "engine/contender.hpp"

#include "fsm/lock_set.hpp"
#include "fsm/limits.hpp"

namespace zklock {


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

// The engine of a set; bad input throws, or with `ec` refuses every acquire.
std::shared_ptr<detail::contender_engine> make_engine(Session& session, const std::vector<std::string>& paths,
                                                   MultiMutexOptions options, std::error_code* ec) {
    const auto data = detail::set_node_data(
        options.node_data.empty() ? *detail::session_access::session(session)->default_data() : options.node_data,
        paths);
    const auto check = check_input(session, paths, options, data);
    if (check.error && !ec) throw error(check.error, "zklock::MultiMutex: " + check.reason);
    if (ec) *ec = check.error;
    // A set is a place in every queue under the mutex rule. A refused set
    // still gets an engine (with no paths it never sends anything).
    detail::queue_rule rule;
    rule.lock_delay = options.lock_delay;
    auto engine = detail::contender_engine::make(
        detail::session_access::session(session), check.error ? std::vector<std::string>{} : paths, std::move(rule),
        std::make_shared<const std::string>(data),
        options.acl ? std::make_shared<const detail::c_acl>(std::move(*options.acl)) : nullptr);
    if (check.error) engine->refuse(check.error, check.reason);
    engine->set_revocation(options.revocable, std::move(options.on_revocation));
    return engine;
}

/// How the set is named in what the blocking forms throw.
std::string subject_of(const std::vector<std::string>& paths) {
    std::string out;
    for (const auto& p : paths) out += (out.empty() ? "" : ",") + p;
    return out;
}

} // namespace

MultiMutex::MultiMutex(Session& session, std::vector<std::string> paths, MultiMutexOptions options, std::error_code* ec)
    : MultiMutex(make_engine(session, paths, std::move(options), ec), paths) {}

MultiMutex::MultiMutex(std::shared_ptr<detail::contender_engine> engine, std::vector<std::string> paths)
    : Lock(engine, subject_of(paths)), paths_(std::move(paths)), engine_(std::move(engine)) {}

MultiMutex::MultiMutex(Session& session, std::vector<std::string> paths, MultiMutexOptions options)
    : MultiMutex(session, std::move(paths), std::move(options), nullptr) {}

MultiMutex::MultiMutex(Session& session, std::vector<std::string> paths, MultiMutexOptions options, std::error_code& ec)
    : MultiMutex(session, std::move(paths), std::move(options), &ec) {}


std::vector<std::string> MultiMutex::node_paths() const { return engine_->node_paths(); }
void MultiMutex::on_queue_position(std::function<void(std::size_t)> callback) {
    engine_->on_user_position(std::move(callback));
}
void MultiMutex::on_event(std::function<void(const lock_event&)> callback) { engine_->on_user_event(std::move(callback)); }
std::vector<std::optional<std::size_t>> MultiMutex::queue_positions() const { return engine_->queue_positions(); }

} // namespace zklock
