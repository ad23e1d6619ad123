#include <zklock/queue_view.hpp>

#include "fsm/dialect.hpp"
#include "fsm/lock_node.hpp"
#include "fsm/lock_set.hpp"

#include <algorithm>

namespace zklock {

std::vector<bool> queue_holders(const queue_listing& listing, std::size_t permits) {
    std::vector<std::string> names;
    names.reserve(listing.contenders.size());
    for (const auto& c : listing.contenders) names.push_back(c.node);
    const auto sorted = detail::sorted_contenders(names);
    const bool read_write = permits <= 1 && std::any_of(listing.contenders.begin(), listing.contenders.end(),
                                                        [](const contender& c) { return c.shared; });
    // The listing is in queue order and, under every rule, the holders are its
    // first entries (the first K, the readers ahead of the first writer): each
    // decision is a search of the queue, so stop at the first that does not hold.
    std::vector<bool> out(listing.contenders.size(), false);
    for (std::size_t i = 0; i < out.size(); ++i) {
        const auto& node = listing.contenders[i].node;
        out[i] = read_write ? detail::decide_read_write(sorted, node).acquired
                            : detail::decide(sorted, node, std::max<std::size_t>(permits, 1)).acquired;
        if (!out[i]) break;
    }
    return out;
}

contender_data parse_contender_data(std::string_view node_data) {
    auto parsed = detail::parse_set_node_data(node_data);
    return {std::move(parsed.data), std::move(parsed.paths)};
}

bool is_contender_node(std::string_view name) { return detail::recognise(name).has_value(); }

} // namespace zklock
