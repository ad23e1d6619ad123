#include "fsm/lock_delay.hpp"
#include "fsm/lock_node.hpp"

#include <zookeeper.h>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace zklock::detail {

directory_data split_release_marker(std::string_view data) {
    const auto at = data.rfind(release_marker);
    if (at == std::string_view::npos || (at > 0 && data[at - 1] != '\n')) return {std::string(data), std::nullopt};
    const auto digits = data.substr(at + release_marker.size());
    std::int32_t seq = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), seq);
    if (ec != std::errc{} || end != digits.data() + digits.size()) return {std::string(data), std::nullopt};
    auto base = data.substr(0, at);
    if (!base.empty()) base.remove_suffix(1);  // the newline before the record
    return {std::string(base), seq};
}

std::string with_release_marker(std::string_view data, std::int32_t released) {
    auto out = split_release_marker(data).base;
    if (!out.empty()) out += '\n';
    out += release_marker;
    out += std::to_string(released);
    return out;
}

bool clean_handover(const handover& h) {
    if (!h.ahead_before) {
        if (!h.before) return false;
        const auto& b = *h.before;
        // The server reaps an emptied directory (a container) whenever its
        // container manager looks, the record of how its last holder left
        // with it: a directory missing, or made again and never used, may
        // follow a loss (a client cannot tell a container from a persistent
        // node: both read ephemeralOwner 0).
        if (!b.exists || b.cversion == 0) return false;
        if (static_cast<std::size_t>(std::max(b.num_children, 0)) > h.ahead_now.size()) return false;  // someone left
        // Each child change adds one to the cversion: as many changes since
        // the read as children more means all were creates. One made after
        // the read and gone before our create was first, and may have held.
        if (!h.checked) return false;
        const auto changes = static_cast<std::uint32_t>(h.checked->cversion) - static_cast<std::uint32_t>(b.cversion);
        const auto more = std::int64_t{h.checked->num_children} - std::int64_t{b.num_children};
        if (more < 0 || changes != static_cast<std::uint64_t>(more)) return false;
        if (b.num_children > 0) return true;
        return b.data.released && b.pzxid == b.mzxid;
    }
    std::vector<std::int32_t> gone;
    for (const auto s : *h.ahead_before)
        if (std::find(h.ahead_now.begin(), h.ahead_now.end(), s) == h.ahead_now.end()) gone.push_back(s);
    if (gone.empty()) return true;
    if (!h.now.released) return false;
    if (!h.exclusive) return gone.size() == 1 && gone[0] == *h.now.released;
    // The ahead list is in queue order: the newest that left is the last one.
    return gone.back() == *h.now.released;
}

queue_ahead::queue_ahead(std::shared_ptr<const std::vector<std::int32_t>> listing, std::size_t count)
    : listing_(std::move(listing)), count_(listing_ ? std::min(count, listing_->size()) : 0) {}

std::vector<std::int32_t> queue_ahead::to_vector() const {
    std::vector<std::int32_t> out;
    out.reserve(count_);
    for (std::size_t i = 0; i < count_; ++i) {
        const auto s = (*listing_)[i];
        if (std::find(gone_.begin(), gone_.end(), s) == gone_.end()) out.push_back(s);
    }
    return out;
}

queue_ahead sequences_ahead(const children_listing& children, std::string_view my_name) {
    const auto& sorted = children.sorted();
    const auto mine = children.find(my_name);
    if (mine == sorted.end()) return {};
    const auto count = static_cast<std::size_t>(mine - sorted.begin());
    // A short queue ahead is copied: it would otherwise keep the whole
    // listing (everyone behind us too) alive for a few sequences.
    if (count < queue_ahead::shared_from) {
        auto own = std::make_shared<std::vector<std::int32_t>>();
        own->reserve(count);
        for (auto n = sorted.begin(); n != mine; ++n) own->push_back(n->sequence);
        return queue_ahead(std::move(own), count);
    }
    return queue_ahead(children.sequences(), count);
}

queue_ahead without(queue_ahead ahead, std::string_view gone) {
    const auto n = recognise(gone);
    if (!n || !ahead.listing_) return ahead;
    const auto front = ahead.listing_->begin();
    const auto end = front + static_cast<std::ptrdiff_t>(ahead.count_);
    // Recorded once; to_vector() leaves out every contender of that sequence,
    // as erasing it from a copy did.
    if (std::find(front, end, n->sequence) != end &&
        std::find(ahead.gone_.begin(), ahead.gone_.end(), n->sequence) == ahead.gone_.end())
        ahead.gone_.push_back(n->sequence);
    return ahead;
}

// ---- reads and writes of the lock directory ------------------------------------------

std::optional<directory_before> directory_read(int rc, std::string_view data, const node_stat& st) {
    if (rc == ZNONODE) return directory_before{};
    if (rc != ZOK) return std::nullopt;  // not read: a grant at the first listing counts as after a loss
    return directory_before{true, st.num_children, st.cversion, st.pzxid, st.mzxid, split_release_marker(data)};
}

std::optional<std::string> release_record_data(std::string_view rule_data, const std::optional<directory_before>& before,
                                               std::string_view node) {
    const auto seq = recognise(node);
    if (!before || !seq) return std::nullopt;
    // Whatever the directory held stays (a semaphore's permit count).
    const auto base = rule_data.empty() ? std::string_view(before->data.base) : rule_data;
    return with_release_marker(base, seq->sequence);
}

} // namespace zklock::detail
