// The acquire machine, waiting and holding: the watches on the nodes ahead
// and on our own, wake-ups, the grant, the hold's own-node watches and
// revocation requests, session events; the state in words.
#include "fsm/acquire_machine.hpp"

#include "fsm/reply_kind.hpp"
#include "fsm/safe_time.hpp"
#include "fsm/session_states.hpp"
#include <zklock/error.hpp>

#include <zookeeper.h>

#include <utility>

namespace zklock::detail {

namespace {

using kind = acquire_action::kind;

} // namespace

// ---- waiting ----------------------------------------------------------------------

bool acquire_machine::trusts_marks() const noexcept {
    // Only an exclusive holder of one queue marks; a waiter under the mutex
    // rule watches the one node just ahead of it. (A permit or a reader that
    // held proves nothing about the nodes ahead of it.)
    return setup_.rule.permits == 1 && !setup_.rule.read_write && !setup_.rule.watch_parent && queues() == 1;
}

bool acquire_machine::own_watch_needed(std::size_t queue) const noexcept {
    // A set is granted without listing again the queues where it is first, a
    // queue without a listing when its last blocker goes or a release proof
    // comes.
    return queues() > 1 || q(queue).last_blocker || trusts_marks();
}

acquire_actions acquire_machine::watch(std::size_t queue, const queue_decision& d) {
    auto& w = q(queue);
    ++w.generation;
    w.persistent.clear();
    w.watching = d.watch;
    w.last_blocker = d.watch_is_last_blocker;
    acquire_actions out;
    // A grant without a listing (a last blocker's deletion, a release proof,
    // a queue where a set is first already) must not be given on a node that
    // someone else deleted meanwhile: our own nodes are watched too, ahead of
    // the others. One session's events come in the order of their
    // transactions, and before the replies of requests the server ran after
    // them, so our node's deletion is told before anything that would grant us.
    for (std::size_t i = 0; i < queues(); ++i)
        if (!q(i).node.empty() && !q(i).own_watched && own_watch_needed(i)) {
            q(i).own_watched = true;
            out.push_back(act(kind::watch_own_node, q(i).node, 0, i));
        }
    for (const auto& name : w.watching) out.push_back(act(kind::watch_node, name, w.generation, queue));
    // Under the mutex rule the one node watched may be a holder: its release
    // creates its `.released` sibling, watched too (fsm/release_proof.hpp).
    if (trusts_marks() && w.watching.size() == 1)
        out.push_back(act(kind::watch_release, w.watching.front(), w.generation));
    return out;
}

acquire_actions acquire_machine::watch_set(std::size_t queue, std::string_view name, std::int64_t generation, int rc,
                                           const node_stat& st) {
    auto& w = q(queue);
    if (stage_ != stage::waiting || generation != w.generation) return {};
    if (rc == ZOK && st.ephemeral_owner == 0) {
        // Not ephemeral: no session end will ever delete it. When every node
        // we wait for is such a node, waiting is waiting forever.
        w.persistent.emplace_back(name);
        if (w.persistent.size() == w.watching.size())
            return fail(make_error_code(errc::blocked_by_persistent_node),
                        path_of(queue, name) +
                            " is a persistent node (not ephemeral) ahead of us in the queue: it never goes away by "
                            "itself; an operator must delete it (zkCli.sh delete " + path_of(queue, name) + ")");
    }
    if (rc == ZOK) return {};  // wait for the watch
    if (rc == ZNONODE) return wake(queue, false, name);
    ++w.generation;  // one retry for the whole round, not one per node
    if (connection_trouble(rc)) return retry(acquire_step::list, rc, queue);
    if (session_gone(rc)) return {};
    if (rc == ZNOAUTH) return fail(from_zookeeper(rc), refused("read", path_of(queue, name)));
    return fail(from_zookeeper(rc));
}

acquire_actions acquire_machine::watch_fired(std::size_t queue, std::string_view name, std::int64_t generation,
                                             int type) {
    if (stage_ != stage::waiting || generation != q(queue).generation) return {};
    if (setup_.rule.watch_parent) {
        auto out = actions_of(act(kind::count_wakeup));
        append(out, list(queue));
        return out;
    }
    if (type == ZOO_DELETED_EVENT) return wake(queue, true, name);
    // Data changed (or a spurious event): watch that node again. A data change
    // is no release: zklock 0.3's mark and a revocation request (Curator's
    // Revoker, zklock's) both write the node, and the node found gone after a
    // request may have gone another way (its holder's expiry, a waiter's
    // cancel). A release's proof (release_seen) or a listing decides.
    return actions_of(act(kind::watch_node, std::string(name), generation, queue));
}

acquire_actions acquire_machine::release_seen(std::string_view name, std::int64_t generation, int type) {
    if (stage_ != stage::waiting || generation != q(0).generation || !trusts_marks()) return {};
    // Created: the node that held is deleted in the same transaction. Any other
    // event (a sibling somebody else made, deleted) proves nothing: the watch
    // on the node itself still decides.
    if (type != ZOO_CREATED_EVENT) return {};
    return wake(0, true, name, true);
}

acquire_actions acquire_machine::wake(std::size_t queue, bool notified, std::string_view name, bool ahead_held) {
    auto& w = q(queue);
    ++w.generation;  // the other watches of this round are stale now
    acquire_actions out;
    if (notified) out.push_back(act(kind::count_wakeup));
    // Sequence numbers only grow: when the watched nodes were the only ones
    // between us and a lease, one deletion alone grants it, for as long as our
    // node lives. So does the release of a node that held (its mark):
    // everything ahead of it had gone by then, and nothing arrives ahead of us.
    if ((!w.last_blocker && !ahead_held) || w.own_changed) {
        append(out, list(queue));
        return out;
    }
    if (!delay_.empty())
        delay_[queue].ahead_now =
            w.last_blocker ? without(delay_[queue].ahead.value_or(queue_ahead{}), name) : queue_ahead{};
    w.first = true;
    w.watching.clear();
    w.position = 0;
    if (!first_everywhere()) {
        out.push_back(act(kind::position, {}, farthest()));
        return out;
    }
    append(out, grant_unless_unwatched(queue));
    return out;
}

// A set first everywhere, `listed_queue` just decided: the other queues'
// nodes stand on their own watches. One that a write used up (own_changed) is
// listed first: its new watch, sent before, is answered before the listing.
acquire_actions acquire_machine::grant_unless_unwatched(std::size_t listed_queue) {
    acquire_actions out;
    for (std::size_t i = 0; i < queues(); ++i) {
        if (i == listed_queue || !q(i).own_changed) continue;
        if (!q(i).own_watched) {
            q(i).own_watched = true;
            out.push_back(act(kind::watch_own_node, q(i).node, 0, i));
        }
        ++q(i).generation;
        append(out, list(i));
    }
    if (!out.empty()) return out;
    return grant();
}

// ---- granting and holding -----------------------------------------------------------

acquire_actions acquire_machine::grant() {
    if (stage_ != stage::waiting) return {};
    // The nodes belong to a session that is gone (it was expired between our
    // listing and now): they are not ours to hold. Queue again on this session.
    if (owner_ != session.id) return requeue();
    if (!delay_.empty() && handover_ != handover_check::done) {
        if (handover_ != handover_check::unchecked) return {};  // the check under way grants
        // How the lock came to us: each directory's record of its last clean
        // release, read in one pipeline; every queue's handover must be clean.
        handover_ = handover_check::reading;
        handover_clean_ = true;
        handover_session_gone_ = false;
        gather(gathering::handover);
        acquire_actions out;
        for (std::size_t i = 0; i < queues(); ++i) out.push_back(act(kind::read_handover, {}, 0, i));
        return out;
    }
    if (!session.budget) {
        // Nothing the leader answered tells when the server last heard this
        // session (a lost create reply's nodes found by the guid: only reads
        // were answered since): a sync's answer does, then the grant.
        if (confirming_) return {};  // the sync under way grants
        confirming_ = true;
        return actions_of(act(kind::confirm_session));
    }
    stage_ = stage::held;
    for (std::size_t i = 0; i < queues(); ++i) q(i).position = 0;
    return actions_of(act(kind::grant, q(0).node, token_));
}

acquire_actions acquire_machine::synced(int rc) {
    if (!std::exchange(confirming_, false) || stage_ != stage::waiting) return {};
    if (connection_trouble(rc)) return retry(acquire_step::confirm, rc);
    if (session_gone(rc)) return {};  // the session event requeues or fails the acquire
    if (!server_answered(rc)) return fail(from_zookeeper(rc));
    return grant();  // the answer is the budget's basis (a sync slower than the timeout: another one)
}

acquire_actions acquire_machine::delay_elapsed() {
    if (delay_.empty() || handover_ != handover_check::delaying) return {};
    handover_ = handover_check::done;
    return grant();
}

acquire_actions acquire_machine::hold_settled() {
    if (stage_ != stage::held || node_gone_) return {};
    acquire_actions out;
    for (std::size_t i = 0; i < queues(); ++i) out.push_back(act(kind::watch_own_node, q(i).node, 0, i));
    return out;
}

acquire_actions acquire_machine::own_watch_set(std::size_t queue, int rc, std::string_view data,
                                               std::int32_t version) {
    auto& w = q(queue);
    if (stage_ == stage::waiting) {
        // The watch set while waiting (watch()): our node went before the grant.
        if (rc == ZNONODE) return requeue(queue);
        if (rc == ZOK) w.own_changed = false;  // watched again: a deletion is told in order
        if (rc != ZOK) w.own_watched = false;  // none set: the next round sets it
        return {};  // a request written into a waiter's node is read once it holds
    }
    if (stage_ != stage::held || node_gone_) return {};
    if (rc == ZNONODE) return own_node_gone(queue);
    if (connection_trouble(rc)) return retry(acquire_step::watch_own_node, rc, queue);
    if (rc != ZOK) return {};
    switch (w.revocation.read(data, version)) {
    case revocation_step::none: return {};
    case revocation_step::ignore: return actions_of(act(kind::revocation_request, w.node, 0, queue));
    case revocation_step::honour: return actions_of(act(kind::revoke, w.node, 0, queue));
    }
    return {};
}

acquire_actions acquire_machine::own_watch_fired(std::size_t queue, int type) {
    auto& w = q(queue);
    if (stage_ == stage::waiting) {
        if (type == ZOO_DELETED_EVENT) return requeue(queue);  // someone deleted our node before the grant
        w.own_watched = false;
        w.own_changed = true;
        bool watching = false;
        for (std::size_t i = 0; i < queues(); ++i) watching = watching || !q(i).watching.empty();
        if (!watching) return {};
        w.own_watched = true;
        return actions_of(act(kind::watch_own_node, w.node, 0, queue));
    }
    if (stage_ != stage::held || node_gone_) return {};
    if (type == ZOO_DELETED_EVENT) return own_node_gone(queue);
    return actions_of(act(kind::watch_own_node, w.node, 0, queue));
}

acquire_actions acquire_machine::own_node_gone(std::size_t queue) {
    // The lock is gone (one node loses a whole set): nobody may act on it from
    // now on. Why (someone deleted it, or our own session expired) the engine
    // finds out.
    node_gone_ = true;
    gone_queue_ = queue;
    return actions_of(act(kind::node_gone));
}

acquire_actions acquire_machine::session_changed(session_event e, std::error_code close_reason) {
    using step = attempt_reaction::step;
    const auto r = on_session_event(e, held(), waiting(), node_gone_, setup_.lose_on_suspension, close_reason);
    if (r.what == step::lose) return lose(r.ec);
    if (r.what == step::requeue) return requeue();  // queue again on the new session
    if (r.what == step::fail) return fail(r.ec);
    if (r.what != step::recheck || !evaluated_) return {};
    // List again every queue we wait in (not where we are first: that lasts).
    acquire_actions out;
    for (std::size_t i = 0; i < queues(); ++i)
        if (!q(i).first && !q(i).watching.empty()) {
            ++q(i).generation;
            append(out, list(i));
        }
    return out;
}

// ---- in words -------------------------------------------------------------------------

std::string acquire_machine::describe() const {
    static constexpr const char* stages[] = {"waiting", "held", "abandoned", "over"};
    std::string out = std::string("attempt=") + stages[static_cast<int>(stage_)];
    if (!guid_.empty()) out += " guid=" + guid_;
    out += " owner=" + std::to_string(owner_);
    if (create_in_flight_) out += " create_in_flight";
    if (create_uncertain_) out += " create_uncertain";
    if (cleanup_after_create_) out += " cleanup_after_create";
    if (claiming_) out += " claiming";
    if (confirming_) out += " confirming";
    if (node_gone_) out += " node_gone";
    if (!followers_possible_) out += " nobody_after";
    for (std::size_t i = 0; i < queues(); ++i) {
        const auto& w = q(i);
        out += queues() > 1 ? " [" + dir(i) + ":" : std::string();
        out += " node=" + (w.node.empty() ? std::string("-") : w.node);
        if (w.first) out += " first";
        if (w.last_blocker) out += " last_blocker";
        if (w.own_changed) out += " own_changed";
        out += " watching=[";
        for (std::size_t j = 0; j < w.watching.size(); ++j) out += (j ? "," : "") + w.watching[j];
        out += "] generation=" + std::to_string(w.generation) + (queues() > 1 ? "]" : "");
    }
    return out;
}

std::string to_string(const acquire_action& a) {
    static constexpr const char* names[] = {
        "wait_connected", "read_dir_data", "claim_dir",     "reread_dir_data", "read_dir_acl", "read_dir_before",
        "create",         "ensure_parents", "list",         "read_token",      "watch_node",   "read_handover",
        "start_delay",    "grant",          "watch_own_node", "node_gone",     "lose",         "requeue",
        "fail",           "give_up",        "delete_node",  "delete_by_guid",  "cleaned_up",   "position",
        "forget_position", "node_known",    "count_attempt", "count_wakeup", "revocation_request", "revoke",
        "watch_release",  "make_dir",       "confirm_session", "catch_up"};
    static constexpr const char* steps[] = {"create", "recover", "list", "watch_own_node", "confirm", "read_token"};
    static constexpr const char* listings[] = {"pipelined", "fresh", "recover"};
    std::string out = names[static_cast<int>(a.what)];
    if (a.what == kind::wait_connected) out += std::string(" ") + steps[static_cast<int>(a.step)];
    if (a.what == kind::list) out += std::string(" ") + listings[static_cast<int>(a.which)] + (a.watch ? " watch" : "");
    if (a.queue != 0) out += " @" + std::to_string(a.queue);
    if (!a.name.empty()) out += " " + a.name;
    for (const auto& p : a.paths) out += " " + p;
    if (a.number != 0) out += " #" + std::to_string(a.number);
    if (a.wait) out += " wait";
    if (a.mark) out += " mark";
    if (a.ec) out += " " + a.ec.message();
    if (!a.detail.empty()) out += ": " + a.detail;
    for (const auto& [dir, data] : a.records) out += " record " + dir + "=" + data;
    return out;
}

} // namespace zklock::detail
