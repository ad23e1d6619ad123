// The acquire machine's ways out of the queues: queueing again, failing, a
// cancel's cleanup (what to delete, and when it is done), the release and the
// loss of a hold.
#include "fsm/acquire_machine.hpp"

#include <zklock/error.hpp>

namespace zklock::detail {

using kind = acquire_action::kind;

acquire_actions acquire_machine::requeue(std::size_t gone) {
    stage_ = stage::over;
    // A node deleted by someone else before the grant: the others must not
    // stay behind (they would hold their queues for nothing).
    acquire_actions out;
    if (gone != none) out = delete_nodes(false, gone);
    out.push_back(act(kind::requeue));
    return out;
}

acquire_actions acquire_machine::fail(std::error_code ec, std::string detail) {
    auto a = act(kind::fail);
    a.ec = ec;
    a.detail = std::move(detail);
    return actions_of(std::move(a));
}

acquire_actions acquire_machine::cancel() {
    if (stage_ != stage::waiting) return actions_of(act(kind::cleaned_up));
    stage_ = stage::abandoned;
    return cleanup();
}

acquire_actions acquire_machine::cleanup() {
    if (create_in_flight_ && session.connected) {
        // The reply is on its way: clean up once it says what was created.
        cleanup_after_create_ = true;
        return {};
    }
    // Connected, the cleanup completes when the server confirms the delete;
    // otherwise the session owns the delete and the cleanup completes now.
    const bool wait = session.connected;
    auto out = delete_nodes(wait);
    if (out.empty() || !wait) out.push_back(act(kind::cleaned_up));
    return out;
}

// Our nodes but the one of queue `except` (known gone), in one delete: a
// node by its name, several by one multi. Before they are known, whatever
// carries our guid when the create may have applied.
acquire_actions acquire_machine::delete_nodes(bool wait, std::size_t except) {
    acquire_action a;
    std::size_t count = 0;
    for (std::size_t i = 0; i < queues(); ++i)
        if (i != except && !q(i).node.empty()) {
            if (++count == 1) {
                a = act(kind::delete_node, q(i).node, owner_, i);
            } else {
                if (count == 2) a.paths.push_back(path_of(a.queue, std::exchange(a.name, {})));
                a.paths.push_back(path_of(i, q(i).node));
                a.queue = 0;
            }
        }
    if (count == 0) {
        if (!create_in_flight_ && !create_uncertain_) return {};
        // The create may have applied: the session finds and deletes the
        // child of each directory that carries our guid.
        a = act(kind::delete_by_guid, guid_, owner_);
    }
    a.wait = wait;
    return actions_of(std::move(a));
}

acquire_actions acquire_machine::release() {
    if (stage_ != stage::held) return {};
    stage_ = stage::over;
    auto out = delete_nodes(true);
    auto& a = out.front();
    // The successor holds on the mark without a listing. Only a successor
    // that listed while someone was still ahead of us needs it (one that
    // listed us first holds on our deletion): none can when the listing that
    // granted us showed nobody after us.
    a.mark = setup_.mark_release && trusts_marks() && followers_possible_;
    // Lock-delay: every queue's clean-release record commits with the delete.
    for (std::size_t i = 0; i < delay_.size(); ++i)
        if (auto data = release_record_data(setup_.rule.dir_data, delay_[i].before, q(i).node))
            a.records.emplace_back(dir(i), std::move(*data));
    out.insert(out.begin(), act(kind::forget_position));
    return out;
}

acquire_actions acquire_machine::lost(std::error_code ec) {
    if (stage_ != stage::held) return {};
    stage_ = stage::over;
    auto out = actions_of(act(kind::forget_position));
    // When the session lives on (a node deleted by someone else, a
    // suspension), our other nodes must not hold their queues: they go.
    if (ec == errc::connection_suspended || (ec == errc::node_deleted && gone_queue_ != none))
        for (auto& a : delete_nodes(false, ec == errc::node_deleted ? gone_queue_ : none)) out.push_back(std::move(a));
    return out;
}

} // namespace zklock::detail
