#include <zklock/error.hpp>

#include "fsm/reply_kind.hpp"

#include <boost/asio/error.hpp>

namespace zklock {
namespace {

class category final : public std::error_category {
public:
    const char* name() const noexcept override { return "zklock"; }

    std::string message(int ev) const override {
        switch (static_cast<errc>(ev)) {
        case errc::invalid_path: return "invalid lock path";
        case errc::timeout: return "deadline passed";
        case errc::session_expired: return "session expired: the server ended the session or lease that held it";
        case errc::session_closed: return "session closed";
        case errc::connection_suspended: return "connection suspended for longer than the session timeout";
        case errc::node_deleted: return "lock node deleted by another client";
        case errc::not_held: return "lock not held";
        case errc::already_acquiring: return "this lock object already holds or is acquiring the lock";
        case errc::would_deadlock: return "blocking call on the thread that runs the session";
        case errc::invalid_argument: return "invalid argument";
        case errc::permits_mismatch: return "the semaphore has a different number of permits";
        case errc::insecure_acl: return "the lock directory's ACL grants more than the ACL policy";
        case errc::blocked_by_persistent_node: return "a persistent node that never goes away by itself blocks the lock queue";
        case errc::foreign_recipe: return "the path holds another library's recipe that zklock cannot share it with";
        case errc::connection_refused: return "every server refused the connection (nothing listens there)";
        case errc::revoked: return "the lock was revoked: a revocation request asked its holder to let go";
        case errc::tls_handshake_failed:
            return "the TLS handshake with the server failed (not its secure client port, or it refused our certificate)";
        case errc::tls_untrusted_server: return "the server's TLS certificate is not signed by a trusted CA";
        case errc::tls_certificate_expired: return "the server's TLS certificate has expired or is not valid yet";
        case errc::tls_wrong_host: return "the server's TLS certificate does not name the host connected to";
        case errc::tls_required: return "the server accepts only TLS connections: connect over TLS";
        case errc::system_error: return "ZooKeeper client system error";
        case errc::runtime_inconsistency: return "ZooKeeper runtime inconsistency";
        case errc::data_inconsistency: return "ZooKeeper data inconsistency";
        case errc::connection_loss: return "connection to the server lost";
        case errc::marshalling_error: return "ZooKeeper marshalling error";
        case errc::unimplemented: return "operation not implemented by the ZooKeeper server";
        case errc::operation_timeout: return "ZooKeeper operation timed out";
        case errc::bad_arguments: return "bad arguments to a ZooKeeper call";
        case errc::invalid_state: return "ZooKeeper handle in an invalid state";
        case errc::new_config_no_quorum: return "no quorum of the new ZooKeeper configuration is connected";
        case errc::reconfig_in_progress: return "ZooKeeper reconfiguration in progress";
        case errc::ssl_connection_error: return "ZooKeeper SSL connection error";
        case errc::api_error: return "ZooKeeper API error";
        case errc::no_node: return "node does not exist";
        case errc::no_auth: return "not authorized";
        case errc::bad_version: return "version conflict";
        case errc::no_children_for_ephemerals: return "ephemeral nodes may not have children";
        case errc::node_exists: return "node already exists";
        case errc::not_empty: return "node has children";
        case errc::invalid_callback: return "invalid callback";
        case errc::invalid_acl: return "invalid ACL";
        case errc::auth_failed: return "authentication failed";
        case errc::closing: return "ZooKeeper handle is closing";
        case errc::nothing: return "no server responses to process";
        case errc::session_moved: return "session moved to another server";
        case errc::not_readonly: return "state-changing request sent to a read-only server";
        case errc::ephemeral_on_local_session: return "ephemeral node on a local session";
        case errc::no_watcher: return "watcher not found";
        case errc::reconfig_disabled: return "reconfiguration disabled";
        case errc::session_closed_require_sasl_auth: return "session closed: the server requires SASL authentication";
        case errc::throttled_op: return "operation throttled by the server";
        case errc::unknown_zookeeper_error: return "unknown ZooKeeper error";
        }
        return "unknown zklock error " + std::to_string(ev);
    }

    // A second acquire through one lock object, or a blocking call on the
    // thread that would have to complete it, is what std::mutex reports as
    // std::errc::resource_deadlock_would_occur: code written against
    // std::mutex (or std::unique_lock) recognises it.
    std::error_condition default_error_condition(int ev) const noexcept override {
        switch (static_cast<errc>(ev)) {
        case errc::already_acquiring:
        case errc::would_deadlock: return std::make_error_condition(std::errc::resource_deadlock_would_occur);
        case errc::connection_refused: return std::make_error_condition(std::errc::connection_refused);
        default: return std::error_condition(ev, *this);
        }
    }
};

} // namespace

const std::error_category& error_category() noexcept {
    static const category instance;
    return instance;
}

bool is_retryable(const std::error_code& ec) noexcept {
    return detail::classify_reply(ec) == detail::reply_kind::retry;
}

bool is_lock_lost(const std::error_code& ec) noexcept {
    return ec == errc::session_expired || ec == errc::connection_suspended || ec == errc::node_deleted ||
           ec == errc::session_closed || ec == errc::revoked;
}

} // namespace zklock
