// ACL decisions: pure functions, no server involved.
#pragma once

#include <zklock/acl.hpp>

#include <optional>
#include <vector>

namespace zklock::detail {

/// True for a policy that grants everything to world:anyone: nothing to protect,
/// nothing to check.
bool is_open(const acl_list& policy);

/// The policy as the server stores it on a node created by a session with
/// `auth`: each `auth` entry becomes one digest entry per digest identity of the
/// session (the server expands it the same way). Identities of other schemes
/// cannot be computed here and are left out.
acl_list expand_policy(const acl_list& policy, const std::vector<auth_entry>& auth);

/// The first entry of `actual` that grants some identity a permission the
/// (expanded) policy does not grant it: the reason `actual` is more open than
/// the policy. nullopt when every permission `actual` grants, the policy grants too.
std::optional<acl_entry> first_excess(const acl_list& actual, const acl_list& expanded_policy);

} // namespace zklock::detail
