// The lock set's acquire machine, acquiring: the transaction, recovery by
// guid, the listings, the watches and the grant. Holding and the ways out:
// set_acquire_leave.cpp.
#include "fsm/set_acquire_machine.hpp"

#include "fsm/limits.hpp"
#include "fsm/lock_node.hpp"
#include "fsm/path.hpp"
#include "fsm/reply_kind.hpp"
#include "fsm/safe_time.hpp"
#include <zklock/error.hpp>

#include <zookeeper.h>

#include <algorithm>
#include <utility>

namespace zklock::detail {

using set_kind = set_action::kind;

namespace {

void append(set_actions& to, set_actions more) {
    for (auto& a : more) to.push_back(std::move(a));
}

// The first op of a failed transaction that failed on its own (the ones after
// it report ZRUNTIMEINCONSISTENCY), or 0.
std::size_t failed_op(const std::vector<int>& op_errors) {
    for (std::size_t i = 0; i < op_errors.size(); ++i)
        if (op_errors[i] != ZOK && op_errors[i] != ZRUNTIMEINCONSISTENCY) return i;
    return 0;
}

} // namespace

set_acquire_machine::set_acquire_machine(const set_setup& setup, std::string guid)
    : setup_(setup), guid_(std::move(guid)) {
    const auto n = setup_.dirs.size();
    revocations_.assign(n, revocation_watch(setup_.revocable));
    listings_.resize(n);
    listed_.assign(n, false);
    first_.assign(n, false);
    generation_.assign(n, 0);
    watching_.resize(n);
    last_blocker_.assign(n, false);
    own_watched_.assign(n, false);
    positions_.resize(n);
    before_.resize(n);
    ahead_.resize(n);
    ahead_now_.resize(n);
}

set_action set_acquire_machine::act(set_action::kind k, std::size_t queue, std::string name, std::int64_t number) {
    set_action a;
    a.what = k;
    a.queue = queue;
    a.name = std::move(name);
    a.number = number;
    return a;
}

std::string set_acquire_machine::path_of(std::size_t queue, std::string_view child) const {
    return child_path(setup_.dirs[queue], child);
}

std::vector<std::string> set_acquire_machine::node_paths() const {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < nodes_.size(); ++i) out.push_back(path_of(i, nodes_[i]));
    return out;
}

std::string set_acquire_machine::refused(std::string_view what, std::string_view path) const {
    return "not authorized: " + words_of(setup_.policy).identity + " may not " + std::string(what) + " " + std::string(path);
}

bool set_acquire_machine::first_everywhere() const noexcept {
    return std::find(first_.begin(), first_.end(), false) == first_.end();
}

set_actions set_acquire_machine::retry(set_step step, std::size_t queue) const {
    auto a = act(set_kind::wait_connected, queue);
    a.step = step;
    return {a};
}

set_actions set_acquire_machine::fail(std::error_code ec, std::string detail) const {
    auto a = act(set_kind::fail);
    a.ec = ec;
    a.detail = std::move(detail);
    return {a};
}

set_actions set_acquire_machine::list(std::size_t queue) const {
    auto l = act(set_kind::list, queue);
    l.which = set_listing::fresh;
    return {act(set_kind::count_attempt), l};
}

void set_acquire_machine::gather(gathering what) {
    gathering_ = what;
    pending_ = setup_.dirs.size();
    pending_rc_ = ZOK;
    pending_at_.clear();
}

bool set_acquire_machine::gathered(gathering what) {
    if (gathering_ != what || pending_ == 0 || --pending_ > 0) return false;
    gathering_ = gathering::none;
    return true;
}

// ---- the transaction ----------------------------------------------------------------

set_actions set_acquire_machine::begin() { return {act(set_kind::forget_positions), retry(set_step::create).front()}; }

set_actions set_acquire_machine::connected(set_step step, std::size_t queue) {
    if (step == set_step::watch_own_node) {
        if (stage_ != stage::held || node_gone_) return {};
        return {act(set_kind::watch_own_node, queue, nodes_[queue])};
    }
    if (stage_ != stage::waiting) return {};
    switch (step) {
    case set_step::create: return send_create();
    case set_step::read_token: return read_token();
    case set_step::list: return list(queue);
    case set_step::recover: break;
    case set_step::watch_own_node: return {};
    case set_step::confirm: return grant();
    }
    // A lost transaction reply: look for our guid in every directory first.
    if (owner_ != session.id) {
        // A new session: the old one's ephemeral nodes, if any, are gone.
        create_uncertain_ = false;
        parent_retries_ = 0;
        return send_create();
    }
    gather(gathering::recovery);
    recovery_.assign(setup_.dirs.size(), {});
    set_actions out{act(set_kind::count_attempt)};
    for (std::size_t i = 0; i < setup_.dirs.size(); ++i) {
        auto l = act(set_kind::list, i);
        l.which = set_listing::recover;
        out.push_back(l);
    }
    return out;
}

set_actions set_acquire_machine::send_create() {
    owner_ = session.id;
    create_in_flight_ = true;
    listed_.assign(setup_.dirs.size(), false);
    set_actions out;
    // Lock-delay: each directory as it was before the transaction (answered before it).
    if (setup_.lock_delay.count() > 0)
        for (std::size_t i = 0; i < setup_.dirs.size(); ++i) out.push_back(act(set_kind::read_dir_before, i));
    out.push_back(act(set_kind::create, 0, node_name_prefix(guid_)));
    // Pipelined: the server runs one session's requests in order, so these
    // listings already hold the nodes the transaction makes.
    out.push_back(act(set_kind::count_attempt));
    for (std::size_t i = 0; i < setup_.dirs.size(); ++i) {
        auto l = act(set_kind::list, i);
        l.which = set_listing::pipelined;
        out.push_back(l);
    }
    return out;
}

set_actions set_acquire_machine::dir_before_read(std::size_t queue, int rc, std::string_view data,
                                                 const node_stat& st) {
    if (stage_ == stage::waiting) before_[queue] = directory_read(rc, data, st);
    return {};
}

set_actions set_acquire_machine::created(int rc, const std::vector<int>& op_errors,
                                         const std::vector<std::string>& created) {
    create_in_flight_ = false;
    if (rc == ZOK)
        for (const auto& path : created) nodes_.push_back(path.substr(path.rfind('/') + 1));
    if (connection_trouble(rc)) create_uncertain_ = true;
    if (stage_ == stage::abandoned) {
        // Cancelled while the transaction was in flight: what it made (or may have made) goes.
        if (std::exchange(cleanup_after_create_, false)) return cleanup();
        return delete_nodes(false);
    }
    if (stage_ != stage::waiting) return {};
    if (rc == ZOK) {
        set_actions out{act(set_kind::nodes_known)};
        append(out, read_token());
        return out;
    }
    const auto& dir = setup_.dirs[std::min(failed_op(op_errors), setup_.dirs.size() - 1)];
    if (rc == ZNONODE && parent_retries_ < max_parent_retries) {
        // The transaction fails as a whole when one directory is missing: make
        // every directory (and its parents) as containers, then try again.
        gather(gathering::parents);
        set_actions out;
        for (std::size_t i = 0; i < setup_.dirs.size(); ++i) out.push_back(act(set_kind::ensure_parents, i));
        return out;
    }
    if (connection_trouble(rc)) return retry(set_step::recover);
    if (session_gone(rc)) {
        if (rc == ZCLOSING && session.closed) return fail(make_error_code(errc::session_closed));
        return requeue(false);  // a new session is opening: queue again there
    }
    if (rc == ZNOAUTH) return fail(from_zookeeper(rc), refused("create lock nodes under", dir));
    if (rc == ZINVALIDACL)
        return fail(from_zookeeper(rc), "the server refused the ACL " + words_of(setup_.policy).acl_text + " for " + dir);
    return fail(from_zookeeper(rc));
}

set_actions set_acquire_machine::parents_ensured(std::size_t, int rc, std::string_view at) {
    if (stage_ != stage::waiting || gathering_ != gathering::parents) return {};
    if (rc != ZOK && rc != ZNODEEXISTS && pending_rc_ == ZOK) {
        pending_rc_ = rc;
        pending_at_ = std::string(at);
    }
    if (!gathered(gathering::parents)) return {};
    ++parent_retries_;
    if (pending_rc_ == ZOK) return send_create();
    if (connection_trouble(pending_rc_)) return retry(set_step::create);
    if (pending_rc_ == ZNOAUTH) return fail(from_zookeeper(pending_rc_), refused("create", pending_at_));
    return fail(from_zookeeper(pending_rc_));
}

set_actions set_acquire_machine::recovered(const std::vector<std::vector<std::string>>& listings) {
    create_uncertain_ = false;
    parent_retries_ = 0;
    const auto found = find_set_by_guid(listings, guid_);
    using outcome = set_recovery::outcome;
    if (found.found == outcome::none) return send_create();  // the transaction did not commit
    if (found.found == outcome::partial) {
        // It committed, and someone deleted some of our nodes since: the rest go.
        auto d = act(set_kind::delete_set, 0, {}, owner_);
        for (std::size_t i = 0; i < setup_.dirs.size(); ++i)
            if (found.names[i]) d.paths.push_back(path_of(i, *found.names[i]));
        set_actions out{d};
        append(out, requeue(false));
        return out;
    }
    for (std::size_t i = 0; i < setup_.dirs.size(); ++i) {
        nodes_.push_back(*found.names[i]);
        // Each recovering listing holds our node: it is that queue's first listing.
        listings_[i] = listings[i];
        listed_[i] = true;
    }
    set_actions out{act(set_kind::nodes_known)};
    append(out, read_token());
    return out;
}

set_actions set_acquire_machine::read_token() const {
    // A create inside a multi returns no Stat: read our first node's. Every
    // node of the transaction has its zxid as czxid. The listings sent behind
    // the transaction are answered before this.
    return {act(set_kind::read_token, 0, nodes_[0])};
}

set_actions set_acquire_machine::token_read(int rc, const node_stat& st) {
    if (stage_ != stage::waiting) return {};
    if (rc == ZNONODE) return requeue(true);
    if (connection_trouble(rc)) return retry(set_step::read_token);
    if (session_gone(rc)) return {};  // the session event restarts or fails the acquire
    if (rc == ZNOAUTH) return fail(from_zookeeper(rc), refused("read", path_of(0, nodes_[0])));
    if (rc != ZOK) return fail(from_zookeeper(rc));
    token_ = st.czxid;
    owner_ = st.ephemeral_owner;  // the server's word on which session owns them
    token_read_ = true;
    set_actions out;
    for (std::size_t i = 0; i < setup_.dirs.size(); ++i)
        if (!listed_[i]) append(out, list(i));
    if (out.empty()) return evaluate(std::nullopt);
    return out;
}

// ---- listing and deciding -----------------------------------------------------------

set_actions set_acquire_machine::listed(std::size_t queue, set_listing which, int rc,
                                        const std::vector<std::string>& children) {
    if (stage_ != stage::waiting) return {};
    if (which == set_listing::pipelined) {
        // Behind a failed transaction: its reply acts; a failed listing: the token's read lists again.
        if (nodes_.empty() || rc != ZOK) return {};
        listings_[queue] = children;
        listed_[queue] = true;
        return {};
    }
    if (which == set_listing::recover) {
        if (gathering_ != gathering::recovery) return {};
        if (rc != ZOK && rc != ZNONODE && pending_rc_ == ZOK) pending_rc_ = rc;
        recovery_[queue] = children;
        if (!gathered(gathering::recovery)) return {};
        if (connection_trouble(pending_rc_)) return retry(set_step::recover);
        if (session_gone(pending_rc_)) return {};
        if (pending_rc_ != ZOK) return fail(from_zookeeper(pending_rc_));
        return recovered(std::exchange(recovery_, {}));
    }
    if (connection_trouble(rc)) return retry(set_step::list, queue);
    if (session_gone(rc)) return {};
    if (rc == ZNONODE) return requeue(true);  // the directory, and our node with it, is gone
    if (rc == ZNOAUTH) return fail(from_zookeeper(rc), refused("list", setup_.dirs[queue]));
    if (rc != ZOK) return fail(from_zookeeper(rc));
    listings_[queue] = children;
    listed_[queue] = true;
    if (evaluated_) return evaluate(queue);  // a re-check of this queue
    // The first decision takes every queue's listing and the token.
    if (token_read_ && std::find(listed_.begin(), listed_.end(), false) == listed_.end())
        return evaluate(std::nullopt);
    return {};
}

set_actions set_acquire_machine::evaluate(std::optional<std::size_t> only) {
    evaluated_ = true;
    const auto d = decide_set(listings_, nodes_);
    for (const auto i : d.missing)
        if (!only || *only == i) return requeue(true);  // someone deleted a node of ours before the grant
    for (std::size_t i = 0; i < setup_.dirs.size(); ++i) {
        if (only && *only != i) continue;
        positions_[i] = d.queues[i].position;
        if (d.queues[i].acquired) first_[i] = true;
        if (setup_.lock_delay.count() > 0) {
            ahead_now_[i] = sequences_ahead(listings_[i], nodes_[i]);
            if (!first_[i]) ahead_[i] = ahead_now_[i];
        }
    }
    set_actions out{act(set_kind::positions)};
    if (first_everywhere()) {
        append(out, grant());
        return out;
    }
    if (setup_.no_wait) {
        out.push_back(act(set_kind::give_up));
        return out;
    }
    for (std::size_t i = 0; i < setup_.dirs.size(); ++i)
        if ((!only || *only == i) && !first_[i]) append(out, watch(i, d.queues[i]));
    return out;
}

// ---- waiting ------------------------------------------------------------------------

set_actions set_acquire_machine::watch(std::size_t queue, const queue_decision& q) {
    const auto generation = ++generation_[queue];
    watching_[queue] = q.watch;
    last_blocker_[queue] = q.watch_is_last_blocker;
    set_actions out;
    // The set is granted without listing again the queues where it is first,
    // or where the last node ahead went: every node of ours is watched while
    // waiting, ahead of the nodes it waits for, so that a deletion of one of
    // ours is told before anything that would grant the set (one session's
    // events come in the order of their transactions).
    for (std::size_t i = 0; i < setup_.dirs.size(); ++i)
        if (!nodes_[i].empty() && !own_watched_[i]) {
            own_watched_[i] = true;
            out.push_back(act(set_kind::watch_own_node, i, nodes_[i]));
        }
    for (const auto& name : q.watch) out.push_back(act(set_kind::watch_node, queue, name, generation));
    return out;
}

set_actions set_acquire_machine::watch_set(std::size_t queue, std::string_view name, std::int64_t generation,
                                           int rc, const node_stat& st) {
    if (stage_ != stage::waiting || generation != generation_[queue]) return {};
    if (rc == ZOK && st.ephemeral_owner == 0)
        return fail(make_error_code(errc::blocked_by_persistent_node),
                    path_of(queue, name) +
                        " is a persistent node (not ephemeral) ahead of us in the queue: it never goes away by "
                        "itself; an operator must delete it (zkCli.sh delete " + path_of(queue, name) + ")");
    if (rc == ZOK) return {};  // wait for the watch
    if (rc == ZNONODE) return wake(queue, false, name);
    ++generation_[queue];
    if (connection_trouble(rc)) return retry(set_step::list, queue);
    if (session_gone(rc)) return {};
    if (rc == ZNOAUTH) return fail(from_zookeeper(rc), refused("read", path_of(queue, name)));
    return fail(from_zookeeper(rc));
}

set_actions set_acquire_machine::watch_fired(std::size_t queue, std::string_view name, std::int64_t generation,
                                             int type) {
    if (stage_ != stage::waiting || generation != generation_[queue]) return {};
    if (type == ZOO_DELETED_EVENT) return wake(queue, true, name);
    // Data changed (or a spurious event): watch that node again.
    return {act(set_kind::watch_node, queue, std::string(name), generation)};
}

set_actions set_acquire_machine::wake(std::size_t queue, bool notified, std::string_view name) {
    ++generation_[queue];  // the other watches of this round are stale now
    set_actions out;
    if (notified) out.push_back(act(set_kind::count_wakeup));
    if (!last_blocker_[queue]) {
        append(out, list(queue));
        return out;
    }
    // The only node ahead of us in this queue went: sequence numbers only
    // grow, so we are first there for as long as our node lives.
    first_[queue] = true;
    watching_[queue].clear();
    ahead_now_[queue] = without(ahead_[queue].value_or(queue_ahead{}), name);
    positions_[queue] = 0;
    out.push_back(act(set_kind::positions));
    if (first_everywhere()) append(out, grant());
    return out;
}

// ---- granting -----------------------------------------------------------------------

set_actions set_acquire_machine::grant() {
    if (stage_ != stage::waiting) return {};
    // Nodes of a session that is gone (expired between our listing and now)
    // are not ours to hold: queue again on this session.
    if (owner_ != session.id) return requeue(false);
    if (setup_.lock_delay.count() > 0 && handover_ != handover_check::done) {
        if (handover_ != handover_check::unchecked) return {};  // the check under way grants
        // Every queue's handover must be clean: the directories' records, read in one pipeline.
        handover_ = handover_check::reading;
        gather(gathering::handover);
        handover_clean_ = true;
        set_actions out;
        for (std::size_t i = 0; i < setup_.dirs.size(); ++i) out.push_back(act(set_kind::read_handover, i));
        return out;
    }
    if (!session.budget) {
        // Nothing the leader answered tells when the server last heard this
        // session (a lost transaction reply's nodes found by the guid: only
        // reads were answered since): a sync's answer does, then the grant.
        if (confirming_) return {};  // the sync under way grants
        confirming_ = true;
        return {act(set_kind::confirm_session)};
    }
    stage_ = stage::held;
    return {act(set_kind::grant, 0, {}, token_)};  // the own-node watches follow once the hold settles
}

set_actions set_acquire_machine::handover_read(std::size_t queue, int rc, std::string_view data) {
    if (stage_ != stage::waiting || handover_ != handover_check::reading || gathering_ != gathering::handover)
        return {};
    const auto& before = ahead_[queue];
    const handover h{before ? std::optional(before->to_vector()) : std::nullopt, ahead_now_[queue].to_vector(),
                     split_release_marker(data), before_[queue], true};
    handover_clean_ = handover_clean_ && rc == ZOK && clean_handover(h);
    if (!gathered(gathering::handover)) return {};
    handover_ = handover_clean_ ? handover_check::done : handover_check::delaying;
    if (handover_clean_) return grant();
    return {act(set_kind::start_delay)};
}

set_actions set_acquire_machine::synced(int rc) {
    if (!std::exchange(confirming_, false) || stage_ != stage::waiting) return {};
    if (connection_trouble(rc)) return retry(set_step::confirm);
    if (session_gone(rc)) return {};  // the session event requeues or fails the acquire
    if (!server_answered(rc)) return fail(from_zookeeper(rc));
    return grant();  // the answer is the budget's basis (a sync slower than the timeout: another one)
}

set_actions set_acquire_machine::delay_elapsed() {
    if (handover_ != handover_check::delaying) return {};
    handover_ = handover_check::done;
    return grant();
}

} // namespace zklock::detail
