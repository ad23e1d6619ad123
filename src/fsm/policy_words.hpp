// What a contender says of its ACL policy and its session: the policy as the
// server stores it (to compare a lock directory's ACL with) and the words its
// failures use. The same for every lock a session takes with one policy, so it
// is made once and shared, not copied into each lock. Pure, no server involved.
#pragma once

#include <zklock/acl.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace zklock::detail {

/// A session's ACL policy, identity and chroot, as its contenders check and say them.
struct policy_words {
    /// The ACL policy as the server stores it (expand_policy); empty: the
    /// policy is open and a directory's ACL is not checked.
    acl_list expanded_acl;
    std::string acl_text;  ///< the ACL policy in words (to_string)
    std::string identity;  ///< who we authenticate as, in words (zklock::identity)
    std::string chroot;    ///< the connect string's chroot; empty without one
};

/// The words of `policy` for a session that authenticates with `auth` and
/// connects with `connect`.
std::shared_ptr<const policy_words> make_policy_words(const acl_list& policy,
                                                                    const std::vector<auth_entry>& auth,
                                                                    std::string_view connect);

/// `*words`, or the words of an open policy without identity or chroot when null.
const policy_words& words_of(const std::shared_ptr<const policy_words>& words) noexcept;

} // namespace zklock::detail
