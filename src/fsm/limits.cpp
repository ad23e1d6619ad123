#include "fsm/limits.hpp"
#include <zklock/error.hpp>
#include <zklock/session_options.hpp>

#include <climits>

namespace zklock::detail {

std::string_view chroot_of(std::string_view connect) {
    const auto slash = connect.find('/');
    return slash == std::string_view::npos ? std::string_view() : connect.substr(slash);
}

std::size_t create_request_overhead(std::size_t server_path_bytes, const acl_list& acl) {
    // Length prefix and RequestHeader (xid, type), the path and data as
    // length-prefixed buffers, the ACL vector (count; per entry perms and the
    // length-prefixed scheme and id), the flags.
    std::size_t n = 4 + 8 + (4 + server_path_bytes) + 4 + 4 + 4;
    for (const auto& e : acl) n += 4 + (4 + e.scheme.size()) + (4 + e.id.size());
    return n;
}

check_result check_node_data(std::size_t data_bytes, std::size_t server_path_bytes, const acl_list& acl,
                             std::size_t max_request_bytes) {
    const auto overhead = create_request_overhead(server_path_bytes, acl);
    const std::size_t limit = max_request_bytes > overhead ? max_request_bytes - overhead : 0;
    if (data_bytes <= limit) return {};
    return {make_error_code(errc::invalid_argument),
            "node data (a lock's node_data, an election's participant id) of " + std::to_string(data_bytes) + " bytes is more than the server accepts (" +
                std::to_string(limit) + " bytes with this path and ACL, for a request limit of " +
                std::to_string(max_request_bytes) + " bytes: jute.maxbuffer)"};
}

check_result validate_session_options(const SessionOptions& o) {
    const auto refuse = [](std::string why) { return check_result{make_error_code(errc::invalid_argument), std::move(why)}; };
    if (o.session_timeout.count() <= 0)
        return refuse("session_timeout must be positive (it is " + std::to_string(o.session_timeout.count()) + " ms)");
    if (o.session_timeout.count() > INT_MAX)
        return refuse("session_timeout of " + std::to_string(o.session_timeout.count()) +
                      " ms is more than the client can ask for (" + std::to_string(INT_MAX) + " ms)");
    if (o.connect_timeout.count() < 0)
        return refuse("connect_timeout must not be negative (it is " + std::to_string(o.connect_timeout.count()) + " ms)");
    if (o.max_request_bytes < 1024)
        return refuse("max_request_bytes of " + std::to_string(o.max_request_bytes) +
                      " is below any server's jute.maxbuffer");
    std::string reason;
    if (const auto ec = validate_auth(o.auth, &reason)) return refuse(std::move(reason));
    if (const auto ec = validate_acl(o.acl, !o.auth.empty(), &reason)) return refuse(std::move(reason));
    if (const auto ec = validate_tls(o.tls, &reason)) return refuse(std::move(reason));
    return {};
}

} // namespace zklock::detail
