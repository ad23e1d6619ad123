#include "fsm/node_form.hpp"

#include "fsm/lock_node.hpp"

#include <algorithm>

namespace zklock::detail {
namespace {

// The markers of each naming, by role (include/zklock/node_names.hpp).
constexpr std::string_view kazoo_lock = "__lock__";
constexpr std::string_view kazoo_read = "__rlock__";
constexpr std::string_view curator_write = "__WRIT__";
constexpr std::string_view curator_read = "__READ__";
constexpr std::string_view curator_latch = "latch-";

constexpr std::size_t uuid_size = 36;
constexpr std::size_t hex_tag_size = 32;

} // namespace

std::optional<node_form> form_of(node_names names, node_role role) noexcept {
    switch (names) {
    case node_names::zklock:
        switch (role) {
        case node_role::writer: return node_form{false, write_marker};
        case node_role::reader: return node_form{false, read_marker};
        case node_role::lock:
        case node_role::leader:
        case node_role::permit: return node_form{false, lock_marker};
        }
        break;
    case node_names::curator:
        switch (role) {
        case node_role::lock: return node_form{false, lock_marker};  // InterProcessMutex's own name
        case node_role::writer: return node_form{false, curator_write};
        case node_role::reader: return node_form{false, curator_read};
        case node_role::leader: return node_form{false, curator_latch};
        case node_role::permit: return std::nullopt;
        }
        break;
    case node_names::kazoo:
        switch (role) {
        case node_role::lock:
        case node_role::writer:
        case node_role::leader: return node_form{true, kazoo_lock};  // Lock, WriteLock, Election
        case node_role::reader: return node_form{true, kazoo_read};
        case node_role::permit: return std::nullopt;
        }
        break;
    }
    return std::nullopt;
}

std::string new_tag(const node_form& form) {
    auto tag = new_guid();
    if (form.bare_hex_tag) tag.erase(std::remove(tag.begin(), tag.end(), '-'), tag.end());
    return tag;
}

std::string node_name_prefix(std::string_view tag, const node_form& form) {
    if (!form.bare_hex_tag) return node_name_prefix(tag, form.marker);
    std::string out;
    out.reserve(tag.size() + form.marker.size());
    out.append(tag).append(form.marker);
    return out;
}

std::size_t node_name_prefix_size(const node_form& form) noexcept {
    if (form.bare_hex_tag) return hex_tag_size + form.marker.size();
    return protected_tag.size() + uuid_size + 1 + form.marker.size();
}

} // namespace zklock::detail
