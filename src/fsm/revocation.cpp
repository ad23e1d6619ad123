#include "fsm/revocation.hpp"

#include "fsm/dialect.hpp"
#include "fsm/path.hpp"

#include <zklock/error.hpp>

namespace zklock::detail {

revocation_step revocation_watch::read(std::string_view data, std::int32_t version) noexcept {
    if (!is_revocation_request(data)) return revocation_step::none;
    // The same write read again (a watch set anew after a reconnect): told already.
    if (seen_version_ && *seen_version_ == version) return revocation_step::none;
    seen_version_ = version;
    return revocable_ ? revocation_step::honour : revocation_step::ignore;
}

std::vector<std::string> holders_under(const queue_rule& rule, const std::vector<std::string>& children) {
    const auto sorted = sorted_contenders(children);
    std::vector<std::string> out;
    // Under every rule the holders are the first entries of the queue: stop at
    // the first contender that does not hold.
    for (const auto& n : sorted) {
        const auto d = rule.read_write ? decide_read_write(sorted, n.name) : decide(sorted, n.name, rule.permits);
        if (!d.acquired) break;
        out.push_back(n.name);
    }
    return out;
}

check_result check_revocation_target(std::string_view node_path) {
    if (auto r = validate_lock_path(node_path); !r) return r;
    const auto name = node_path.substr(node_path.rfind('/') + 1);
    if (!recognise(name))
        return {make_error_code(errc::invalid_argument),
                "not a lock node: '" + std::string(name) +
                    "' is no contender's name (a revocation request goes into a holder's node, e.g. "
                    "<lock path>/_c_<uuid>-lock-0000000007; zklock status lists them)"};
    return {};
}

} // namespace zklock::detail
