// The release proof: the zero-round-trip handoff of the mutex rule.
//
// A holder's release is one transaction: create and delete a sibling
// `<node>.released`, write the node's data (the release mark of zklock 0.3),
// delete the node. The sibling exists only inside the transaction, so no
// listing ever sees it, yet its creation fires the exists watch its successor
// set beside the watch on the node: a NodeCreated event on that path says
// "the node that held is going, in this very transaction", and the successor
// holds without another request. Nothing else creates that path: a
// revocation request (Curator's Revoker, zklock revoke) writes the holder's
// data and can only be told from a release mark by a read; it never creates
// the sibling. A waiter ignores a sibling that already exists when it sets its
// watch (somebody put it there; it proves nothing).
#pragma once

#include <string>
#include <string_view>

namespace zklock::detail {

/// What a released node's sibling is called: the node's name and this.
inline constexpr std::string_view release_proof_suffix = ".released";

/// The sibling of the node at `node_path` that its release creates and deletes.
inline std::string release_proof_path(std::string_view node_path) {
    std::string out(node_path);
    out += release_proof_suffix;
    return out;
}

} // namespace zklock::detail
