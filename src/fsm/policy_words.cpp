#include "fsm/policy_words.hpp"

#include "fsm/acl_check.hpp"
#include "fsm/limits.hpp"

namespace zklock::detail {

std::shared_ptr<const policy_words> make_policy_words(const acl_list& policy, const std::vector<auth_entry>& auth,
                                                      std::string_view connect) {
    auto w = std::make_shared<policy_words>();
    if (!is_open(policy)) w->expanded_acl = expand_policy(policy, auth);
    w->acl_text = to_string(policy);
    w->identity = zklock::identity(auth);
    w->chroot = std::string(chroot_of(connect));
    return w;
}

const policy_words& words_of(const std::shared_ptr<const policy_words>& words) noexcept {
    static const policy_words none;
    return words ? *words : none;
}

} // namespace zklock::detail
