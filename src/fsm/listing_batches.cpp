#include "fsm/listing_batches.hpp"

#include <utility>

namespace zklock::detail {

bool listing_batches::ask(const std::string& path, answer_fn fn) {
    const auto [it, idle] = batches_.try_emplace(path);
    (idle ? it->second.sent : it->second.next).push_back(std::move(fn));
    return idle;
}

bool listing_batches::answer(const std::string& path, int rc, const std::vector<std::string>& children) {
    const auto it = batches_.find(path);
    if (it == batches_.end()) return false;
    // The entry stays while the answers run: a call they make waits in `next`
    // (std::map keeps `it` valid while other paths come and go).
    const auto answered = std::exchange(it->second.sent, {});
    const children_listing shared(children);
    for (const auto& fn : answered) fn(rc, shared);
    if (it->second.next.empty()) {
        batches_.erase(it);
        return false;
    }
    it->second.sent = std::exchange(it->second.next, {});
    return true;
}

std::size_t listing_batches::waiting(const std::string& path) const {
    const auto it = batches_.find(path);
    return it == batches_.end() ? 0 : it->second.sent.size() + it->second.next.size();
}

} // namespace zklock::detail
