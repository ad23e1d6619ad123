#include "fsm/lock_node.hpp"

#ifdef ZKLOCK_SIMULATION
#include "sim_seam.hpp"  // tests/sim
#endif

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace zklock::detail {

namespace {

std::uint64_t random_word() {
#ifdef ZKLOCK_SIMULATION
    return sim_random();  // the simulator's seeded randomness: a seed replays its run exactly
#else
    thread_local std::mt19937_64 rng{[] {
        std::random_device rd;
        std::seed_seq seq{rd(), rd(), rd(), rd(), rd(), rd(), rd(), rd()};
        return std::mt19937_64(seq);
    }()};
    return rng();
#endif
}

} // namespace

std::string new_guid() {
    std::array<unsigned char, 16> b{};
    for (std::size_t i = 0; i < b.size(); i += 8) {
        const std::uint64_t r = random_word();
        for (std::size_t k = 0; k < 8; ++k) b[i + k] = static_cast<unsigned char>(r >> (8 * k));
    }
    b[6] = static_cast<unsigned char>((b[6] & 0x0F) | 0x40);  // version 4
    b[8] = static_cast<unsigned char>((b[8] & 0x3F) | 0x80);  // RFC 4122 variant
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(36);
    for (std::size_t i = 0; i < b.size(); ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
        out.push_back(hex[b[i] >> 4]);
        out.push_back(hex[b[i] & 0x0F]);
    }
    return out;
}

std::string node_name_prefix(std::string_view guid, std::string_view marker) {
    std::string out;
    out.reserve(protected_tag.size() + guid.size() + 1 + marker.size());
    out.append(protected_tag).append(guid).append("-").append(marker);
    return out;
}

std::size_t sequence_marker_at(std::string_view child, std::string_view marker) noexcept {
    // A sequence is at most 11 characters: a marker further from the end
    // gives none, so only the tail need be searched (a peer's name of any
    // length costs what a short one does).
    const std::size_t tail = marker.size() + 11;
    const std::size_t from = child.size() > tail ? child.size() - tail : 0;
    const std::size_t at = child.substr(from).rfind(marker);
    return at == std::string_view::npos ? std::string_view::npos : from + at;
}

std::optional<std::int32_t> parse_sequence(std::string_view child, std::string_view marker) {
    // Every sequence is ten characters or more and ends in nine digits
    // ("-000000005"): a name that does not is none, whatever its marker.
    if (child.size() < marker.size() + 10 ||
        !std::all_of(child.end() - 9, child.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
    const std::size_t at = sequence_marker_at(child, marker);
    if (at == std::string_view::npos) return std::nullopt;
    const std::string_view digits = child.substr(at + marker.size());
    const bool negative = !digits.empty() && digits.front() == '-';
    // The server formats with "%010d": ten characters, or more for a negative
    // number ("-2147483648"). Anything else is not a sequence the server made.
    if (digits.size() < 10 || digits.size() > 11 || (digits.size() == 11 && !negative)) return std::nullopt;
    if (!std::all_of(digits.begin() + (negative ? 1 : 0), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
    std::int32_t value = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec != std::errc{} || end != digits.data() + digits.size()) return std::nullopt;
    // Only what "%010d" writes: no "-000000000", and eleven characters only
    // for a negative number of ten digits ("-0000000005" is "-000000005").
    if (negative && (value == 0 || (digits.size() == 11 && digits[1] == '0'))) return std::nullopt;
    return value;
}

namespace {

constexpr std::uint32_t on_circle(std::int32_t sequence) noexcept { return static_cast<std::uint32_t>(sequence); }

// The contenders of a listing in queue order, as lock_node or node_view.
//
// sequence_before is no order at all for sequences spread over more than 2^31
// (a name anyone may write by hand, a holder from before the counter wrapped
// far past it): a cycle, a < b < c < a, and std::sort given one may read past
// the vector's end. So the order is a total one: the counter's unsigned order,
// turned to start after the widest gap between neighbours on its circle.
// Within 2^31 of each other that gap is the one outside them all, and the
// order is sequence_before's, across the wrap too.
template <class Node> std::vector<Node> sorted_as(const std::vector<std::string>& children) {
    std::vector<Node> out;
    out.reserve(children.size());
    for (const auto& child : children)
        if (const auto n = recognise(child))
            out.push_back({child, n->sequence, n->kind == contender_kind::shared, n->dialect, n->lock_form});
    std::sort(out.begin(), out.end(),
              [](const Node& a, const Node& b) { return on_circle(a.sequence) < on_circle(b.sequence); });
    if (out.size() < 2) return out;
    std::size_t first = 0;
    std::uint32_t widest = on_circle(out.front().sequence) - on_circle(out.back().sequence);  // across the wrap
    for (std::size_t i = 1; i < out.size(); ++i)
        if (const std::uint32_t gap = on_circle(out[i].sequence) - on_circle(out[i - 1].sequence); gap > widest) {
            widest = gap;
            first = i;
        }
    std::rotate(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
    return out;
}

} // namespace

std::vector<lock_node> sorted_contenders(const std::vector<std::string>& children) {
    return sorted_as<lock_node>(children);
}

const std::vector<node_view>& children_listing::sorted() const {
    if (!sorted_) sorted_ = sorted_as<node_view>(*children_);
    return *sorted_;
}

const std::shared_ptr<const std::vector<std::int32_t>>& children_listing::sequences() const {
    if (!sequences_) {
        const auto& nodes = sorted();
        auto seqs = std::make_shared<std::vector<std::int32_t>>();
        seqs->reserve(nodes.size());
        for (const auto& n : nodes) seqs->push_back(n.sequence);
        sequences_ = std::move(seqs);
    }
    return sequences_;
}

std::optional<std::string> find_by_guid(const std::vector<std::string>& children, std::string_view guid) {
    for (const auto& child : children)
        if (child.find(guid) != std::string::npos) return child;
    return std::nullopt;
}

namespace {

// The rules over lock_node or node_view: the same code for both.
// `me`: our node in `sorted`, or its end when it is not there.
template <class Node>
queue_decision decide_permits(const std::vector<Node>& sorted, typename std::vector<Node>::const_iterator me,
                              std::size_t permits) {
    queue_decision d;
    if (me == sorted.end()) return d;
    d.found = true;
    d.position = static_cast<std::size_t>(me - sorted.begin());
    d.last = std::next(me) == sorted.end();
    if (permits == 0) permits = 1;
    // With K > 1 only lock_form nodes share our K leases: any other contender
    // ahead (a peer's mutex, a writer, a reader) blocks us outright.
    const auto not_lease = [](const Node& n) { return !n.lock_form; };
    auto blocker = sorted.rend();
    if (permits > 1) blocker = std::find_if(std::make_reverse_iterator(me), sorted.rend(), not_lease);
    const bool blocked = blocker != sorted.rend();
    if (d.position < permits) {
        if (!blocked) {
            d.acquired = true;
            return d;
        }
        d.watch = {std::string(blocker->name)};
        // Its deletion alone grants us a lease when no other blocker is ahead of it.
        d.watch_is_last_blocker = std::none_of(std::next(blocker), sorted.rend(), not_lease);
        return d;
    }
    for (std::size_t i = d.position - permits; i < d.position; ++i) d.watch.emplace_back(sorted[i].name);
    d.watch_is_last_blocker = d.position == permits && !blocked;
    return d;
}

template <class Node>
queue_decision decide_rw(const std::vector<Node>& sorted, typename std::vector<Node>::const_iterator me) {
    queue_decision d;
    if (me == sorted.end()) return d;
    d.found = true;
    d.position = static_cast<std::size_t>(me - sorted.begin());
    d.last = std::next(me) == sorted.end();
    if (!me->shared) {
        if (d.position == 0) {
            d.acquired = true;
            return d;
        }
        d.watch = {std::string(sorted[d.position - 1].name)};
        d.watch_is_last_blocker = d.position == 1;
        return d;
    }
    const auto writer_ahead = std::find_if(std::make_reverse_iterator(me), sorted.rend(),
                                           [](const Node& n) { return !n.shared; });
    if (writer_ahead == sorted.rend()) {
        d.acquired = true;
        return d;
    }
    d.watch = {std::string(writer_ahead->name)};
    // Its deletion alone grants us the lock when no other writer is ahead of it.
    d.watch_is_last_blocker = std::none_of(std::next(writer_ahead), sorted.rend(),
                                           [](const Node& n) { return !n.shared; });
    return d;
}

template <class Node>
typename std::vector<Node>::const_iterator find_by_name(const std::vector<Node>& sorted, std::string_view my_name) {
    return std::find_if(sorted.begin(), sorted.end(), [&](const Node& n) { return n.name == my_name; });
}

// Our node in a listing sorted once for many contenders: found by its
// sequence (a binary search in sorted_as's order, the distance from the first
// node along the counter's circle) instead of comparing every name ahead of it.
std::vector<node_view>::const_iterator find_in(const std::vector<node_view>& sorted, std::string_view my_name) {
    const auto mine = recognise(my_name);
    if (!mine || sorted.empty()) return sorted.end();  // not a contender: not in the queue
    const auto from_first = [first = on_circle(sorted.front().sequence)](std::int32_t s) { return on_circle(s) - first; };
    auto at = std::partition_point(sorted.begin(), sorted.end(), [&](const node_view& n) {
        return from_first(n.sequence) < from_first(mine->sequence);
    });
    // Every sequential child of one directory has its own sequence; a peer's
    // node of a sequence the server did not make (hand-written) may share it.
    for (; at != sorted.end() && at->sequence == mine->sequence; ++at)
        if (at->name == my_name) return at;
    return sorted.end();
}

} // namespace

queue_decision decide(const std::vector<lock_node>& sorted, std::string_view my_name, std::size_t permits) {
    return decide_permits(sorted, find_by_name(sorted, my_name), permits);
}

queue_decision decide_read_write(const std::vector<lock_node>& sorted, std::string_view my_name) {
    return decide_rw(sorted, find_by_name(sorted, my_name));
}

std::vector<node_view>::const_iterator children_listing::find(std::string_view my_name) const {
    return find_in(sorted(), my_name);
}

queue_decision decide(const queue_rule& rule, const children_listing& children, std::string_view my_name) {
    const auto& sorted = children.sorted();
    const auto me = children.find(my_name);
    return rule.read_write ? decide_rw(sorted, me) : decide_permits(sorted, me, rule.permits);
}

} // namespace zklock::detail
