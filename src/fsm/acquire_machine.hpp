// The acquire protocol of one place in one or several lock queues, without I/O.
//
// One acquire_machine is one attempt: one node in each lock directory of the
// acquire (a lock set has several, each made by one `multi` transaction; a
// single lock is a set of one), from the create to the grant, the hold and the
// nodes' removal. The engine (src/engine/contender.cpp) feeds it what happened
// (a reply, a watch, a session event, a cancel) and performs the actions it
// returns, in order: the requests to send, the grant, the deletes, the failure.
// Every decision of the protocol is made here, so each can be driven by a unit
// test without a server:
//
// - create and list in one round trip (the server runs a session's requests in
//   order, so the listing already holds our node): one queue's create2 carries
//   the fencing token, a set's transaction does not, so its first node's Stat
//   is read; or, for the herd baseline (queue_rule::watch_parent), create, then
//   list with a child watch;
// - a lost create reply: the nodes may exist, so every directory is listed for
//   our guid before anything is created again (found everywhere: ours; nowhere:
//   created again; in part: what is left goes, and we queue again);
// - a vanished directory (a container the server reaped): every directory and
//   its parents again, then the create, a few times at most;
// - the permit count (a semaphore's directory data): checked before the first
//   listing decides, claimed when the directory holds none;
// - per queue, whom to watch (fsm/lock_node.hpp decides), a node that is not
//   ephemeral ahead of us, one deletion that alone grants that queue; the
//   attempt is held when it is first in every queue, and being first lasts as
//   long as our node; our own nodes are watched meanwhile so that a grant
//   without a listing is never given on a node someone else deleted (the
//   attempt queues again, as a listing without it does);
// - lock-delay (fsm/lock_delay.hpp decides): each directory before the
//   create, the queue ahead of us, every queue's handover before a grant;
// - the session (fsm/session_states.hpp decides): expiry queues again on
//   the new session, a close fails the acquire, a reconnect re-checks;
// - a grant with no basis for its safe-time budget (session_now::budget: no
//   write or sync of the attempt's session answered within its timeout, as
//   after a lost create reply whose nodes the guid found): a sync first, the
//   grant on its answer;
// - cancellation at any point: what to delete (our nodes, or whatever carries
//   our guid when a create's outcome is unknown), waiting for a create reply
//   that is on its way; any node gone loses (or, waiting, requeues) the whole
//   attempt, and the others go.
#pragma once

#include <zklock/acl.hpp>
#include "fsm/lock_delay.hpp"
#include "fsm/lock_node.hpp"
#include "fsm/node_stat.hpp"
#include "fsm/policy_words.hpp"
#include "fsm/revocation.hpp"
#include <zklock/session_state.hpp>

#include <boost/container/small_vector.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace zklock::detail {

/// What an acquire is, told to each of its attempts.
struct acquire_setup {
    /// The lock directories: one for a single lock, a lock set's (validated:
    /// validate_lock_set) for a MultiMutex. Queue i of an action is dirs[i].
    std::vector<std::string> dirs;
    queue_rule rule;           ///< a lock set's: the mutex rule, and lock_delay
    node_form form;            ///< how our nodes' names are spelled
    bool no_wait = false;      ///< a try: give up rather than wait
    /// The ACL policy, identity and chroot, shared by the session's locks
    /// (null: an open policy, no identity, no chroot).
    std::shared_ptr<const policy_words> policy;
    /// SessionOptions::lose_locks_on_suspension.
    bool lose_on_suspension = false;
    /// The handoff without a listing (mutex rule only, one queue: one holder,
    /// not read-write, not the herd baseline). A holder marks its release: the
    /// transaction that deletes its node writes the node's data first, so its
    /// successor, which watches that node, is told of a data change, not of a
    /// deletion. With the mark the release also creates and deletes the node's
    /// `.released` sibling, which the successor watches too: a node that held
    /// had nothing ahead of it, and nothing arrives ahead of a waiter, so on
    /// that event the successor holds without a listing (fsm/release_proof.hpp).
    /// A waiter under the mutex rule trusts the proof whether or not it marks.
    /// The data change alone proves nothing (a revocation request writes the
    /// node too, and the node may then go another way): the waiter watches the
    /// node again and lists when it is gone. A holder that a
    /// listing granted with nobody queued after it releases with the plain
    /// delete: a later contender lists it first, and its deletion alone is
    /// that contender's grant.
    bool mark_release = false;
    /// A revocation request read on any of our nodes while held is honoured
    /// (the `revoke` action: a set lets go as one); otherwise it is only
    /// reported (`revocation_request`).
    bool revocable = false;
};

/// What the session is now, as the engine sees it when it feeds an event.
struct session_now {
    std::int64_t id = 0;
    bool connected = true;
    bool closed = false;  ///< the Session was closed
    /// The session has seen every lock directory exist (fsm/known_dirs.hpp).
    bool dir_known = true;
    /// The session the attempt began on has a safe-time budget left: a write
    /// or sync of it that the leader answered, within the session timeout
    /// (session_impl::safe_until). Without one a grant waits for a sync's
    /// answer: a hold must not begin with nothing to base its budget on.
    bool budget = true;
};

/// What a `wait_connected` action resumes with (`queue` for list and watch_own_node).
enum class acquire_step { create, recover, list, watch_own_node, confirm, read_token };

/// Which request a listing answers.
enum class listing { pipelined, fresh, recover };

/// One thing for the engine to do. Requests name what answers them (the
/// machine's method of the same name); `queue` names the lock directory
/// (setup.dirs[queue]) of a per-queue request.
struct acquire_action {
    enum class kind {
        wait_connected,    ///< once connected: connected(step, queue); the session closed first: connect_failed(ec); `ec`: a retry's cause
        read_dir_data,     ///< getData(dir) -> dir_data_read
        claim_dir,         ///< setData(dir, rule.dir_data, version = number) -> dir_claimed
        reread_dir_data,   ///< getData(dir) -> dir_data_reread
        read_dir_acl,      ///< getACL(dir) -> dir_acl_read
        read_dir_before,   ///< getData(dir) -> dir_before_read
        create,            ///< create2(dir/name + sequence, EPHEMERAL_SEQUENTIAL) -> created; several dirs: one multi of them -> multi_created
        ensure_parents,    ///< the directory and its parents -> parents_ensured
        list,              ///< getChildren(dir), with a child watch when `watch` (generation = number) -> listed(which)
        read_token,        ///< getData(dir/name) -> token_read
        watch_node,        ///< getData(dir/name) with a watch (generation = number) -> watch_set, watch_fired
        read_handover,     ///< getData(dir) -> handover_read
        start_delay,       ///< a timer of rule.lock_delay -> delay_elapsed
        grant,             ///< held: fencing token = number; once the hold has lasted a moment, hold_settled
        watch_own_node,    ///< getData(dir/name) with a watch -> own_watch_set, own_watch_fired
        node_gone,         ///< held, and a node of ours went: the hold is over, why is not known yet
        lose,              ///< the hold is lost for `ec`
        requeue,           ///< this attempt is over (its nodes are gone): a new attempt, new nodes
        fail,              ///< the acquire fails with `ec`, `detail` in words (held: the hold is lost)
        give_up,           ///< a try found the lock busy: the acquire ends, not acquired, no error
        delete_node,       ///< delete dir/name (or one multi of `paths`), owned by session `number`, with
                           ///< `records`; `wait`: the cleanup completes with it; `mark`: a release mark first
        delete_by_guid,    ///< delete the child of every dir carrying guid `name`, owned by session `number`; `wait` likewise
        cleaned_up,        ///< the cancelled attempt left nothing behind: complete it
        position,          ///< our place in line is `number` (0 = first; several queues: the farthest)
        forget_position,   ///< our place and nodes are not known
        node_known,        ///< our node in dir is `name`
        count_attempt,     ///< a listing that decides is sent (lock_stats::attempts)
        count_wakeup,      ///< a watch woke us (lock_stats::wakeups)
        revocation_request,  ///< held, not revocable: a revocation request came to node `name`; report it, keep the lock
        revoke,            ///< held, revocable: a revocation request came to node `name`; report it, then the handler (default: let go)
        watch_release,     ///< exists(dir/name + ".released") with a watch (generation = number) -> release_seen (fsm/release_proof.hpp)
        make_dir,          ///< create(dir, CONTAINER, rule.dir_data), ahead of the create: its answer is not fed back (the create's decides)
        confirm_session,   ///< sync(dirs[0]) -> synced: before a grant, a basis for the hold's budget (session_now::budget)
        catch_up,          ///< sync(dirs[0]) ahead of the recovery listings: its answer is not fed back (theirs decide)
    };
    kind what{};
    std::size_t queue = 0;
    std::string name;
    std::int64_t number = 0;
    acquire_step step{};
    listing which{};
    bool watch = false;
    bool wait = false;
    /// delete_node at a release under the mutex rule: the delete's transaction
    /// writes the node's data first (acquire_setup::mark_release).
    bool mark = false;
    std::error_code ec;
    std::string detail;
    /// delete_node of several nodes at once: their full paths, one multi.
    std::vector<std::string> paths;
    /// delete_node at a release with lock-delay: (directory, its new data),
    /// committed with the delete (the clean-release records).
    std::vector<std::pair<std::string, std::string>> records;

    friend bool operator==(const acquire_action&, const acquire_action&) = default;
};
/// A step's actions: one or two nearly always, kept in place (a step of an
/// uncontended cycle would otherwise allocate, nine times a cycle).
using acquire_actions = boost::container::small_vector<acquire_action, 2>;

/// The actions moved into one vector: a braced list would copy each (its
/// strings with it), on every step of every acquire.
template <class... Actions> acquire_actions actions_of(Actions&&... a) {
    acquire_actions out;
    out.reserve(sizeof...(a));
    (out.push_back(std::forward<Actions>(a)), ...);
    return out;
}

/// `more` moved to the end of `to`.
inline void append(acquire_actions& to, acquire_actions more) {
    for (auto& a : more) to.push_back(std::move(a));
}

/// An action in words ("create _c_x-lock-", "list fresh @1", "fail no_auth:
/// ..."; `@queue` when not the first), for test failures and describe().
std::string to_string(const acquire_action& a);

class acquire_machine {
public:
    /// `guid`: the tag in our nodes' names (node_form: new_tag), by which a lost
    /// create reply's nodes are found.
    acquire_machine(const acquire_setup& setup, std::string guid);

    /// What the session is now; set before every event.
    session_now session;

    /// The attempt starts: once connected, create.
    acquire_actions begin();
    acquire_actions connected(acquire_step step, std::size_t queue = 0);
    acquire_actions connect_failed(std::error_code ec);

    /// One queue's create2 answered.
    acquire_actions created(int rc, std::string_view path, const node_stat& st);
    /// Several queues' transaction answered: `op_errors` per op when it
    /// failed, `paths` the nodes it made when it did not.
    acquire_actions multi_created(int rc, const std::vector<int>& op_errors, const std::vector<std::string>& paths);
    acquire_actions parents_ensured(std::size_t queue, int rc, std::string_view at);
    acquire_actions parents_ensured(int rc, std::string_view at) { return parents_ensured(0, rc, at); }
    acquire_actions dir_data_read(int rc, std::string_view data, std::int32_t version);
    acquire_actions dir_claimed(int rc);
    acquire_actions dir_data_reread(int rc, std::string_view data);
    acquire_actions dir_acl_read(std::size_t queue, int rc, const acl_list& acl);
    acquire_actions dir_acl_read(int rc, const acl_list& acl) { return dir_acl_read(0, rc, acl); }
    acquire_actions dir_before_read(std::size_t queue, int rc, std::string_view data, const node_stat& st);
    acquire_actions dir_before_read(int rc, std::string_view data, const node_stat& st) {
        return dir_before_read(0, rc, data, st);
    }
    acquire_actions listed(std::size_t queue, listing which, int rc, const children_listing& children);
    acquire_actions listed(std::size_t queue, listing which, int rc, const std::vector<std::string>& children) {
        return listed(queue, which, rc, children_listing(children));
    }
    acquire_actions listed(listing which, int rc, const children_listing& children) { return listed(0, which, rc, children); }
    acquire_actions listed(listing which, int rc, const std::vector<std::string>& children) {
        return listed(0, which, rc, children_listing(children));
    }
    acquire_actions token_read(int rc, const node_stat& st);
    acquire_actions watch_set(std::size_t queue, std::string_view name, std::int64_t generation, int rc,
                              const node_stat& st);
    acquire_actions watch_set(std::string_view name, std::int64_t generation, int rc, const node_stat& st) {
        return watch_set(0, name, generation, rc, st);
    }
    acquire_actions watch_fired(std::size_t queue, std::string_view name, std::int64_t generation, int type);
    acquire_actions watch_fired(std::string_view name, std::int64_t generation, int type) {
        return watch_fired(0, name, generation, type);
    }
    /// The watch of a watch_release fired: NodeCreated is the release proof of
    /// the node `name` (fsm/release_proof.hpp), which held.
    acquire_actions release_seen(std::string_view name, std::int64_t generation, int type);
    acquire_actions handover_read(std::size_t queue, int rc, std::string_view data, const node_stat& st = {});
    acquire_actions handover_read(int rc, std::string_view data, const node_stat& st = {}) {
        return handover_read(0, rc, data, st);
    }
    acquire_actions delay_elapsed();
    /// The answer to confirm_session's sync.
    acquire_actions synced(int rc);
    /// The hold has lasted a moment (session_impl::settle_delay): time to watch
    /// our own nodes, so that a deletion by someone else is reported.
    acquire_actions hold_settled();
    /// The read that set the watch on our node of `queue`: its data and data
    /// version (a revocation request, fsm/revocation.hpp; to any node of a set
    /// it concerns the whole set).
    acquire_actions own_watch_set(std::size_t queue, int rc, std::string_view data = {}, std::int32_t version = 0);
    acquire_actions own_watch_set(int rc, std::string_view data = {}, std::int32_t version = 0) {
        return own_watch_set(0, rc, data, version);
    }
    acquire_actions own_watch_fired(std::size_t queue, int type);
    acquire_actions own_watch_fired(int type) { return own_watch_fired(0, type); }
    /// A session event; `close_reason`: why a closed session closed.
    acquire_actions session_changed(session_event e, std::error_code close_reason = {});

    /// The acquire stops (cancelled, deadline, failed, a try that gave up):
    /// what to delete. Ends with cleaned_up or with a delete that `wait`s; when
    /// a create reply is on its way, the cleanup comes with created().
    acquire_actions cancel();
    /// A release of the hold: the delete, one transaction for every node (with
    /// each queue's clean-release record under lock-delay).
    acquire_actions release();
    /// The hold is lost for `ec` (the engine's report): what to delete.
    acquire_actions lost(std::error_code ec);

    bool waiting() const noexcept { return stage_ == stage::waiting; }
    bool held() const noexcept { return stage_ == stage::held; }
    /// Held, and a node of ours went: the reason is not known yet.
    bool node_gone() const noexcept { return node_gone_; }
    const std::string& guid() const noexcept { return guid_; }
    /// Our node in the first directory (a single lock's node); empty before it is known.
    const std::string& node() const noexcept { return first_queue_.node; }
    std::int64_t owner() const noexcept { return owner_; }
    std::size_t queues() const noexcept { return setup_.dirs.size(); }
    /// Per queue, our place as of its last decision (0 = first).
    std::vector<std::optional<std::size_t>> positions() const;
    /// Per queue, our node's full path; empty before the nodes are known.
    std::vector<std::string> node_paths() const;
    /// The state in words (stage, flags, per queue: node, first, watching).
    std::string describe() const;

private:
    enum class stage { waiting, held, abandoned, over };
    static constexpr std::size_t none = static_cast<std::size_t>(-1);

    // acquire_machine.cpp: creating, recovery, listing and deciding;
    // acquire_wait.cpp: waiting, granting, holding; acquire_directory.cpp: the
    // lock directory's reads; acquire_leave.cpp: the ways out (cancel,
    // release, loss).

    acquire_actions send_create();
    acquire_actions create_answered(int rc, std::size_t failed_queue);
    acquire_actions recovered(const std::vector<std::vector<std::string>>& listings);
    acquire_actions read_token();
    acquire_actions list(std::size_t queue);
    /// Appends an attempt and a listing of every queue, of kind `which`.
    void append_listings(acquire_actions& out, listing which) const;
    acquire_actions evaluate(std::size_t queue, int rc, const children_listing& children);
    acquire_actions decide_all();
    acquire_actions decided(std::size_t decided_queue, const std::vector<std::pair<std::size_t, queue_decision>>& d);
    acquire_actions watch(std::size_t queue, const queue_decision& d);
    acquire_actions wake(std::size_t queue, bool notified, std::string_view name, bool ahead_held = false);
    acquire_actions grant_unless_unwatched(std::size_t listed_queue);
    acquire_actions grant();
    acquire_actions own_node_gone(std::size_t queue);
    acquire_actions cleanup();
    acquire_actions delete_nodes(bool wait, std::size_t except = none);
    acquire_actions retry(acquire_step step, int rc = 0, std::size_t queue = 0);
    acquire_actions requeue(std::size_t gone = none);
    acquire_actions fail(std::error_code ec, std::string detail = {});
    static acquire_actions lose(std::error_code ec);
    void compare_dir_data(std::string_view dir_data);
    std::string refused(std::string_view what, std::string_view path) const;
    std::string foreign_semaphore(const std::string& peer) const;
    static acquire_action act(acquire_action::kind k, std::string name = {}, std::int64_t number = 0,
                              std::size_t queue = 0);
    std::string path_of(std::size_t queue, std::string_view child) const;
    const std::string& dir(std::size_t queue) const noexcept { return setup_.dirs[queue]; }
    const policy_words& words() const noexcept;
    bool first_everywhere() const noexcept;
    std::int64_t farthest() const noexcept;
    /// Starts gathering one reply of `what` from every queue.
    enum class gathering { none, parents, recovery, handover };
    void gather(gathering what);
    /// Counts a reply of `what`; true when it was the last one.
    bool gathered(gathering what);

    // Our place in one queue.
    struct queue_state {
        explicit queue_state(bool revocable) : revocation(revocable) {}
        std::string node;                    // child name once created
        std::vector<std::string> watching;
        std::vector<std::string> persistent; // watched nodes that are not ephemeral
        std::vector<std::string> listing;    // a set's listing kept for the first decision
        revocation_watch revocation;         // the requests written into our node while held
        std::int64_t generation = 0;         // of the watches and listings that may still answer
        std::int64_t position = -1;          // as of the last decision
        bool listed = false;                 // a listing for the first decision is kept
        bool first = false;                  // first in this queue (lasts until our node goes)
        bool last_blocker = false;
        // A watch on our own node while waiting, set or on its way (watch()).
        bool own_watched = false;
        // Our node was written while waiting: that event used its watch, and a
        // deletion before the watch is set again would go untold, so no grant
        // without a listing of this queue until the new watch is answered.
        bool own_changed = false;
    };
    // The first queue's inline: a single lock's attempt allocates none.
    queue_state& q(std::size_t i) noexcept { return i == 0 ? first_queue_ : more_queues_[i - 1]; }
    const queue_state& q(std::size_t i) const noexcept { return i == 0 ? first_queue_ : more_queues_[i - 1]; }

    const acquire_setup& setup_;
    std::string guid_;
    stage stage_ = stage::waiting;
    queue_state first_queue_;               // setup_.dirs[0]'s
    std::vector<queue_state> more_queues_;  // a set's others
    std::int64_t owner_ = 0;         // the session that created the nodes
    std::int64_t token_ = 0;         // their czxid
    bool token_known_ = false;       // the create's reply carried it, or it was read
    bool evaluated_ = false;         // the first decision (every queue) was made
    int parent_retries_ = 0;
    bool create_in_flight_ = false;  // a create was sent and its reply has not come
    bool create_uncertain_ = false;  // a create's reply was lost: the nodes may exist
    bool cleanup_after_create_ = false;  // cancelled with the create's reply on its way
    bool claiming_ = false;          // setting the directory's data (a semaphore's permit count)
    bool confirming_ = false;        // a grant waits for confirm_session's sync
    bool node_gone_ = false;
    std::size_t gone_queue_ = none;  // held: the queue whose node went
    // Someone may be queued after us, having listed while a node was still
    // ahead of us: not known unless a listing granted us (release()).
    bool followers_possible_ = true;
    // Replies gathered from every queue before a decision: the parents of
    // every directory, the recovering listings, the handover reads. One
    // gathering at a time; a reply of another is not counted.
    gathering gathering_ = gathering::none;
    std::size_t pending_ = 0;
    int pending_rc_ = 0;
    std::string pending_at_;
    // What few attempts need, made on first use (rare()).
    struct rare_state {
        std::error_code dir_error;            // the directory's data or ACL disagrees with the rule or policy
        std::string dir_error_detail;
        std::optional<std::vector<std::string>> deferred_listing;  // a listing that came while claiming
        std::vector<std::vector<std::string>> recovery;  // the listings that look for our guid after a lost reply
    };
    std::unique_ptr<rare_state> rare_;
    rare_state& rare();
    std::error_code dir_error() const noexcept { return rare_ ? rare_->dir_error : std::error_code{}; }
    // Lock-delay, per queue: the directory before our create, the sequences
    // ahead of us at the previous and at the granting listing. Made only with
    // lock-delay on: most attempts never need it.
    struct delay_state {
        std::optional<directory_before> before;
        std::optional<queue_ahead> ahead;
        queue_ahead ahead_now;
    };
    std::vector<delay_state> delay_;
    handover_check handover_ = handover_check::unchecked;
    bool handover_clean_ = true;
    bool handover_session_gone_ = false;
    // The handoff without a listing: whether a data change of the node we
    // watch is its holder's release mark (acquire_setup::mark_release).
    bool trusts_marks() const noexcept;
    // Whether a waiter watches its own node in `queue`: when the attempt may
    // be granted without listing that queue again.
    bool own_watch_needed(std::size_t queue) const noexcept;
};

} // namespace zklock::detail
