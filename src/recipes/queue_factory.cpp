#include "recipes/queue_factory.hpp"

#include "engine/contender.hpp"
#include "fsm/check_result.hpp"
#include "fsm/limits.hpp"
#include "fsm/node_form.hpp"
#include "fsm/path.hpp"
#include "engine/engine_access.hpp"
#include "session/session_impl.hpp"

#include <zklock/error.hpp>

#include <utility>

namespace zklock::detail {

namespace {

const char* role_name(node_role role) {
    switch (role) {
    case node_role::lock: return "lock";
    case node_role::writer: return "writer";
    case node_role::reader: return "reader";
    case node_role::leader: return "election";
    case node_role::permit: return "permit";
    }
    return "queue";
}

// What a place is given, before any server call: the path, the ACL, that the
// naming can spell the rule's role, and that the node data fits in one request.
check_result check_input(const session_impl& session, const queue_request& r, const std::string& data) {
    if (r.refusal) return {r.refusal, r.refusal_reason};
    if (auto check = validate_lock_path(r.path); !check) return check;
    const auto& so = session.options();
    const acl_list& acl = r.acl ? *r.acl : so.acl;
    std::string reason;
    if (const auto ec = validate_acl(acl, !so.auth.empty(), &reason)) return {ec, reason};
    const auto form = form_of(r.rule.names, r.rule.role);
    if (!form)
        return {make_error_code(errc::invalid_argument), std::string(to_string(r.rule.names)) + "'s node names have no " +
                                                             role_name(r.rule.role) + " node"};
    // The request path: chroot, lock path, the name prefix (the server appends the sequence).
    const auto server_path = chroot_of(so.connect).size() + r.path.size() + 1 + node_name_prefix_size(*form);
    return check_node_data(data.size(), server_path, acl, so.max_request_bytes);
}

} // namespace

queue_request request_of(std::string path, MutexOptions options, queue_rule rule) {
    rule.watch_parent = rule.watch_parent || options.watch_all_children;
    rule.names = options.names;
    rule.lock_delay = options.lock_delay;
    rule.mark_releases = options.mark_release;
    queue_request r;
    r.path = std::move(path);
    r.rule = std::move(rule);
    r.node_data = std::move(options.node_data);
    r.acl = std::move(options.acl);
    r.revocable = options.revocable;
    r.on_revocation = std::move(options.on_revocation);
    return r;
}

QueueLock make_queue_lock(const std::shared_ptr<session_impl>& session, queue_request request, std::error_code* ec) {
    // No data of its own: the session's default, one copy for all its locks.
    auto data = request.node_data.empty() ? session->default_data()
                                          : std::make_shared<const std::string>(std::move(request.node_data));
    const auto check = check_input(*session, request, *data);
    if (check.error && !ec) throw error(check.error, "zklock: " + check.reason + ": '" + request.path + "'");
    if (ec) *ec = check.error;
    auto engine = contender_engine::make(
        session, request.path, std::move(request.rule), std::move(data),
        request.acl ? std::make_shared<const c_acl>(std::move(*request.acl)) : nullptr);
    if (check.error) engine->refuse(check.error, check.reason);
    engine->set_revocation(request.revocable, std::move(request.on_revocation));
    return engine_access::queue_lock(std::move(engine), std::move(request.path));
}

} // namespace zklock::detail
