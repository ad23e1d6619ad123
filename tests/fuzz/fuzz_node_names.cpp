// Fuzz target: the names other clients write into a lock directory, as a
// getChildren listing (one child a line) read by the dialect and queue rules.
// Properties: a sequence is read only where the server could have written it
// ("%010d" of the counter), and wherever it could have; every recognised
// child is in the queue once, in serial-number order when the sequences span
// less than half the counter; a decision finds each contender where the
// queue puts it.
#include "fuzz_check.hpp"

#include "fsm/dialect.hpp"
#include "fsm/lock_delay.hpp"
#include "fsm/lock_node.hpp"
#include "fsm/lock_set.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace zklock;
using fuzz::check;

std::string server_sequence(std::int32_t v) {
    char text[16];
    std::snprintf(text, sizeof text, "%010d", v);
    return text;
}

/// The sequences span less than 2^31 on the counter's circle: serial-number
/// order is then a total order on them.
bool within_half_circle(const std::vector<detail::lock_node>& nodes) {
    if (nodes.size() < 2) return true;
    std::vector<std::uint32_t> on_circle;
    for (const auto& n : nodes) on_circle.push_back(static_cast<std::uint32_t>(n.sequence));
    std::sort(on_circle.begin(), on_circle.end());
    std::uint64_t widest_gap = std::uint64_t{on_circle.front()} + (std::uint64_t{1} << 32) - on_circle.back();
    for (std::size_t i = 1; i < on_circle.size(); ++i)
        widest_gap = std::max<std::uint64_t>(widest_gap, on_circle[i] - on_circle[i - 1]);
    return (std::uint64_t{1} << 32) - widest_gap < (std::uint64_t{1} << 31);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto children = fuzz::split(fuzz::text_of(data, size), '\n');
    if (children.size() > 32) children.resize(32);

    std::size_t recognised = 0;
    for (const auto& child : children) {
        for (const std::string_view marker : {detail::lock_marker, detail::write_marker, detail::read_marker})
            if (const auto seq = detail::parse_sequence(child, marker))
                check(child.ends_with(std::string(marker) + server_sequence(*seq)),
                      "parse_sequence reads only a sequence the server writes", child);
        const auto r = detail::recognise(child);
        if (!r) continue;
        ++recognised;
        check(child.ends_with(server_sequence(r->sequence)), "a recognised name ends in its sequence", child);
        check(!detail::dialect_name(r->dialect).empty() && !detail::kind_name(r->kind).empty(), "names of a dialect");
    }

    // Every sequence the server writes is read, after any name: the first
    // child's, with a marker and the sequence of the input's first bytes.
    std::int32_t written = 0;
    if (size >= sizeof written) std::memcpy(&written, data, sizeof written);
    for (const std::string_view marker : {detail::lock_marker, detail::write_marker, detail::read_marker}) {
        const auto name = children.front() + std::string(marker) + server_sequence(written);
        check(detail::parse_sequence(name, marker) == written, "parse_sequence reads every sequence the server writes",
              name);
    }

    const auto sorted = detail::sorted_contenders(children);
    check(sorted.size() == recognised, "the queue holds every recognised child, once");
    if (within_half_circle(sorted))
        for (std::size_t i = 1; i < sorted.size(); ++i)
            check(!detail::sequence_before(sorted[i].sequence, sorted[i - 1].sequence), "queue in serial-number order");

    const detail::children_listing listing(children);
    check(listing.sorted().size() == sorted.size(), "the listing's queue is sorted_contenders'");
    for (std::size_t i = 0; i < sorted.size(); ++i)
        check(listing.sorted()[i].name == sorted[i].name && listing.sorted()[i].sequence == sorted[i].sequence,
              "the listing's queue is sorted_contenders'");

    std::set<std::int32_t> sequences;
    for (const auto& n : sorted) sequences.insert(n.sequence);
    const bool distinct = sequences.size() == sorted.size();

    const detail::queue_rule mutex_rule;
    detail::queue_rule semaphore_rule;
    semaphore_rule.permits = 3;
    detail::queue_rule read_write_rule;
    read_write_rule.read_write = true;
    for (std::size_t i = 0; i < sorted.size() && i < 8; ++i) {
        const auto& name = sorted[i].name;
        const auto found = listing.find(name);
        check(found != listing.sorted().end() && found->sequence == sorted[i].sequence, "find() by sequence");
        const auto d = detail::decide(mutex_rule, listing, name);
        check(d.found, "a contender finds itself");
        if (distinct) {
            check(d.position == i, "its position is its place in the queue", name);
            check(d.acquired == (i == 0), "the first contender alone holds a mutex", name);
            check(d.acquired || (d.watch.size() == 1 && d.watch[0] == sorted[i - 1].name),
                  "a mutex waiter watches its predecessor", name);
            check(detail::sequences_ahead(listing, name).to_vector().size() == i, "the sequences ahead of it");
        }
        const auto k = detail::decide(semaphore_rule, listing, name);
        check(k.found && (!k.acquired || !distinct || i < 3), "at most K hold a semaphore");
        const auto rw = detail::decide(read_write_rule, listing, name);
        check(rw.found, "a reader or writer finds itself");
        if (distinct && rw.acquired && !sorted[i].shared)
            check(i == 0, "a writer holds only when first", name);
        if (distinct && rw.acquired)
            for (std::size_t j = 0; j < i; ++j) check(sorted[j].shared, "nobody holds behind a writer", name);
    }
    check(!detail::decide(mutex_rule, listing, "_c_absent-lock-").found, "a name not listed is not found");

    if (!children.empty()) {
        (void)detail::find_by_guid(children, children.front());
        (void)detail::foreign_semaphore_children(children);
        const std::vector<std::vector<std::string>> listings{children, children};
        const std::vector<std::string> mine{children.back(), children.back()};
        const auto set = detail::decide_set(listings, mine);
        check(!set.acquired || set.found, "a set held is a set found");
        (void)detail::find_set_by_guid(listings, children.front());
    }
    return 0;
}
