// The lock set's acquire machine, holding and leaving: the watches on our own
// nodes (any node of the set gone loses the set), session events, queueing
// again, a cancel's cleanup, the release and the loss of a hold.
#include "fsm/set_acquire_machine.hpp"

#include "fsm/reply_kind.hpp"
#include "fsm/session_states.hpp"
#include <zklock/error.hpp>

#include <zookeeper.h>

namespace zklock::detail {

using set_kind = set_action::kind;

// ---- holding ------------------------------------------------------------------------

set_actions set_acquire_machine::hold_settled() {
    if (stage_ != stage::held || node_gone_) return {};
    set_actions out;
    for (std::size_t i = 0; i < setup_.dirs.size(); ++i) out.push_back(act(set_kind::watch_own_node, i, nodes_[i]));
    return out;
}

set_actions set_acquire_machine::own_watch_set(std::size_t queue, int rc, std::string_view data,
                                               std::int32_t version) {
    if (stage_ == stage::waiting && queue < own_watched_.size()) {
        // The watch set while waiting (watch()): a node of ours went before the grant.
        if (rc == ZNONODE) return requeue(true);
        if (rc != ZOK) own_watched_[queue] = false;  // none set: the next round sets it
        return {};  // a request written into a waiting node is read once the set holds
    }
    if (stage_ != stage::held || node_gone_) return {};
    if (rc == ZNONODE) return own_node_gone();
    if (connection_trouble(rc)) return retry(set_step::watch_own_node, queue);
    if (rc != ZOK || queue >= revocations_.size()) return {};
    switch (revocations_[queue].read(data, version)) {
    case revocation_step::none: return {};
    case revocation_step::ignore: return {act(set_kind::revocation_request, queue, nodes_[queue])};
    case revocation_step::honour: return {act(set_kind::revoke, queue, nodes_[queue])};
    }
    return {};
}

set_actions set_acquire_machine::own_watch_fired(std::size_t queue, int type) {
    if (stage_ == stage::waiting && queue < own_watched_.size()) {
        if (type == ZOO_DELETED_EVENT) return requeue(true);  // someone deleted a node of ours before the grant
        return {act(set_kind::watch_own_node, queue, nodes_[queue])};  // still watched: the watch on its way
    }
    if (stage_ != stage::held || node_gone_) return {};
    if (type == ZOO_DELETED_EVENT) return own_node_gone();
    return {act(set_kind::watch_own_node, queue, nodes_[queue])};
}

set_actions set_acquire_machine::own_node_gone() {
    // One node gone loses the whole set: nobody may act on it from now on.
    // Why (someone deleted it, or our own session expired) the engine finds out.
    node_gone_ = true;
    return {act(set_kind::node_gone)};
}

set_actions set_acquire_machine::connect_failed(std::error_code ec) {
    if (stage_ == stage::waiting) return fail(ec);
    if (stage_ == stage::held) return lose(ec);
    return {};
}

set_actions set_acquire_machine::lose(std::error_code ec) {
    auto a = act(set_kind::lose);
    a.ec = ec;
    return {a};
}

set_actions set_acquire_machine::session_changed(session_event e, std::error_code close_reason) {
    using step = attempt_reaction::step;
    const auto r = on_session_event(e, held(), waiting(), node_gone_, setup_.lose_on_suspension, close_reason);
    if (r.what == step::lose) return lose(r.ec);
    if (r.what == step::requeue) return requeue(false);  // the nodes went with the session
    if (r.what == step::fail) return fail(r.ec);
    if (r.what != step::recheck || !evaluated_) return {};
    set_actions out;
    for (std::size_t i = 0; i < setup_.dirs.size(); ++i)
        if (!first_[i]) {
            ++generation_[i];
            for (auto& a : list(i)) out.push_back(std::move(a));
        }
    return out;
}

// ---- the ways out -------------------------------------------------------------------

set_actions set_acquire_machine::requeue(bool delete_nodes_first) {
    stage_ = stage::over;
    // A node deleted by someone else before the grant: the others must not
    // stay behind (they would hold their queues for nothing).
    set_actions out;
    if (delete_nodes_first && !nodes_.empty()) out = delete_nodes(false);
    out.push_back(act(set_kind::requeue));
    return out;
}

set_actions set_acquire_machine::delete_nodes(bool wait) {
    set_actions out;
    if (!nodes_.empty()) {
        auto d = act(set_kind::delete_set, 0, {}, owner_);
        d.paths = node_paths();
        d.wait = wait;
        out.push_back(std::move(d));
    } else if (create_in_flight_ || create_uncertain_) {
        // The transaction may have committed: whatever carries our guid in
        // each directory goes.
        for (std::size_t i = 0; i < setup_.dirs.size(); ++i) {
            auto d = act(set_kind::delete_by_guid, i, guid_, owner_);
            d.wait = wait;
            out.push_back(std::move(d));
        }
    }
    if (wait) {
        deletes_pending_ = out.size();
        delete_error_.clear();
    }
    return out;
}

set_actions set_acquire_machine::cancel() {
    if (stage_ != stage::waiting) return {act(set_kind::cleaned_up)};
    stage_ = stage::abandoned;
    return cleanup();
}

set_actions set_acquire_machine::cleanup() {
    if (create_in_flight_ && session.connected) {
        // The transaction's reply is on its way: clean up once it says what was made.
        cleanup_after_create_ = true;
        return {};
    }
    // Connected, the cleanup completes when the server confirms the deletes;
    // otherwise the session owns them and the cleanup completes now.
    auto out = delete_nodes(session.connected);
    if (deletes_pending_ == 0) out.push_back(act(set_kind::cleaned_up));
    return out;
}

set_actions set_acquire_machine::deleted(std::error_code ec) {
    if (deletes_pending_ == 0) return {};
    if (ec && !delete_error_) delete_error_ = ec;
    if (--deletes_pending_ > 0) return {};
    auto done = act(set_kind::cleaned_up);
    done.ec = delete_error_;
    return {done};
}

set_actions set_acquire_machine::release() {
    if (stage_ != stage::held) return {};
    stage_ = stage::over;
    auto out = delete_nodes(true);
    // Lock-delay: every queue's clean-release record commits with the deletes.
    if (setup_.lock_delay.count() > 0)
        for (std::size_t i = 0; i < setup_.dirs.size(); ++i)
            if (auto data = release_record_data({}, before_[i], nodes_[i]))
                out.front().records.emplace_back(setup_.dirs[i], std::move(*data));
    out.insert(out.begin(), act(set_kind::forget_positions));
    return out;
}

set_actions set_acquire_machine::lost(std::error_code ec) {
    if (stage_ != stage::held) return {};
    stage_ = stage::over;
    set_actions out{act(set_kind::forget_positions)};
    // When the session lives on (a node deleted by someone else, a suspension),
    // our other nodes must not hold their queues: they go. (The multi fails on
    // the node already gone; the session deletes the rest one by one.)
    if (ec == errc::node_deleted || ec == errc::connection_suspended)
        for (auto& a : delete_nodes(false)) out.push_back(std::move(a));
    return out;
}

// ---- in words -----------------------------------------------------------------------

std::string set_acquire_machine::describe() const {
    static constexpr const char* stages[] = {"waiting", "held", "abandoned", "over"};
    std::string out = std::string("attempt=") + stages[static_cast<int>(stage_)] + " guid=" + guid_ +
                      " owner=" + std::to_string(owner_);
    if (create_in_flight_) out += " create_in_flight";
    if (create_uncertain_) out += " create_uncertain";
    if (cleanup_after_create_) out += " cleanup_after_create";
    if (node_gone_) out += " node_gone";
    if (confirming_) out += " confirming";
    for (std::size_t i = 0; i < setup_.dirs.size(); ++i) {
        out += " [" + setup_.dirs[i] + ": " + (nodes_.empty() ? std::string("-") : nodes_[i]);
        if (first_[i]) out += " first";
        for (const auto& w : watching_[i]) out += " watching " + w;
        out += " generation=" + std::to_string(generation_[i]) + "]";
    }
    return out;
}

std::string to_string(const set_action& a) {
    static constexpr const char* names[] = {
        "wait_connected", "read_dir_before", "create",   "ensure_parents", "list",           "read_token",
        "watch_node",     "read_handover",   "start_delay", "grant",       "watch_own_node", "node_gone",
        "lose",           "requeue",         "fail",     "give_up",        "delete_set",     "delete_by_guid",
        "cleaned_up",     "positions",       "forget_positions", "nodes_known", "count_attempt", "count_wakeup",
        "revocation_request", "revoke", "confirm_session"};
    static constexpr const char* steps[] = {"create", "recover", "read_token", "list", "watch_own_node", "confirm"};
    static constexpr const char* listings[] = {"pipelined", "fresh", "recover"};
    std::string out = names[static_cast<int>(a.what)];
    if (a.what == set_kind::wait_connected) out += std::string(" ") + steps[static_cast<int>(a.step)];
    if (a.what == set_kind::list) out += std::string(" ") + listings[static_cast<int>(a.which)];
    switch (a.what) {
    case set_kind::read_dir_before:
    case set_kind::ensure_parents:
    case set_kind::list:
    case set_kind::watch_node:
    case set_kind::read_handover:
    case set_kind::watch_own_node:
    case set_kind::revocation_request:
    case set_kind::revoke:
    case set_kind::delete_by_guid: out += " @" + std::to_string(a.queue); break;
    case set_kind::wait_connected:
        if (a.step == set_step::list || a.step == set_step::watch_own_node) out += " @" + std::to_string(a.queue);
        break;
    default: break;
    }
    if (!a.name.empty()) out += " " + a.name;
    for (const auto& p : a.paths) out += " " + p;
    if (a.number != 0) out += " #" + std::to_string(a.number);
    if (a.wait) out += " wait";
    if (a.ec) out += " " + a.ec.message();
    if (!a.detail.empty()) out += ": " + a.detail;
    for (const auto& [dir, data] : a.records) out += " record " + dir + "=" + data;
    return out;
}

} // namespace zklock::detail
