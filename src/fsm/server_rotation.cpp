#include "fsm/server_rotation.hpp"

namespace zklock::detail {

std::optional<std::size_t> steps_to_untried(const std::vector<std::string>& ring, const std::set<std::string>& refused) {
    const std::size_t n = ring.size();
    for (std::size_t j = 1; j <= n; ++j) {
        if (!refused.contains(ring[j % n])) return j - 1;  // at ring[j - 1], the next connect goes to ring[j]
    }
    return std::nullopt;
}

} // namespace zklock::detail
