// The acquire machine's ways out of the queue: queueing again, failing, a
// cancel's cleanup (what to delete, and when it is done), the release and the
// loss of a hold.
#include "fsm/acquire_machine.hpp"

#include <zklock/error.hpp>

namespace zklock::detail {

using kind = acquire_action::kind;

acquire_actions acquire_machine::requeue() {
    stage_ = stage::over;
    return actions_of(act(kind::requeue));
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
    auto remove = [&](kind k, std::string name) {
        auto a = act(k, std::move(name), owner_);
        a.wait = wait;
        acquire_actions out{a};
        if (!wait) out.push_back(act(kind::cleaned_up));
        return out;
    };
    if (!node_.empty()) return remove(kind::delete_node, node_);
    // The node may exist under our guid: the session finds and deletes it.
    if (create_in_flight_ || create_uncertain_) return remove(kind::delete_by_guid, guid_);
    return actions_of(act(kind::cleaned_up));
}

acquire_actions acquire_machine::release() {
    if (stage_ != stage::held) return {};
    stage_ = stage::over;
    auto a = act(kind::delete_node, node_, owner_);
    a.wait = true;
    // The successor holds on the mark without a listing. Only a successor
    // that listed while someone was still ahead of us needs it (one that
    // listed us first holds on our deletion): none can when the listing that
    // granted us showed nobody after us.
    a.mark = setup_.mark_release && trusts_marks() && followers_possible_;
    if (delay_) a.release_record = release_record_data(setup_.rule.dir_data, delay_->before, node_);
    return actions_of(act(kind::forget_position), std::move(a));
}

acquire_actions acquire_machine::lost(std::error_code ec) {
    if (stage_ != stage::held) return {};
    stage_ = stage::over;
    auto out = actions_of(act(kind::forget_position));
    // If the session survives (suspension policy), the node must not block others.
    if (ec == errc::connection_suspended) out.push_back(act(kind::delete_node, node_, owner_));
    return out;
}

} // namespace zklock::detail
