#include "fsm/acl_check.hpp"

namespace zklock::detail {

bool is_open(const acl_list& policy) {
    for (const auto& e : policy)
        if (e.scheme == "world" && e.id == "anyone" && (e.perms & perms::all) == perms::all) return true;
    return false;
}

acl_list expand_policy(const acl_list& policy, const std::vector<auth_entry>& auth) {
    acl_list out;
    for (const auto& e : policy) {
        if (e.scheme != "auth") {
            out.push_back(e);
            continue;
        }
        for (const auto& a : auth) {
            if (a.scheme != "digest") continue;
            const auto colon = a.credentials.find(':');
            if (colon == std::string::npos) continue;
            out.push_back(digest_acl(std::string_view(a.credentials).substr(0, colon),
                                     std::string_view(a.credentials).substr(colon + 1), e.perms));
        }
    }
    return out;
}

std::optional<acl_entry> first_excess(const acl_list& actual, const acl_list& expanded_policy) {
    for (const auto& e : actual) {
        std::uint32_t allowed = 0;
        for (const auto& p : expanded_policy) {
            // world:anyone in the policy allows its permissions to everyone.
            const bool covers = (p.scheme == e.scheme && p.id == e.id) || (p.scheme == "world" && p.id == "anyone");
            if (covers) allowed |= p.perms;
        }
        if (e.perms & ~allowed) return e;
    }
    return std::nullopt;
}

} // namespace zklock::detail
