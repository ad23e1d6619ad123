#include "fsm/acquire_machine.hpp"

#include "fsm/acl_check.hpp"
#include "fsm/dialect.hpp"
#include "fsm/limits.hpp"
#include "fsm/path.hpp"
#include "fsm/reply_kind.hpp"
#include "fsm/safe_time.hpp"
#include "fsm/session_states.hpp"
#include <zklock/error.hpp>

#include <zookeeper.h>

#include <utility>

namespace zklock::detail {

namespace {

using kind = acquire_action::kind;

void append(acquire_actions& to, acquire_actions more) {
    for (auto& a : more) to.push_back(std::move(a));
}

} // namespace

acquire_machine::acquire_machine(const acquire_setup& setup, std::string guid)
    : setup_(setup), guid_(std::move(guid)), revocation_(setup.revocable) {
    if (setup_.rule.lock_delay.count() > 0) delay_ = std::make_unique<delay_state>();
}

acquire_action acquire_machine::act(acquire_action::kind k, std::string name, std::int64_t number) {
    acquire_action a;
    a.what = k;
    a.name = std::move(name);
    a.number = number;
    return a;
}

const policy_words& acquire_machine::words() const noexcept { return words_of(setup_.policy); }

acquire_machine::rare_state& acquire_machine::rare() {
    if (!rare_) rare_ = std::make_unique<rare_state>();
    return *rare_;
}

std::string acquire_machine::path_of(std::string_view child) const { return child_path(setup_.dir, child); }

std::string acquire_machine::refused(std::string_view what, std::string_view path) const {
    return "not authorized: " + words().identity + " may not " + std::string(what) + " " + std::string(path);
}

// ---- the attempt's steps ----------------------------------------------------------

acquire_actions acquire_machine::begin() {
    return actions_of(act(kind::forget_position), std::move(retry(acquire_step::create).front()));
}

acquire_actions acquire_machine::retry(acquire_step step, int rc) {
    auto a = act(kind::wait_connected);
    a.step = step;
    if (rc != ZOK) a.ec = from_zookeeper(rc);  // a retry: what interrupted the step
    return actions_of(std::move(a));
}

acquire_actions acquire_machine::connected(acquire_step step) {
    if (step == acquire_step::watch_own_node) {
        if (stage_ != stage::held) return {};
        return actions_of(act(kind::watch_own_node, node_));
    }
    if (stage_ != stage::waiting) return {};
    switch (step) {
    case acquire_step::create: return send_create();
    case acquire_step::list: return list();
    case acquire_step::recover: break;
    case acquire_step::watch_own_node: return {};
    case acquire_step::confirm: return grant();
    }
    // A lost create reply: find our node by its guid before creating again.
    if (owner_ != session.id) {
        // A new session: the old one's ephemeral node, if any, is gone.
        create_uncertain_ = false;
        parent_retries_ = 0;
        return send_create();
    }
    auto l = act(kind::list);
    l.which = listing::recover;
    return actions_of(act(kind::count_attempt), std::move(l));
}

acquire_actions acquire_machine::connect_failed(std::error_code ec) {
    if (stage_ == stage::waiting) return fail(ec);
    if (stage_ == stage::held) return lose(ec);
    return {};
}

acquire_actions acquire_machine::lose(std::error_code ec) {
    auto a = act(kind::lose);
    a.ec = ec;
    return actions_of(std::move(a));
}

acquire_actions acquire_machine::send_create() {
    owner_ = session.id;
    create_in_flight_ = true;
    acquire_actions out;
    out.reserve(7);
    // A directory the session has not seen is created first, in the same round
    // trip: the session runs its requests in order (fsm/known_dirs.hpp). After
    // a create that found no directory, ensure_parents has made it.
    if (!session.dir_known && parent_retries_ == 0) out.push_back(act(kind::make_dir));
    // Their replies come before the create's.
    if (!setup_.rule.dir_data.empty()) out.push_back(act(kind::read_dir_data));
    if (setup_.rule.lock_delay.count() > 0) out.push_back(act(kind::read_dir_before));
    if (!words().expanded_acl.empty()) out.push_back(act(kind::read_dir_acl));
    out.push_back(act(kind::create, node_name_prefix(guid_, setup_.form)));
    if (setup_.rule.watch_parent) return out;  // the baseline lists with a watch after the create
    // Pipelined: the server runs one session's requests in order, so this listing
    // already holds the node the create above makes. One round trip in all,
    // unless another contender of the session is listing the directory: then
    // this one shares the next listing (fsm/listing_batches.hpp).
    auto l = act(kind::list);
    l.which = listing::pipelined;
    out.push_back(act(kind::count_attempt));
    out.push_back(std::move(l));
    return out;
}

acquire_actions acquire_machine::created(int rc, std::string_view path, const node_stat& st) {
    create_in_flight_ = false;
    if (rc == ZOK) node_ = std::string(path.substr(path.rfind('/') + 1));
    if (connection_trouble(rc)) create_uncertain_ = true;
    if (stage_ == stage::abandoned) {
        // Cancelled while the create was in flight: the node (or the doubt) is ours to remove.
        if (std::exchange(cleanup_after_create_, false)) return cleanup();
        if (rc == ZOK) return actions_of(act(kind::delete_node, node_, owner_));
        if (connection_trouble(rc)) return actions_of(act(kind::delete_by_guid, guid_, owner_));
        return {};
    }
    if (stage_ != stage::waiting) return {};
    if (rc == ZOK) {
        token_ = st.czxid;
        owner_ = st.ephemeral_owner;  // the server's word on which session owns it
        // The guid finds a node whose create is in doubt; this one is known by
        // name from now on (a new create is a new attempt with a new guid).
        std::string().swap(guid_);
        auto out = actions_of(act(kind::node_known, node_));
        if (setup_.rule.watch_parent) append(out, list());
        return out;  // otherwise the pipelined listing decides
    }
    if (rc == ZNONODE && parent_retries_ < max_parent_retries) return actions_of(act(kind::ensure_parents));
    // The create may have been applied: find it by guid before creating again.
    if (connection_trouble(rc)) return retry(acquire_step::recover, rc);
    if (session_gone(rc)) {
        if (rc == ZCLOSING && session.closed) return fail(make_error_code(errc::session_closed));
        return requeue();  // a new session is opening: queue again there
    }
    if (rc == ZNOAUTH) {
        // The directory's ACL refused the create; its getACL may say why.
        if (dir_error() == errc::insecure_acl) return fail(dir_error(), rare_->dir_error_detail);
        return fail(from_zookeeper(rc), refused("create lock nodes under", setup_.dir));
    }
    if (rc == ZINVALIDACL)
        return fail(from_zookeeper(rc), "the server refused the ACL " + words().acl_text + " for " + setup_.dir);
    return fail(from_zookeeper(rc));
}

acquire_actions acquire_machine::parents_ensured(int rc, std::string_view at) {
    if (stage_ != stage::waiting) return {};
    ++parent_retries_;
    if (rc == ZOK || rc == ZNODEEXISTS) return send_create();
    if (connection_trouble(rc)) return retry(acquire_step::create, rc);
    if (rc == ZNOAUTH) return fail(from_zookeeper(rc), refused("create", at));
    if (rc == ZNONODE && !words().chroot.empty() && at.find('/', 1) == std::string_view::npos)
        return fail(from_zookeeper(rc),
                    "the chroot " + words().chroot + " of the connect string does not exist on the server");
    return fail(from_zookeeper(rc));
}

// ---- listing and deciding ---------------------------------------------------------

acquire_actions acquire_machine::list() {
    auto l = act(kind::list);
    l.which = listing::fresh;
    if (setup_.rule.watch_parent) {
        l.watch = true;
        l.number = ++generation_;
    }
    return actions_of(act(kind::count_attempt), std::move(l));
}

acquire_actions acquire_machine::listed(listing which, int rc, const children_listing& children) {
    if (stage_ != stage::waiting) return {};
    if (which == listing::pipelined && node_.empty()) return {};  // the create failed: its reply acts
    if (which != listing::recover) return evaluate(rc, children);
    if (connection_trouble(rc)) return retry(acquire_step::recover, rc);
    if (rc == ZNONODE) {
        create_uncertain_ = false;
        parent_retries_ = 0;
        return send_create();
    }
    if (rc != ZOK) return fail(from_zookeeper(rc));
    const auto found = find_by_guid(children.children(), guid_);
    create_uncertain_ = false;
    parent_retries_ = 0;
    if (!found) return send_create();
    node_ = *found;
    // Our node exists: read its Stat for the fencing token, then decide on this listing.
    rare().recovered_listing = children.children();
    return actions_of(act(kind::read_token, node_));
}

acquire_actions acquire_machine::token_read(int rc, const node_stat& st) {
    if (stage_ != stage::waiting) return {};
    const auto children = rare_ ? std::exchange(rare_->recovered_listing, {}) : std::vector<std::string>{};
    if (rc == ZNONODE) {
        node_.clear();
        parent_retries_ = 0;
        return send_create();
    }
    if (rc != ZOK) return retry(acquire_step::recover, rc);
    token_ = st.czxid;
    owner_ = st.ephemeral_owner;
    auto out = actions_of(act(kind::node_known, node_));
    append(out, evaluate(ZOK, children));
    return out;
}

acquire_actions acquire_machine::evaluate(int rc, const children_listing& children) {
    if (connection_trouble(rc)) return retry(acquire_step::list, rc);
    if (session_gone(rc)) return {};  // the session event restarts or fails the acquire
    if (rc == ZNONODE) return requeue();  // the lock dir (and our node with it) is gone
    if (rc == ZNOAUTH) return fail(from_zookeeper(rc), refused("list", setup_.dir));
    if (rc != ZOK) return fail(from_zookeeper(rc));

    if (claiming_) {
        rare().deferred_listing = children.children();  // decided once the permit count is settled
        return {};
    }
    if (const auto ec = dir_error()) return fail(ec, rare_->dir_error_detail);
    if (!setup_.rule.dir_data.empty())  // a semaphore
        if (const auto peer = foreign_semaphore_children(children.children()))
            return fail(make_error_code(errc::foreign_recipe), foreign_semaphore(*peer));
    const auto d = decide(setup_.rule, children, node_);
    // Someone deleted our node before we were granted: queue again.
    if (!d.found) return requeue();
    auto out = actions_of(act(kind::position, {}, static_cast<std::int64_t>(d.position)));
    if (delay_) {
        delay_->ahead_now = sequences_ahead(children, node_);
        if (!d.acquired) delay_->ahead = delay_->ahead_now;
    }
    if (d.acquired) {
        // Granted by this listing with nobody queued after us: whoever queues
        // later lists us first, so its deletion alone grants it, and our
        // release needs no mark (release()).
        followers_possible_ = !d.last;
        append(out, grant());
        return out;
    }
    if (setup_.no_wait) {
        out.push_back(act(kind::give_up));
        return out;
    }
    if (setup_.rule.watch_parent) return out;  // the child watch set by the listing wakes us
    watching_ = d.watch;
    last_blocker_ = d.watch_is_last_blocker;
    append(out, watch());
    return out;
}

// ---- waiting ----------------------------------------------------------------------

bool acquire_machine::trusts_marks() const noexcept {
    // Only an exclusive holder marks; a waiter under the mutex rule watches the
    // one node just ahead of it. (A permit or a reader that held proves nothing
    // about the nodes ahead of it.)
    return setup_.rule.permits == 1 && !setup_.rule.read_write && !setup_.rule.watch_parent;
}

acquire_actions acquire_machine::watch() {
    ++generation_;
    if (rare_) rare_->persistent.clear();
    acquire_actions out;
    // A grant without a listing (the last blocker's deletion, a release proof)
    // must not be given on a node that someone else deleted meanwhile: our own
    // node is watched too, ahead of the others. One session's events come in
    // the order of their transactions, and before the replies of requests the
    // server ran after them, so our node's deletion is told before anything
    // that would grant us.
    if ((last_blocker_ || trusts_marks()) && !std::exchange(own_watched_, true))
        out.push_back(act(kind::watch_own_node, node_));
    for (const auto& name : watching_) out.push_back(act(kind::watch_node, name, generation_));
    // Under the mutex rule the one node watched may be a holder: its release
    // creates its `.released` sibling, watched too (fsm/release_proof.hpp).
    if (trusts_marks() && watching_.size() == 1) out.push_back(act(kind::watch_release, watching_.front(), generation_));
    return out;
}

acquire_actions acquire_machine::watch_set(std::string_view name, std::int64_t generation, int rc,
                                           const node_stat& st) {
    if (stage_ != stage::waiting || generation != generation_) return {};
    if (rc == ZOK && st.ephemeral_owner == 0) {
        // Not ephemeral: no session end will ever delete it. When every node
        // we wait for is such a node, waiting is waiting forever.
        rare().persistent.emplace_back(name);
        if (rare_->persistent.size() == watching_.size())
            return fail(make_error_code(errc::blocked_by_persistent_node),
                        path_of(name) +
                            " is a persistent node (not ephemeral) ahead of us in the queue: it never goes away by "
                            "itself; an operator must delete it (zkCli.sh delete " + path_of(name) + ")");
    }
    if (rc == ZOK) return {};  // wait for the watch
    if (rc == ZNONODE) return wake(false, name);
    ++generation_;  // one retry for the whole round, not one per node
    if (connection_trouble(rc)) return retry(acquire_step::list, rc);
    if (session_gone(rc)) return {};
    if (rc == ZNOAUTH) return fail(from_zookeeper(rc), refused("read", path_of(name)));
    return fail(from_zookeeper(rc));
}

acquire_actions acquire_machine::watch_fired(std::string_view name, std::int64_t generation, int type) {
    if (stage_ != stage::waiting || generation != generation_) return {};
    if (setup_.rule.watch_parent) {
        auto out = actions_of(act(kind::count_wakeup));
        append(out, list());
        return out;
    }
    if (type == ZOO_DELETED_EVENT) return wake(true, name);
    // Data changed (or a spurious event): watch that node again. A data change
    // is no release: zklock 0.3's mark and a revocation request (Curator's
    // Revoker, zklock's) both write the node, and the node found gone after a
    // request may have gone another way (its holder's expiry, a waiter's
    // cancel). A release's proof (release_seen) or a listing decides.
    return actions_of(act(kind::watch_node, std::string(name), generation_));
}

acquire_actions acquire_machine::release_seen(std::string_view name, std::int64_t generation, int type) {
    if (stage_ != stage::waiting || generation != generation_ || !trusts_marks()) return {};
    // Created: the node that held is deleted in the same transaction. Any other
    // event (a sibling somebody else made, deleted) proves nothing: the watch
    // on the node itself still decides.
    if (type != ZOO_CREATED_EVENT) return {};
    return wake(true, name, true);
}

acquire_actions acquire_machine::wake(bool notified, std::string_view name, bool ahead_held) {
    ++generation_;  // the other watches of this round are stale now
    acquire_actions out;
    if (notified) out.push_back(act(kind::count_wakeup));
    // Sequence numbers only grow: when the watched nodes were the only ones
    // between us and a lease, one deletion alone grants it. So does the
    // release of a node that held (its mark): everything ahead of it had gone
    // by then, and nothing arrives ahead of us.
    if ((!last_blocker_ && !ahead_held) || own_changed_) {
        append(out, list());
        return out;
    }
    if (delay_)
        delay_->ahead_now = last_blocker_ ? without(delay_->ahead.value_or(queue_ahead{}), name) : queue_ahead{};
    append(out, grant());
    return out;
}

// ---- granting and holding -----------------------------------------------------------

acquire_actions acquire_machine::grant() {
    if (stage_ != stage::waiting) return {};
    // The node belongs to a session that is gone (it was expired between our
    // listing and now): it is not ours to hold. Queue again on this session.
    if (owner_ != session.id) return requeue();
    if (delay_ && delay_->handover != handover_check::done) {
        if (delay_->handover != handover_check::unchecked) return {};  // the check under way grants
        // How the lock came to us: the directory's record of the last clean release.
        delay_->handover = handover_check::reading;
        return actions_of(act(kind::read_handover));
    }
    if (!session.budget) {
        // Nothing the leader answered tells when the server last heard this
        // session (a lost create reply's node found by the guid: only reads
        // were answered since): a sync's answer does, then the grant.
        if (confirming_) return {};  // the sync under way grants
        confirming_ = true;
        return actions_of(act(kind::confirm_session));
    }
    stage_ = stage::held;
    return actions_of(act(kind::grant, node_, token_));
}

acquire_actions acquire_machine::synced(int rc) {
    if (!std::exchange(confirming_, false) || stage_ != stage::waiting) return {};
    if (connection_trouble(rc)) return retry(acquire_step::confirm, rc);
    if (session_gone(rc)) return {};  // the session event requeues or fails the acquire
    if (!server_answered(rc)) return fail(from_zookeeper(rc));
    return grant();  // the answer is the budget's basis (a sync slower than the timeout: another one)
}

acquire_actions acquire_machine::delay_elapsed() {
    if (!delay_ || delay_->handover != handover_check::delaying) return {};
    delay_->handover = handover_check::done;
    return grant();
}

acquire_actions acquire_machine::hold_settled() {
    if (stage_ != stage::held || node_gone_) return {};
    return actions_of(act(kind::watch_own_node, node_));
}

acquire_actions acquire_machine::own_watch_set(int rc, std::string_view data, std::int32_t version) {
    if (stage_ == stage::waiting) {
        // The watch set while waiting (watch()): our node went before the grant.
        if (rc == ZNONODE) return requeue();
        if (rc == ZOK) own_changed_ = false;  // watched again: a deletion is told in order
        if (rc != ZOK) own_watched_ = false;  // none set: the next round sets it
        return {};  // a request written into a waiter's node is read once it holds
    }
    if (stage_ != stage::held || node_gone_) return {};
    if (rc == ZNONODE) return own_node_gone();
    if (connection_trouble(rc)) return retry(acquire_step::watch_own_node, rc);
    if (rc != ZOK) return {};
    switch (revocation_.read(data, version)) {
    case revocation_step::none: return {};
    case revocation_step::ignore: return actions_of(act(kind::revocation_request, node_));
    case revocation_step::honour: return actions_of(act(kind::revoke, node_));
    }
    return {};
}

acquire_actions acquire_machine::own_watch_fired(int type) {
    if (stage_ == stage::waiting) {
        if (type == ZOO_DELETED_EVENT) return requeue();  // someone deleted our node before the grant
        own_watched_ = false;
        own_changed_ = true;
        if (watching_.empty()) return {};
        own_watched_ = true;
        return actions_of(act(kind::watch_own_node, node_));
    }
    if (stage_ != stage::held || node_gone_) return {};
    if (type == ZOO_DELETED_EVENT) return own_node_gone();
    return actions_of(act(kind::watch_own_node, node_));
}

acquire_actions acquire_machine::own_node_gone() {
    // The lock is gone: nobody may act on it from now on. Why (someone deleted
    // it, or our own session expired) the engine finds out.
    node_gone_ = true;
    return actions_of(act(kind::node_gone));
}

acquire_actions acquire_machine::session_changed(session_event e, std::error_code close_reason) {
    using step = attempt_reaction::step;
    const auto r = on_session_event(e, held(), waiting(), node_gone_, setup_.lose_on_suspension, close_reason);
    if (r.what == step::lose) return lose(r.ec);
    if (r.what == step::requeue) return requeue();  // queue again on the new session
    if (r.what == step::fail) return fail(r.ec);
    if (r.what != step::recheck || watching_.empty()) return {};
    ++generation_;
    return list();
}

std::string acquire_machine::describe() const {
    static constexpr const char* stages[] = {"waiting", "held", "abandoned", "over"};
    std::string out = std::string("attempt=") + stages[static_cast<int>(stage_)];
    out += " node=" + (node_.empty() ? std::string("-") : node_) + " owner=" + std::to_string(owner_);
    if (create_in_flight_) out += " create_in_flight";
    if (create_uncertain_) out += " create_uncertain";
    if (cleanup_after_create_) out += " cleanup_after_create";
    if (claiming_) out += " claiming";
    if (confirming_) out += " confirming";
    if (node_gone_) out += " node_gone";
    if (last_blocker_) out += " last_blocker";
    if (!followers_possible_) out += " nobody_after";
    out += " watching=[";
    for (std::size_t i = 0; i < watching_.size(); ++i) out += (i ? "," : "") + watching_[i];
    return out + "] generation=" + std::to_string(generation_);
}

std::string to_string(const acquire_action& a) {
    static constexpr const char* names[] = {
        "wait_connected", "read_dir_data", "claim_dir",     "reread_dir_data", "read_dir_acl", "read_dir_before",
        "create",         "ensure_parents", "list",         "read_token",      "watch_node",   "read_handover",
        "start_delay",    "grant",          "watch_own_node", "node_gone",     "lose",         "requeue",
        "fail",           "give_up",        "delete_node",  "delete_by_guid",  "cleaned_up",   "position",
        "forget_position", "node_known",    "count_attempt", "count_wakeup", "revocation_request", "revoke",
        "watch_release",  "make_dir",       "confirm_session"};
    static constexpr const char* steps[] = {"create", "recover", "list", "watch_own_node", "confirm"};
    static constexpr const char* listings[] = {"pipelined", "fresh", "recover"};
    std::string out = names[static_cast<int>(a.what)];
    if (a.what == kind::wait_connected) out += std::string(" ") + steps[static_cast<int>(a.step)];
    if (a.what == kind::list) out += std::string(" ") + listings[static_cast<int>(a.which)] + (a.watch ? " watch" : "");
    if (!a.name.empty()) out += " " + a.name;
    if (a.number != 0) out += " #" + std::to_string(a.number);
    if (a.wait) out += " wait";
    if (a.mark) out += " mark";
    if (a.ec) out += " " + a.ec.message();
    if (!a.detail.empty()) out += ": " + a.detail;
    if (a.release_record) out += " record=" + *a.release_record;
    return out;
}

} // namespace zklock::detail
