// The name zklock gives the node it creates: pure functions, no server involved.
//
// A recipe's node plays a role in its queue (a mutex's lock, a read-write lock's
// writer or reader, an election's candidate, a semaphore's permit); the naming
// the user chose (zklock::node_names) spells that role as zklock, Curator or
// kazoo would (the table in zklock/node_names.hpp). Every form carries a tag
// that is unique to the attempt (a UUID, or 32 hex digits for kazoo), so an
// attempt whose create reply was lost finds its node again (find_by_guid), and
// every form is one detail::recognise() reads with the role's kind.
#pragma once

#include <zklock/node_names.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace zklock::detail {

/// What a node stands for in its recipe.
enum class node_role : std::uint8_t { lock, writer, reader, leader, permit };

/// How a node's name is spelled, without the sequence the server appends.
struct node_form {
    /// `<32 hex><marker>` (kazoo) instead of `_c_<uuid>-<marker>`.
    bool bare_hex_tag = false;
    /// The text right before the sequence: "lock-", "__WRIT__", "__rlock__", ...
    std::string_view marker = "lock-";
    friend bool operator==(const node_form&, const node_form&) = default;
};

/// The form of a `role` node in `names`; nullopt when that naming has no such
/// node (a semaphore's permit in any naming but zklock's).
std::optional<node_form> form_of(node_names names, node_role role) noexcept;

/// A new attempt's tag in `form`: a random UUID (36 characters), or for a bare
/// hex tag the same 128 random bits as 32 lowercase hex digits.
std::string new_tag(const node_form& form);

/// The name to create (the server appends the sequence): `_c_<tag>-<marker>`
/// or `<tag><marker>`.
std::string node_name_prefix(std::string_view tag, const node_form& form);

/// The length of node_name_prefix() for any tag new_tag(form) makes.
std::size_t node_name_prefix_size(const node_form& form) noexcept;

} // namespace zklock::detail
