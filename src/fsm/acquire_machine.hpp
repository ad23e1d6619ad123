// The acquire protocol of one place in a lock queue, without I/O.
//
// One acquire_machine is one attempt: one node under the lock directory, from
// the create to the grant, the hold and the node's removal. The engine
// (src/engine/contender.cpp) feeds it what happened (a reply, a watch, a session
// event, a cancel) and performs the actions it returns, in order: the requests
// to send, the grant, the deletes, the failure. Every decision of the
// protocol is made here, so each can be driven by a unit test without a server:
//
// - create and list in one round trip (the server runs a session's requests in
//   order, so the listing already holds our node), or, for the herd baseline
//   (queue_rule::watch_parent), create, then list with a child watch;
// - a lost create reply: the node may exist, so the next listing looks for our
//   guid before anything is created again;
// - a vanished parent (a container the server reaped): the parents again, then
//   the create, a few times at most;
// - the permit count (a semaphore's directory data): checked before the first
//   listing decides, claimed when the directory holds none;
// - whom to watch (fsm/lock_node.hpp decides), a node that is not
//   ephemeral ahead of us, one deletion that alone grants us, and our own
//   node watched meanwhile so that a grant without a listing is never given on
//   a node someone else deleted (it queues again, as a listing without it does);
// - lock-delay (fsm/lock_delay.hpp decides): the directory before the
//   create, the queue ahead of us, the handover check before a grant;
// - the session (fsm/session_states.hpp decides): expiry queues again on
//   the new session, a close fails the acquire, a reconnect re-checks;
// - a grant with no basis for its safe-time budget (session_now::budget: no
//   write or sync of the attempt's session answered within its timeout, as
//   after a lost create reply whose node the guid found): a sync first, the
//   grant on its answer;
// - cancellation at any point: what to delete (our node, or whatever carries
//   our guid when a create's outcome is unknown), waiting for a create reply
//   that is on its way.
#pragma once

#include <zklock/acl.hpp>
#include "fsm/lock_delay.hpp"
#include "fsm/lock_node.hpp"
#include "fsm/node_stat.hpp"
#include "fsm/policy_words.hpp"
#include "fsm/revocation.hpp"
#include <zklock/session_state.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace zklock::detail {

/// What an acquire is, told to each of its attempts.
struct acquire_setup {
    std::string dir;           ///< the lock directory
    queue_rule rule;
    node_form form;            ///< how our node's name is spelled
    bool no_wait = false;      ///< a try: give up rather than wait
    /// The ACL policy, identity and chroot, shared by the session's locks
    /// (null: an open policy, no identity, no chroot).
    std::shared_ptr<const policy_words> policy;
    /// SessionOptions::lose_locks_on_suspension.
    bool lose_on_suspension = false;
    /// The handoff without a listing (mutex rule only: one holder, not
    /// read-write, not the herd baseline). A holder marks its release: the
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
    /// A revocation request read on our node while held is honoured (the
    /// `revoke` action); otherwise it is only reported (`revocation_request`).
    bool revocable = false;
};

/// What the session is now, as the engine sees it when it feeds an event.
struct session_now {
    std::int64_t id = 0;
    bool connected = true;
    bool closed = false;  ///< the Session was closed
    /// The session has seen the lock directory exist (fsm/known_dirs.hpp).
    bool dir_known = true;
    /// The session the attempt began on has a safe-time budget left: a write
    /// or sync of it that the leader answered, within the session timeout
    /// (session_impl::safe_until). Without one a grant waits for a sync's
    /// answer: a hold must not begin with nothing to base its budget on.
    bool budget = true;
};

/// What a `wait_connected` action resumes with.
enum class acquire_step { create, recover, list, watch_own_node, confirm };

/// Which request a listing answers.
enum class listing { pipelined, fresh, recover };

/// One thing for the engine to do. Requests name what answers them (the
/// machine's method of the same name).
struct acquire_action {
    enum class kind {
        wait_connected,    ///< once connected: connected(step); the session closed first: connect_failed(ec); `ec`: a retry's cause
        read_dir_data,     ///< getData(dir) -> dir_data_read
        claim_dir,         ///< setData(dir, rule.dir_data, version = number) -> dir_claimed
        reread_dir_data,   ///< getData(dir) -> dir_data_reread
        read_dir_acl,      ///< getACL(dir) -> dir_acl_read
        read_dir_before,   ///< getData(dir) -> dir_before_read
        create,            ///< create2(dir/name + sequence, EPHEMERAL_SEQUENTIAL) -> created
        ensure_parents,    ///< the directory and its parents -> parents_ensured
        list,              ///< getChildren(dir), with a child watch when `watch` (generation = number) -> listed(which)
        read_token,        ///< getData(dir/name) -> token_read (then the recovering listing decides)
        watch_node,        ///< getData(dir/name) with a watch (generation = number) -> watch_set, watch_fired
        read_handover,     ///< getData(dir) -> handover_read
        start_delay,       ///< a timer of rule.lock_delay -> delay_elapsed
        grant,             ///< held: fencing token = number; once the hold has lasted a moment, hold_settled
        watch_own_node,    ///< getData(dir/name) with a watch -> own_watch_set, own_watch_fired
        node_gone,         ///< held, and our node went: the hold is over, why is not known yet
        lose,              ///< the hold is lost for `ec`
        requeue,           ///< this attempt is over (its node is gone): a new attempt, a new node
        fail,              ///< the acquire fails with `ec`, `detail` in words (held: the hold is lost)
        give_up,           ///< a try found the lock busy: the acquire ends, not acquired, no error
        delete_node,       ///< delete dir/name owned by session `number`; `wait`: the cleanup completes with it; `mark`: a release mark first
        delete_by_guid,    ///< delete the child of dir carrying guid `name`, owned by session `number`; `wait` likewise
        cleaned_up,        ///< the cancelled attempt left nothing behind: complete it
        position,          ///< our place in the queue is `number` (0 = first)
        forget_position,   ///< our place is not known
        node_known,        ///< our node is dir/name
        count_attempt,     ///< a listing that decides is sent (lock_stats::attempts)
        count_wakeup,      ///< a watch woke us (lock_stats::wakeups)
        revocation_request,  ///< held, not revocable: a revocation request came; report it, keep the lock
        revoke,            ///< held, revocable: a revocation request came; report it, then the handler (default: let go)
        watch_release,     ///< exists(dir/name + ".released") with a watch (generation = number) -> release_seen (fsm/release_proof.hpp)
        make_dir,          ///< create(dir, CONTAINER, rule.dir_data), ahead of the create: its answer is not fed back (the create's decides)
        confirm_session,   ///< sync(dir) -> synced: before a grant, a basis for the hold's budget (session_now::budget)
    };
    kind what{};
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
    /// delete_node at a release with lock-delay: the directory's new data,
    /// committed with the delete (the clean-release record).
    std::optional<std::string> release_record;

    friend bool operator==(const acquire_action&, const acquire_action&) = default;
};
using acquire_actions = std::vector<acquire_action>;

/// The actions moved into one vector: a braced list would copy each (its
/// strings with it), on every step of every acquire.
template <class... Actions> acquire_actions actions_of(Actions&&... a) {
    acquire_actions out;
    out.reserve(sizeof...(a));
    (out.push_back(std::forward<Actions>(a)), ...);
    return out;
}

/// An action in words ("create _c_x-lock-", "fail no_auth: ..."), for test
/// failures and describe().
std::string to_string(const acquire_action& a);

class acquire_machine {
public:
    /// `guid`: the tag in our node's name (node_form: new_tag), by which a lost
    /// create reply's node is found.
    acquire_machine(const acquire_setup& setup, std::string guid);

    /// What the session is now; set before every event.
    session_now session;

    /// The attempt starts: once connected, create.
    acquire_actions begin();
    acquire_actions connected(acquire_step step);
    acquire_actions connect_failed(std::error_code ec);

    acquire_actions created(int rc, std::string_view path, const node_stat& st);
    acquire_actions parents_ensured(int rc, std::string_view at);
    acquire_actions dir_data_read(int rc, std::string_view data, std::int32_t version);
    acquire_actions dir_claimed(int rc);
    acquire_actions dir_data_reread(int rc, std::string_view data);
    acquire_actions dir_acl_read(int rc, const acl_list& acl);
    acquire_actions dir_before_read(int rc, std::string_view data, const node_stat& st);
    acquire_actions listed(listing which, int rc, const children_listing& children);
    acquire_actions listed(listing which, int rc, const std::vector<std::string>& children) {
        return listed(which, rc, children_listing(children));
    }
    acquire_actions token_read(int rc, const node_stat& st);
    acquire_actions watch_set(std::string_view name, std::int64_t generation, int rc, const node_stat& st);
    acquire_actions watch_fired(std::string_view name, std::int64_t generation, int type);
    /// The watch of a watch_release fired: NodeCreated is the release proof of
    /// the node `name` (fsm/release_proof.hpp), which held.
    acquire_actions release_seen(std::string_view name, std::int64_t generation, int type);
    acquire_actions handover_read(int rc, std::string_view data);
    acquire_actions delay_elapsed();
    /// The answer to confirm_session's sync.
    acquire_actions synced(int rc);
    /// The hold has lasted a moment (session_impl::settle_delay): time to watch
    /// our own node, so that a deletion by someone else is reported.
    acquire_actions hold_settled();
    /// The read that set the watch on our own node: its data and data version
    /// (a revocation request, fsm/revocation.hpp).
    acquire_actions own_watch_set(int rc, std::string_view data = {}, std::int32_t version = 0);
    acquire_actions own_watch_fired(int type);
    /// A session event; `close_reason`: why a closed session closed.
    acquire_actions session_changed(session_event e, std::error_code close_reason = {});

    /// The acquire stops (cancelled, deadline, failed, a try that gave up):
    /// what to delete. Ends with cleaned_up or with a delete that `wait`s; when
    /// a create reply is on its way, the cleanup comes with created().
    acquire_actions cancel();
    /// A release of the hold: the delete (with the clean-release record under lock-delay).
    acquire_actions release();
    /// The hold is lost for `ec` (the engine's report): what to delete.
    acquire_actions lost(std::error_code ec);

    bool waiting() const noexcept { return stage_ == stage::waiting; }
    bool held() const noexcept { return stage_ == stage::held; }
    /// Held, and our node went: the reason is not known yet.
    bool node_gone() const noexcept { return node_gone_; }
    const std::string& guid() const noexcept { return guid_; }
    const std::string& node() const noexcept { return node_; }
    std::int64_t owner() const noexcept { return owner_; }
    /// The state in words (stage, node, flags, what it watches).
    std::string describe() const;

private:
    enum class stage { waiting, held, abandoned, over };

    // acquire_machine.cpp: the queue; acquire_directory.cpp: the lock directory's
    // reads; acquire_leave.cpp: the ways out (cancel, release, loss).

    acquire_actions send_create();
    acquire_actions list();
    acquire_actions evaluate(int rc, const children_listing& children);
    acquire_actions watch();
    acquire_actions wake(bool notified, std::string_view name, bool ahead_held = false);
    acquire_actions grant();
    acquire_actions own_node_gone();
    acquire_actions cleanup();
    acquire_actions retry(acquire_step step, int rc = 0);
    acquire_actions requeue();
    acquire_actions fail(std::error_code ec, std::string detail = {});
    static acquire_actions lose(std::error_code ec);
    void compare_dir_data(std::string_view dir_data);
    std::string refused(std::string_view what, std::string_view path) const;
    std::string foreign_semaphore(const std::string& peer) const;
    static acquire_action act(acquire_action::kind k, std::string name = {}, std::int64_t number = 0);
    std::string path_of(std::string_view child) const;
    const policy_words& words() const noexcept;

    const acquire_setup& setup_;
    std::string guid_;
    stage stage_ = stage::waiting;
    std::string node_;               // child name once created
    std::int64_t owner_ = 0;         // the session that created it
    std::int64_t token_ = 0;         // its czxid
    int parent_retries_ = 0;
    bool create_in_flight_ = false;  // a create was sent and its reply has not come
    bool create_uncertain_ = false;  // a create's reply was lost: the node may exist
    bool cleanup_after_create_ = false;  // cancelled with the create's reply on its way
    std::vector<std::string> watching_;
    bool last_blocker_ = false;
    // A watch on our own node while waiting, set or on its way (watch()).
    bool own_watched_ = false;
    // Our node was written while waiting: that event used its watch, and a
    // deletion before the watch is set again would go untold, so no grant
    // without a listing until the new watch is answered.
    bool own_changed_ = false;
    revocation_watch revocation_;    // the requests written into our node while held
    std::int64_t generation_ = 0;    // of the watches and listings that may still answer
    bool claiming_ = false;          // setting the directory's data (a semaphore's permit count)
    bool confirming_ = false;        // a grant waits for confirm_session's sync
    bool node_gone_ = false;
    // Someone may be queued after us, having listed while a node was still
    // ahead of us: not known unless a listing granted us (release()).
    bool followers_possible_ = true;
    // What few attempts need, made on first use (rare()).
    struct rare_state {
        std::vector<std::string> persistent;  // watched nodes that are not ephemeral
        std::error_code dir_error;            // the directory's data or ACL disagrees with the rule or policy
        std::string dir_error_detail;
        std::optional<std::vector<std::string>> deferred_listing;  // a listing that came while claiming
        std::vector<std::string> recovered_listing;  // the listing that found our node after a lost create reply
    };
    std::unique_ptr<rare_state> rare_;
    rare_state& rare();
    std::error_code dir_error() const noexcept { return rare_ ? rare_->dir_error : std::error_code{}; }
    // Lock-delay: the directory before our create, the sequences ahead of us
    // at the previous and at the granting listing, where the handover check
    // stands. Made only with lock-delay on: most attempts never need it.
    struct delay_state {
        std::optional<directory_before> before;
        std::optional<queue_ahead> ahead;
        queue_ahead ahead_now;
        handover_check handover = handover_check::unchecked;
    };
    std::unique_ptr<delay_state> delay_;
    // The handoff without a listing: whether a data change of the node we
    // watch is its holder's release mark (acquire_setup::mark_release).
    bool trusts_marks() const noexcept;
};

} // namespace zklock::detail
