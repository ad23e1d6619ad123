// What the acquire machines' unit tests share: actions in words, the sessions,
// the guid and the Stat they feed.
#pragma once

#include "fsm/node_stat.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace machine_words {

using words = std::vector<std::string>;

/// Each action in words (its to_string), in order.
template <class Actions>
words said(const Actions& actions) {
    words out;
    for (const auto& a : actions) out.push_back(to_string(a));
    return out;
}

inline constexpr std::int64_t session_a = 0x100;
inline constexpr std::int64_t session_b = 0x200;
inline const std::string guid = "0f8fad5b-d9cb-469f-a165-70867728950e";

inline zklock::detail::node_stat stat_of(std::int64_t czxid, std::int64_t owner) {
    zklock::detail::node_stat st;
    st.czxid = czxid;
    st.ephemeral_owner = owner;
    return st;
}

/// A lock directory that had children, the last of them gone in the
/// transaction that last wrote its data (a clean release's, with a record).
inline zklock::detail::node_stat released_cleanly() {
    zklock::detail::node_stat st;
    st.cversion = 4;
    st.pzxid = st.mzxid = 40;
    return st;
}

/// The directory `dir` as the check before a grant reads it: `creates`
/// children made since (ours among them), none gone.
inline zklock::detail::node_stat after_creates(zklock::detail::node_stat dir, std::int32_t creates = 1) {
    dir.cversion += creates;
    dir.num_children += creates;
    return dir;
}

} // namespace machine_words
