// Bounds checked before any server call: option values, node data sizes. Pure functions, no server involved.
#pragma once

#include <zklock/acl.hpp>
#include "fsm/check_result.hpp"

#include <zklock/detail/deadline.hpp>

#include <cstddef>
#include <string_view>

namespace zklock {
struct SessionOptions;
}

namespace zklock::detail {

/// The server's default jute.maxbuffer: the largest request it reads (0xfffff bytes).
/// A larger request makes it close the connection, and the client, resending it
/// after every reconnect, would never get an answer.
inline constexpr std::size_t default_max_request_bytes = 0xfffff;

/// Times an acquire re-creates parents that vanished between creating them and
/// creating its node (a container the server reaped) before it fails.
inline constexpr int max_parent_retries = 5;

/// Largest permit count of a Semaphore (the server's sequence counter is a signed 32-bit int).
inline constexpr std::size_t max_permits = 0x7fffffff;

/// The chroot suffix of a connect string ("/app" of "h1:2181,h2:2181/app"), or "".
std::string_view chroot_of(std::string_view connect);

/// Bytes a create request takes on the wire besides its data: header, the path
/// the server sees (chroot included), the ACL and the flags.
std::size_t create_request_overhead(std::size_t server_path_bytes, const acl_list& acl);

/// Checks that node data of `data_bytes` fits a create of a node whose path on
/// the server (chroot included) has `server_path_bytes` bytes, with `acl`, in a
/// request of at most `max_request_bytes`. errc::invalid_argument with a reason.
check_result check_node_data(std::size_t data_bytes, std::size_t server_path_bytes, const acl_list& acl,
                             std::size_t max_request_bytes);

/// Checks the values of SessionOptions: session_timeout in [1 ms, INT_MAX ms],
/// connect_timeout not negative, the auth list and the ACL policy
/// (validate_auth, validate_acl). errc::invalid_argument with a reason.
check_result validate_session_options(const SessionOptions& options);

} // namespace zklock::detail
