#include <zklock/semaphore.hpp>

#include "engine/contender.hpp"
#include "fsm/check_result.hpp"
#include "fsm/limits.hpp"
#include "fsm/lock_delay.hpp"
#include "fsm/lock_node.hpp"
#include "fsm/path.hpp"
#include "fsm/reply_kind.hpp"
#include "session/session_access.hpp"
#include "recipes/queue_factory.hpp"
#include "session/session_impl.hpp"
#include "support/blocking_call.hpp"

#include <zookeeper.h>

#include <charconv>
#include <string_view>
#include <utility>

namespace zklock {

namespace {

/// A semaphore's lock directory keeps its permit count as "permits=K":
/// written by every permit's claim (the queue rule's dir_data), read by stored_permits.
constexpr std::string_view permits_key = "permits=";

// Bad input of a Semaphore, before any server call: errc::invalid_argument for
// a count out of range or a naming with no permit nodes. (The path, the ACL
// and the node data are the factory's to check.)
detail::check_result check_semaphore(std::size_t permits, const SemaphoreOptions& options) {
    if (permits == 0) return {make_error_code(errc::invalid_argument), "permits must be at least 1"};
    if (permits > detail::max_permits)
        return {make_error_code(errc::invalid_argument),
                std::to_string(permits) + " permits is more than " + std::to_string(detail::max_permits)};
    if (options.names != node_names::zklock)
        return {make_error_code(errc::invalid_argument),
                "a Semaphore writes only zklock's node names, not " + std::string(to_string(options.names)) + "'s"};
    return {};
}

detail::queue_request permit_request(const std::string& path, std::size_t permits, const SemaphoreOptions& options) {
    detail::queue_rule rule;
    rule.role = detail::node_role::permit;
    rule.permits = permits;
    rule.dir_data = std::string(permits_key) + std::to_string(permits);
    MutexOptions mo;
    mo.node_data = options.node_data;
    mo.acl = options.acl;
    mo.names = options.names;
    mo.lock_delay = options.lock_delay;
    mo.revocable = options.revocable;
    mo.on_revocation = options.on_revocation;
    return detail::request_of(path, std::move(mo), std::move(rule));
}

} // namespace

Semaphore::Semaphore(Session& session, std::string path, std::size_t permits, SemaphoreOptions options)
    : session_(detail::session_access::session(session)), path_(std::move(path)), permits_(permits),
      options_(std::move(options)) {
    if (const auto check = detail::validate_lock_path(path_); !check)
        throw error(check.error, "zklock::Semaphore: " + check.reason + ": '" + path_ + "'");
    if (const auto check = check_semaphore(permits_, options_); !check)
        throw error(check.error, "zklock::Semaphore: " + check.reason);
    permit();  // refuses node data or an ACL the server would refuse, now
}

Semaphore::Semaphore(Session& session, std::string path, std::size_t permits, SemaphoreOptions options,
                     std::error_code& ec)
    : session_(detail::session_access::session(session)), path_(std::move(path)), permits_(permits),
      options_(std::move(options)) {
    ec.clear();
    if (const auto check = check_semaphore(permits_, options_); !check) {
        refusal_ = ec = check.error;
        refusal_reason_ = check.reason;
        return;
    }
    // The path, the node data and the ACL, now; a refused place says why.
    const auto probe = detail::make_queue_lock(session_, permit_request(path_, permits_, options_), &ec);
    if (ec) {
        refusal_ = ec;
        refusal_reason_ = probe.failure_detail();
    }
}

// A permit is a place in the queue under the semaphore's rule.
QueueLock Semaphore::permit() const {
    auto request = permit_request(path_, permits_, options_);
    request.refusal = refusal_;
    request.refusal_reason = refusal_reason_;
    std::error_code ec;
    // Bad input was refused at construction: with the error_code constructor
    // the refusal travels with every permit, otherwise there is none.
    return detail::make_queue_lock(session_, std::move(request), refusal_ ? &ec : nullptr);
}

std::vector<contender> Semaphore::contenders(std::error_code& ec) const {
    if (const auto check = detail::validate_lock_path(path_); !check) {
        ec = check.error;
        return {};
    }
    return detail::list_contenders(session_, path_, ec);
}

std::vector<contender> Semaphore::contenders() const {
    std::error_code ec;
    auto out = contenders(ec);
    throw_if(ec, "zklock::Semaphore::contenders " + path_);
    return out;
}

std::optional<std::size_t> stored_permits(Session& session, const std::string& path) {
    std::error_code ec;
    auto permits = stored_permits(session, path, ec);
    throw_if(ec, "zklock::stored_permits " + path);
    return permits;
}

std::optional<std::size_t> stored_permits(Session& session, const std::string& path, std::error_code& ec) {
    ec.clear();
    if (const auto check = detail::validate_lock_path(path); !check) {
        ec = check.error;
        return std::nullopt;
    }
    const auto impl = detail::session_access::session(session);
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
    // Lock-delay's release record, if any, follows the count. A view of the
    // split's string rather than a copy of it: GCC 12 at -O3 takes the copy's
    // small-string buffer, read by starts_with, for uninitialized (a bogus
    // -Wmaybe-uninitialized).
    const auto split = detail::split_release_marker(data);
    const std::string_view base = split.base;
    if (!base.starts_with(permits_key)) return std::nullopt;
    std::size_t permits = 0;
    const auto digits = base.substr(permits_key.size());
    const auto [end, parse] = std::from_chars(digits.data(), digits.data() + digits.size(), permits);
    if (parse != std::errc() || end != digits.data() + digits.size() || permits == 0) return std::nullopt;
    return permits;
}

} // namespace zklock
