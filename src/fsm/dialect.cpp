#include "fsm/dialect.hpp"

#include "fsm/lock_node.hpp"

#include <algorithm>
#include <array>

namespace zklock::detail {
namespace {

bool is_hex(char c) noexcept { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

bool all_hex(std::string_view s) noexcept { return std::all_of(s.begin(), s.end(), is_hex); }

// A 36-character UUID: hex with dashes at 8, 13, 18 and 23.
bool is_uuid(std::string_view s) noexcept {
    if (s.size() != 36) return false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? s[i] != '-' : !is_hex(s[i])) return false;
    }
    return true;
}

// `prefix` is what comes before "lock-": "_c_<tag>-" or nothing.
dialect lock_dialect(std::string_view prefix) noexcept {
    if (prefix.empty()) return dialect::curator;  // Curator without protection: "lock-<seq>"
    if (prefix.size() > protected_tag.size() + 1 && prefix.substr(0, protected_tag.size()) == protected_tag &&
        prefix.back() == '-') {
        const auto tag = prefix.substr(protected_tag.size(), prefix.size() - protected_tag.size() - 1);
        if (is_uuid(tag)) return dialect::zklock;  // and Curator's InterProcessMutex / LeaderSelector
        if (tag.size() == 32 && all_hex(tag)) return dialect::go_zookeeper;
    }
    return dialect::lock_suffix;
}

// The C recipe: "x-%016llx-" of the session id, then the sequence.
constexpr std::size_t c_recipe_prefix = 2 + 16 + 1;

std::optional<recognised_node> c_recipe_node(std::string_view child) {
    if (child.size() <= c_recipe_prefix || child.substr(0, 2) != "x-" || child[c_recipe_prefix - 1] != '-' ||
        !all_hex(child.substr(2, 16)))
        return std::nullopt;
    const auto seq = parse_sequence(child, child.substr(0, c_recipe_prefix));
    if (!seq) return std::nullopt;
    return recognised_node{*seq, dialect::c_recipe, contender_kind::exclusive, false};
}

struct marked_form {
    std::string_view marker;  // the text right before the sequence
    dialect who;
    contender_kind kind;
};

// Every marker but "lock-", whose dialect depends on the tag before it.
constexpr std::array<marked_form, 7> marked_forms{{
    {"__rlock__", dialect::kazoo, contender_kind::shared},
    {"__lock__", dialect::kazoo, contender_kind::exclusive},
    {"__READ__", dialect::curator, contender_kind::shared},
    {"__WRIT__", dialect::curator, contender_kind::exclusive},
    {"latch-", dialect::curator, contender_kind::exclusive},
    {write_marker, dialect::zklock, contender_kind::exclusive},
    {read_marker, dialect::zklock, contender_kind::shared},
}};

} // namespace

std::optional<recognised_node> recognise(std::string_view child) {
    if (const auto seq = parse_sequence(child, lock_marker)) {
        const auto prefix = child.substr(0, sequence_marker_at(child, lock_marker));
        return recognised_node{*seq, lock_dialect(prefix), contender_kind::exclusive, true};
    }
    for (const auto& form : marked_forms)
        if (const auto seq = parse_sequence(child, form.marker))
            return recognised_node{*seq, form.who, form.kind, false};
    return c_recipe_node(child);
}

std::string_view dialect_name(dialect d) noexcept {
    switch (d) {
    case dialect::zklock: return "zklock";
    case dialect::curator: return "curator";
    case dialect::kazoo: return "kazoo";
    case dialect::go_zookeeper: return "go-zookeeper";
    case dialect::c_recipe: return "c-recipe";
    case dialect::lock_suffix: return "lock-suffix";
    }
    return "unknown";
}

std::string_view kind_name(contender_kind k) noexcept { return k == contender_kind::shared ? "shared" : "exclusive"; }

std::optional<std::string> foreign_semaphore_children(const std::vector<std::string>& children) {
    for (const auto& c : children) {
        if (c == "leases" || c == "locks")
            return "an Apache Curator InterProcessSemaphoreV2 (its " + c + "/ child is under the path)";
        if (c.size() == 32 && all_hex(c)) return "a kazoo Semaphore (its lease node " + c + " is under the path)";
    }
    return std::nullopt;
}

std::optional<std::string> foreign_semaphore_data(std::string_view data) {
    if (data.empty() || data.size() > 10 || !std::all_of(data.begin(), data.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
    return "a kazoo Semaphore (the path's data holds its lease count, " + std::string(data) + ")";
}

} // namespace zklock::detail
