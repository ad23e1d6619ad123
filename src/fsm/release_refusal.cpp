#include "fsm/release_refusal.hpp"

#include "fsm/reply_kind.hpp"

#include <zookeeper.h>

#include <algorithm>

namespace zklock::detail {

refused_op find_refused_op(const std::vector<int>& errors, const std::vector<release_role>& roles) {
    const auto it = std::find_if(errors.begin(), errors.end(), [](int c) { return c != ZOK && c != ZRUNTIMEINCONSISTENCY; });
    refused_op r;
    r.at = static_cast<std::size_t>(it - errors.begin());
    if (it != errors.end() && r.at < roles.size()) r.role = roles[r.at];
    return r;
}

release_retry retry_after_refusal(std::optional<release_role> role, int rc) noexcept {
    if (role == release_role::proof && rc != ZNONODE && classify_reply(rc) == reply_kind::answer)
        return release_retry::without_proof;
    if (role == release_role::mark && rc == ZNOAUTH) return release_retry::without_mark;
    return release_retry::no;
}

} // namespace zklock::detail
