// The acquire machine, queueing: the create (one queue's create2 or a set's
// transaction), recovery by guid, the listings and the decisions on them.
// Waiting, granting and holding: acquire_wait.cpp.
#include "fsm/acquire_machine.hpp"

#include "fsm/dialect.hpp"
#include "fsm/limits.hpp"
#include "fsm/lock_set.hpp"
#include "fsm/path.hpp"
#include "fsm/reply_kind.hpp"
#include <zklock/error.hpp>

#include <zookeeper.h>

#include <algorithm>
#include <utility>

namespace zklock::detail {

namespace {

using kind = acquire_action::kind;

// The first op of a failed transaction that failed on its own (the ones after
// it report ZRUNTIMEINCONSISTENCY), or 0.
std::size_t failed_op(const std::vector<int>& op_errors) {
    for (std::size_t i = 0; i < op_errors.size(); ++i)
        if (op_errors[i] != ZOK && op_errors[i] != ZRUNTIMEINCONSISTENCY) return i;
    return 0;
}

} // namespace

acquire_machine::acquire_machine(const acquire_setup& setup, std::string guid)
    : setup_(setup), guid_(std::move(guid)), first_queue_(setup.revocable) {
    if (queues() > 1) more_queues_.assign(queues() - 1, queue_state(setup_.revocable));
    if (setup_.rule.lock_delay.count() > 0) delay_.resize(queues());
}

acquire_action acquire_machine::act(acquire_action::kind k, std::string name, std::int64_t number, std::size_t queue) {
    acquire_action a;
    a.what = k;
    a.queue = queue;
    a.name = std::move(name);
    a.number = number;
    return a;
}

const policy_words& acquire_machine::words() const noexcept { return words_of(setup_.policy); }

acquire_machine::rare_state& acquire_machine::rare() {
    if (!rare_) rare_ = std::make_unique<rare_state>();
    return *rare_;
}

std::string acquire_machine::path_of(std::size_t queue, std::string_view child) const {
    return child_path(dir(queue), child);
}

std::vector<std::string> acquire_machine::node_paths() const {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < queues(); ++i)
        out.push_back(q(i).node.empty() ? std::string() : path_of(i, q(i).node));
    return out;
}

std::vector<std::optional<std::size_t>> acquire_machine::positions() const {
    std::vector<std::optional<std::size_t>> out(queues());
    for (std::size_t i = 0; i < queues(); ++i)
        if (q(i).position >= 0) out[i] = static_cast<std::size_t>(q(i).position);
    return out;
}

std::int64_t acquire_machine::farthest() const noexcept {
    std::int64_t out = -1;
    for (std::size_t i = 0; i < queues(); ++i) out = std::max(out, q(i).position);
    return out;
}

bool acquire_machine::first_everywhere() const noexcept {
    for (std::size_t i = 0; i < queues(); ++i)
        if (!q(i).first) return false;
    return true;
}

std::string acquire_machine::refused(std::string_view what, std::string_view path) const {
    return "not authorized: " + words().identity + " may not " + std::string(what) + " " + std::string(path);
}

void acquire_machine::gather(gathering what) {
    gathering_ = what;
    pending_ = queues();
    pending_rc_ = ZOK;
    pending_at_.clear();
}

bool acquire_machine::gathered(gathering what) {
    if (gathering_ != what || pending_ == 0 || --pending_ > 0) return false;
    gathering_ = gathering::none;
    return true;
}

// ---- the attempt's steps ----------------------------------------------------------

acquire_actions acquire_machine::begin() {
    return actions_of(act(kind::forget_position), std::move(retry(acquire_step::create).front()));
}

acquire_actions acquire_machine::retry(acquire_step step, int rc, std::size_t queue) {
    auto a = act(kind::wait_connected, {}, 0, queue);
    a.step = step;
    if (rc != ZOK) a.ec = from_zookeeper(rc);  // a retry: what interrupted the step
    return actions_of(std::move(a));
}

acquire_actions acquire_machine::connected(acquire_step step, std::size_t queue) {
    if (step == acquire_step::watch_own_node) {
        if (stage_ != stage::held || node_gone_) return {};
        return actions_of(act(kind::watch_own_node, q(queue).node, 0, queue));
    }
    if (stage_ != stage::waiting) return {};
    switch (step) {
    case acquire_step::create: return send_create();
    case acquire_step::list: return list(queue);
    case acquire_step::read_token: return read_token();
    case acquire_step::recover: break;
    case acquire_step::watch_own_node: return {};
    case acquire_step::confirm: return grant();
    }
    // A lost create reply: find our nodes by their guid before creating again.
    if (owner_ != session.id) {
        // A new session: the old one's ephemeral nodes, if any, are gone.
        create_uncertain_ = false;
        parent_retries_ = 0;
        return send_create();
    }
    gather(gathering::recovery);
    rare().recovery.assign(queues(), {});
    acquire_actions out;
    out.reserve(queues() + 2);
    // The server this session reconnected to may lag the one that applied
    // the create: the session never saw the create's zxid, so the reconnect
    // does not wait for it, and a listing there could miss our node (a second
    // create would then queue behind our own orphan). A sync first: the
    // server runs the session's requests in order, and answers the listings
    // once it has caught up with the leader.
    out.push_back(act(kind::catch_up));
    append_listings(out, listing::recover);
    return out;
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
    for (std::size_t i = 0; i < queues(); ++i) q(i).listed = false;
    acquire_actions out;
    out.reserve(4 + 2 * queues());
    auto each = [&](kind k) {
        for (std::size_t i = 0; i < queues(); ++i) out.push_back(act(k, {}, 0, i));
    };
    // A directory the session has not seen is created first, in the same round
    // trip: the session runs its requests in order (fsm/known_dirs.hpp). After
    // a create that found no directory, ensure_parents has made it. (The
    // engine sends none for a directory of a set the session knows.)
    if (!session.dir_known && parent_retries_ == 0) each(kind::make_dir);
    // Their replies come before the create's.
    if (!setup_.rule.dir_data.empty()) out.push_back(act(kind::read_dir_data));  // a semaphore: one queue
    if (setup_.rule.lock_delay.count() > 0) each(kind::read_dir_before);
    if (!words().expanded_acl.empty()) each(kind::read_dir_acl);
    out.push_back(act(kind::create, node_name_prefix(guid_, setup_.form)));
    if (setup_.rule.watch_parent) return out;  // the baseline lists with a watch after the create
    // Pipelined: the server runs one session's requests in order, so these
    // listings already hold the nodes the create above makes. One round trip
    // in all, unless another contender of the session is listing a directory:
    // then this one shares the next listing (fsm/listing_batches.hpp).
    append_listings(out, listing::pipelined);
    return out;
}

void acquire_machine::append_listings(acquire_actions& out, listing which) const {
    out.push_back(act(kind::count_attempt));
    for (std::size_t i = 0; i < queues(); ++i) {
        auto l = act(kind::list, {}, 0, i);
        l.which = which;
        out.push_back(std::move(l));
    }
}

acquire_actions acquire_machine::created(int rc, std::string_view path, const node_stat& st) {
    if (rc == ZOK) q(0).node = std::string(path.substr(path.rfind('/') + 1));
    if (rc == ZOK && stage_ == stage::waiting) {
        token_ = st.czxid;
        token_known_ = true;
        owner_ = st.ephemeral_owner;  // the server's word on which session owns it
    }
    return create_answered(rc, 0);
}

acquire_actions acquire_machine::multi_created(int rc, const std::vector<int>& op_errors,
                                               const std::vector<std::string>& paths) {
    if (rc == ZOK)
        for (std::size_t i = 0; i < queues() && i < paths.size(); ++i)
            q(i).node = paths[i].substr(paths[i].rfind('/') + 1);
    return create_answered(rc, std::min(failed_op(op_errors), queues() - 1));
}

acquire_actions acquire_machine::create_answered(int rc, std::size_t failed_queue) {
    create_in_flight_ = false;
    if (connection_trouble(rc)) create_uncertain_ = true;
    if (stage_ == stage::abandoned) {
        // Cancelled while the create was in flight: the nodes (or the doubt) are ours to remove.
        if (std::exchange(cleanup_after_create_, false)) return cleanup();
        if (rc == ZOK || connection_trouble(rc)) return delete_nodes(false);
        return {};
    }
    if (stage_ != stage::waiting) return {};
    if (rc == ZOK) {
        // The guid finds nodes whose create is in doubt; these are known by
        // name from now on (a new create is a new attempt with a new guid).
        std::string().swap(guid_);
        acquire_actions out;
        for (std::size_t i = 0; i < queues(); ++i) out.push_back(act(kind::node_known, q(i).node, 0, i));
        // A transaction's creates return no Stat: our first node's has the token.
        if (!token_known_) append(out, read_token());
        else if (setup_.rule.watch_parent) append(out, list(0));
        return out;  // otherwise the pipelined listings decide
    }
    const auto& at = dir(failed_queue);
    if (rc == ZNONODE && parent_retries_ < max_parent_retries) {
        // A create fails as a whole when one directory is missing: make every
        // directory (and its parents) as containers, then try again.
        gather(gathering::parents);
        acquire_actions out;
        for (std::size_t i = 0; i < queues(); ++i) out.push_back(act(kind::ensure_parents, {}, 0, i));
        return out;
    }
    // The create may have been applied: find it by guid before creating again.
    if (connection_trouble(rc)) return retry(acquire_step::recover, rc);
    if (session_gone(rc)) {
        if (rc == ZCLOSING && session.closed) return fail(make_error_code(errc::session_closed));
        return requeue();  // a new session is opening: queue again there
    }
    if (rc == ZNOAUTH) {
        // The directory's ACL refused the create; its getACL may say why.
        if (dir_error() == errc::insecure_acl) return fail(dir_error(), rare_->dir_error_detail);
        return fail(from_zookeeper(rc), refused("create lock nodes under", at));
    }
    if (rc == ZINVALIDACL)
        return fail(from_zookeeper(rc), "the server refused the ACL " + words().acl_text + " for " + at);
    return fail(from_zookeeper(rc));
}

acquire_actions acquire_machine::parents_ensured(std::size_t, int rc, std::string_view at) {
    if (stage_ != stage::waiting || gathering_ != gathering::parents) return {};
    if (rc != ZOK && rc != ZNODEEXISTS && pending_rc_ == ZOK) {
        pending_rc_ = rc;
        pending_at_ = std::string(at);
    }
    if (!gathered(gathering::parents)) return {};
    ++parent_retries_;
    rc = pending_rc_;
    if (rc == ZOK) return send_create();
    if (connection_trouble(rc)) return retry(acquire_step::create, rc);
    if (rc == ZNOAUTH) return fail(from_zookeeper(rc), refused("create", pending_at_));
    if (rc == ZNONODE && !words().chroot.empty() && pending_at_.find('/', 1) == std::string::npos)
        return fail(from_zookeeper(rc),
                    "the chroot " + words().chroot + " of the connect string does not exist on the server");
    return fail(from_zookeeper(rc));
}

// ---- a lost create reply --------------------------------------------------------------

acquire_actions acquire_machine::recovered(const std::vector<std::vector<std::string>>& listings) {
    create_uncertain_ = false;
    parent_retries_ = 0;
    const auto found = find_set_by_guid(listings, guid_);
    using outcome = set_recovery::outcome;
    if (found.found == outcome::none) return send_create();  // the create did not commit
    if (found.found == outcome::partial) {
        // It committed, and someone deleted some of our nodes since: the rest go.
        for (std::size_t i = 0; i < queues(); ++i)
            if (found.names[i]) q(i).node = *found.names[i];
        auto out = delete_nodes(false);
        append(out, requeue());
        return out;
    }
    acquire_actions out;
    for (std::size_t i = 0; i < queues(); ++i) {
        q(i).node = *found.names[i];
        // Each recovering listing holds our node: it is that queue's first listing.
        q(i).listing = listings[i];
        q(i).listed = true;
        out.push_back(act(kind::node_known, q(i).node, 0, i));
    }
    // Our nodes exist: read the Stat for the fencing token, then decide on these listings.
    append(out, read_token());
    return out;
}

acquire_actions acquire_machine::read_token() {
    // Every node of the create has its zxid as czxid. The listings sent
    // behind it are answered before this.
    return actions_of(act(kind::read_token, q(0).node));
}

acquire_actions acquire_machine::token_read(int rc, const node_stat& st) {
    if (stage_ != stage::waiting || token_known_) return {};
    if (rc == ZNONODE) return requeue(0);
    if (connection_trouble(rc)) return retry(acquire_step::read_token, rc);
    if (session_gone(rc)) return {};  // the session event restarts or fails the acquire
    if (rc == ZNOAUTH) return fail(from_zookeeper(rc), refused("read", path_of(0, q(0).node)));
    if (rc != ZOK) return fail(from_zookeeper(rc));
    token_ = st.czxid;
    token_known_ = true;
    owner_ = st.ephemeral_owner;  // the server's word on which session owns them
    acquire_actions out;
    for (std::size_t i = 0; i < queues(); ++i)
        if (!q(i).listed) append(out, list(i));
    if (out.empty()) return decide_all();
    return out;
}

// ---- listing and deciding ---------------------------------------------------------

acquire_actions acquire_machine::list(std::size_t queue) {
    auto l = act(kind::list, {}, 0, queue);
    l.which = listing::fresh;
    if (setup_.rule.watch_parent) {
        l.watch = true;
        l.number = ++q(queue).generation;
    }
    return actions_of(act(kind::count_attempt), std::move(l));
}

acquire_actions acquire_machine::listed(std::size_t queue, listing which, int rc, const children_listing& children) {
    if (stage_ != stage::waiting) return {};
    if (which == listing::recover) {
        if (gathering_ != gathering::recovery) return {};
        if (rc != ZOK && rc != ZNONODE && pending_rc_ == ZOK) pending_rc_ = rc;  // a missing directory: no node there
        if (rc == ZOK) rare().recovery[queue] = children.children();
        if (!gathered(gathering::recovery)) return {};
        rc = pending_rc_;
        if (connection_trouble(rc)) return retry(acquire_step::recover, rc);
        if (session_gone(rc)) return {};
        if (rc != ZOK) return fail(from_zookeeper(rc));
        return recovered(std::exchange(rare_->recovery, {}));
    }
    if (which == listing::pipelined && q(queue).node.empty()) return {};  // the create failed: its reply acts
    if (!token_known_) {
        // Behind a transaction: the token's read decides (and lists again what failed).
        if (rc == ZOK) {
            q(queue).listing = children.children();
            q(queue).listed = true;
        }
        return {};
    }
    return evaluate(queue, rc, children);
}

acquire_actions acquire_machine::evaluate(std::size_t queue, int rc, const children_listing& children) {
    if (connection_trouble(rc)) return retry(acquire_step::list, rc, queue);
    if (session_gone(rc)) return {};  // the session event restarts or fails the acquire
    if (rc == ZNONODE) return requeue(queue);  // the lock dir (and our node with it) is gone
    if (rc == ZNOAUTH) return fail(from_zookeeper(rc), refused("list", dir(queue)));
    if (rc != ZOK) return fail(from_zookeeper(rc));

    if (claiming_) {
        rare().deferred_listing = children.children();  // decided once the permit count is settled
        return {};
    }
    if (const auto ec = dir_error()) return fail(ec, rare_->dir_error_detail);
    if (!setup_.rule.dir_data.empty())  // a semaphore
        if (const auto peer = foreign_semaphore_children(children.children()))
            return fail(make_error_code(errc::foreign_recipe), foreign_semaphore(*peer));
    if (!evaluated_ && queues() > 1) {
        // A set's first decision takes every queue's listing.
        q(queue).listing = children.children();
        q(queue).listed = true;
        for (std::size_t i = 0; i < queues(); ++i)
            if (!q(i).listed) return {};
        return decide_all();
    }
    std::vector<std::pair<std::size_t, queue_decision>> d;
    d.emplace_back(queue, decide(setup_.rule, children, q(queue).node));
    if (!delay_.empty()) {
        delay_[queue].ahead_now = sequences_ahead(children, q(queue).node);
        if (!d.front().second.acquired) delay_[queue].ahead = delay_[queue].ahead_now;
    }
    return decided(queue, d);
}

acquire_actions acquire_machine::decide_all() {
    std::vector<std::pair<std::size_t, queue_decision>> d;
    d.reserve(queues());
    for (std::size_t i = 0; i < queues(); ++i) {
        const auto listing = std::exchange(q(i).listing, {});
        const children_listing children(listing);
        d.emplace_back(i, decide(setup_.rule, children, q(i).node));
        if (!delay_.empty()) {
            delay_[i].ahead_now = sequences_ahead(children, q(i).node);
            if (!d.back().second.acquired) delay_[i].ahead = delay_[i].ahead_now;
        }
    }
    return decided(none, d);
}

// `d`: the decisions of the queues just listed (`listed_queue`: the one, or
// none when every queue was).
acquire_actions acquire_machine::decided(std::size_t listed_queue,
                                         const std::vector<std::pair<std::size_t, queue_decision>>& d) {
    evaluated_ = true;
    // Someone deleted a node of ours before we were granted: queue again.
    for (const auto& [i, qd] : d)
        if (!qd.found) return requeue(i);
    bool last = true;
    for (const auto& [i, qd] : d) {
        q(i).position = static_cast<std::int64_t>(qd.position);
        if (qd.acquired) q(i).first = true;
        last = last && qd.last;
    }
    auto out = actions_of(act(kind::position, {}, farthest()));
    if (first_everywhere()) {
        // Granted by this listing with nobody queued after us: whoever queues
        // later lists us first, so its deletion alone grants it, and our
        // release needs no mark (release()).
        followers_possible_ = !(last && queues() == 1);
        append(out, listed_queue == none ? grant() : grant_unless_unwatched(listed_queue));
        return out;
    }
    if (setup_.no_wait) {
        out.push_back(act(kind::give_up));
        return out;
    }
    if (setup_.rule.watch_parent) return out;  // the child watch set by the listing wakes us
    for (const auto& [i, qd] : d)
        if (!q(i).first) append(out, watch(i, qd));
    return out;
}

} // namespace zklock::detail
