// from_zookeeper (zklock/error.hpp): the C client's return codes as errc, here
// beside the session that gets them, so the backend-neutral lock layer
// (src/lock/) names nothing of the C client.
#include <zklock/error.hpp>

#include <zookeeper.h>

namespace zklock {

std::error_code from_zookeeper(int rc) noexcept {
    switch (rc) {
    case ZOK: return {};
    case ZSYSTEMERROR: return errc::system_error;
    case ZRUNTIMEINCONSISTENCY: return errc::runtime_inconsistency;
    case ZDATAINCONSISTENCY: return errc::data_inconsistency;
    case ZCONNECTIONLOSS: return errc::connection_loss;
    case ZMARSHALLINGERROR: return errc::marshalling_error;
    case ZUNIMPLEMENTED: return errc::unimplemented;
    case ZOPERATIONTIMEOUT: return errc::operation_timeout;
    case ZBADARGUMENTS: return errc::bad_arguments;
    case ZINVALIDSTATE: return errc::invalid_state;
    case ZNEWCONFIGNOQUORUM: return errc::new_config_no_quorum;
    case ZRECONFIGINPROGRESS: return errc::reconfig_in_progress;
    case ZSSLCONNECTIONERROR: return errc::ssl_connection_error;
    case ZAPIERROR: return errc::api_error;
    case ZNONODE: return errc::no_node;
    case ZNOAUTH: return errc::no_auth;
    case ZBADVERSION: return errc::bad_version;
    case ZNOCHILDRENFOREPHEMERALS: return errc::no_children_for_ephemerals;
    case ZNODEEXISTS: return errc::node_exists;
    case ZNOTEMPTY: return errc::not_empty;
    case ZSESSIONEXPIRED: return errc::session_expired;
    case ZINVALIDCALLBACK: return errc::invalid_callback;
    case ZINVALIDACL: return errc::invalid_acl;
    case ZAUTHFAILED: return errc::auth_failed;
    case ZCLOSING: return errc::closing;
    case ZNOTHING: return errc::nothing;
    case ZSESSIONMOVED: return errc::session_moved;
    case ZNOTREADONLY: return errc::not_readonly;
    case ZEPHEMERALONLOCALSESSION: return errc::ephemeral_on_local_session;
    case ZNOWATCHER: return errc::no_watcher;
    case ZRECONFIGDISABLED: return errc::reconfig_disabled;
    case ZSESSIONCLOSEDREQUIRESASLAUTH: return errc::session_closed_require_sasl_auth;
    case ZTHROTTLEDOP: return errc::throttled_op;
    default: return errc::unknown_zookeeper_error;
    }
}

} // namespace zklock
