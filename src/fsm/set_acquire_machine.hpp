// The acquire protocol of a lock set (MultiMutex), without I/O.
//
// One set_acquire_machine is one attempt of a set: one node in every lock
// directory, made by one `multi` transaction, from the transaction to the
// grant, the hold and the nodes' removal. The engine (src/lock_set_engine.cpp)
// feeds it what happened (a reply, a watch, a session event, a cancel) and
// performs the actions it returns, in order. What it decides, each driven by a
// unit test without a server (tests/unit/test_set_acquire_machine.cpp):
//
// - the transaction and every queue's listing in one round trip (the server
//   runs a session's requests in order), then our first node's Stat for the
//   fencing token (a create inside a multi returns none);
// - a missing directory fails the transaction as a whole: every directory and
//   its parents again, then the transaction, a few times at most;
// - a lost transaction reply: every directory is listed for our guid; the
//   transaction committed everywhere (ours), nowhere (again), or someone has
//   deleted some of its nodes since (what is left goes, and we queue again);
// - per queue the mutex rule (fsm/lock_set.hpp decides); the set is held
//   when it is first in every queue, and being first lasts until our node goes,
//   so one deletion of a last blocker grants that queue without a listing;
// - lock-delay per queue: each directory before the transaction, the queue
//   ahead of us, every queue's handover checked before the grant;
// - any node of the set deleted before the grant: the others go, a new attempt;
//   any node gone while held: the set is lost and the others go;
// - the session (fsm/session_states.hpp decides): expiry queues again on
//   the new session, a close fails the acquire, a reconnect re-checks the
//   queues we wait in;
// - a grant with no basis for its safe-time budget (session.budget; after a
//   lost transaction reply whose nodes the guid found): a sync first, the
//   grant on its answer;
// - cancellation at any point: the nodes go with one multi, or, when the
//   transaction's outcome is unknown, whatever carries our guid in each
//   directory; a transaction whose reply is on its way is waited for.
#pragma once

#include "fsm/lock_delay.hpp"
#include "fsm/lock_set.hpp"
#include "fsm/node_stat.hpp"
#include "fsm/policy_words.hpp"
#include "fsm/revocation.hpp"
#include <zklock/session_state.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace zklock::detail {

/// What a set's acquire is, told to each of its attempts.
struct set_setup {
    std::vector<std::string> dirs;       ///< the lock directories, validated (validate_lock_set)
    bool no_wait = false;                ///< a try: give up rather than wait
    std::chrono::milliseconds lock_delay{0};
    /// The nodes' ACL policy and who we authenticate as, shared by the
    /// session's locks (null: an open policy, no identity).
    std::shared_ptr<const policy_words> policy;
    bool lose_on_suspension = false;     ///< SessionOptions::lose_locks_on_suspension
    /// A revocation request read on any node of the held set is honoured
    /// (`revoke`: the set lets go as one); otherwise only reported.
    bool revocable = false;
};

/// What a set's `wait_connected` action resumes with (`queue` for list and watch_own_node).
enum class set_step { create, recover, read_token, list, watch_own_node, confirm };

/// Which request a set's listing answers.
enum class set_listing { pipelined, fresh, recover };

/// One thing for the engine to do. `queue` names the lock directory
/// (setup.dirs[queue]) of a per-queue request; an answer goes to the machine's
/// method of the same name.
struct set_action {
    enum class kind {
        wait_connected,   ///< once connected: connected(step, queue); the session closed first: connect_failed(ec)
        read_dir_before,  ///< getData(dir) -> dir_before_read(queue)
        create,           ///< multi: create2(dir/name + sequence, EPHEMERAL_SEQUENTIAL) in every dir -> created
        ensure_parents,   ///< dir and its parents -> parents_ensured(queue)
        list,             ///< getChildren(dir) -> listed(queue, which)
        read_token,       ///< getData(dir/name) of queue 0's node -> token_read
        watch_node,       ///< getData(dir/name) with a watch (generation = number) -> watch_set, watch_fired
        read_handover,    ///< getData(dir) -> handover_read(queue)
        start_delay,      ///< a timer of the lock-delay -> delay_elapsed
        grant,            ///< held: fencing token = number; once the hold has lasted a moment, hold_settled
        watch_own_node,   ///< getData(dir/name) with a watch -> own_watch_set(queue), own_watch_fired(queue)
        node_gone,        ///< held, and a node of the set went: the hold is over, why is not known yet
        lose,             ///< the hold is lost for `ec`
        requeue,          ///< this attempt is over: a new attempt, new nodes
        fail,             ///< the acquire fails with `ec`, `detail` in words (held: the hold is lost)
        give_up,          ///< a try found the set busy: the acquire ends, not acquired, no error
        delete_set,       ///< one multi deletes `paths`, owned by session `number` (with `records`);
                          ///< `wait`: deleted(ec) follows
        delete_by_guid,   ///< delete the child of dir carrying guid `name`, owned by session `number`;
                          ///< `wait`: deleted(ec) follows
        cleaned_up,       ///< the cleanup or release is over, with `ec`: complete it
        positions,        ///< our places in the queues changed (positions())
        forget_positions, ///< our places and nodes are not known
        nodes_known,      ///< our nodes are known (node_paths())
        count_attempt,    ///< a listing that decides is sent (lock_stats::attempts)
        count_wakeup,     ///< a watch woke us (lock_stats::wakeups)
        revocation_request,  ///< held, not revocable: a request came to node `name` of `queue`; report it
        revoke,           ///< held, revocable: a request came to node `name` of `queue`; report it, then the handler
        confirm_session,  ///< sync(setup.dirs[0]) -> synced: before a grant, a basis for the hold's budget (session.budget)
    };
    kind what{};
    std::size_t queue = 0;
    std::string name;
    std::int64_t number = 0;
    set_step step{};
    set_listing which{};
    bool wait = false;
    std::error_code ec;
    std::string detail;
    std::vector<std::string> paths;                  ///< delete_set: the nodes
    std::vector<std::pair<std::string, std::string>> records;  ///< delete_set: (dir, data) set with the deletes

    friend bool operator==(const set_action&, const set_action&) = default;
};
using set_actions = std::vector<set_action>;

/// An action in words ("list fresh @1", "delete_set /a/x /b/y #256 wait"), for
/// test failures.
std::string to_string(const set_action& a);

class set_acquire_machine {
public:
    /// `guid`: the tag in every node's name, by which a lost reply's nodes are found.
    set_acquire_machine(const set_setup& setup, std::string guid);

    /// What the session is now; set before every event.
    struct session_now {
        std::int64_t id = 0;
        bool connected = true;
        bool closed = false;  ///< the Session was closed
        /// The session the attempt began on has a safe-time budget left (as
        /// acquire_machine's session_now::budget): without one a grant waits
        /// for a sync's answer.
        bool budget = true;
    } session;

    /// The attempt starts: once connected, the transaction.
    set_actions begin();
    set_actions connected(set_step step, std::size_t queue = 0);
    set_actions connect_failed(std::error_code ec);

    set_actions dir_before_read(std::size_t queue, int rc, std::string_view data, const node_stat& st);
    /// The transaction's reply: `op_errors` per op when it failed, `created` the paths when it did not.
    set_actions created(int rc, const std::vector<int>& op_errors, const std::vector<std::string>& created);
    set_actions parents_ensured(std::size_t queue, int rc, std::string_view at);
    set_actions listed(std::size_t queue, set_listing which, int rc, const std::vector<std::string>& children);
    set_actions token_read(int rc, const node_stat& st);
    set_actions watch_set(std::size_t queue, std::string_view name, std::int64_t generation, int rc,
                          const node_stat& st);
    set_actions watch_fired(std::size_t queue, std::string_view name, std::int64_t generation, int type);
    set_actions handover_read(std::size_t queue, int rc, std::string_view data);
    set_actions delay_elapsed();
    /// The answer to confirm_session's sync.
    set_actions synced(int rc);
    /// The hold has lasted a moment (session_impl::settle_delay): time to
    /// watch our own nodes, so that a deletion by someone else is reported.
    set_actions hold_settled();
    /// The read that set the watch on our node of `queue`: its data and data
    /// version (a revocation request to any node concerns the whole set).
    set_actions own_watch_set(std::size_t queue, int rc, std::string_view data = {}, std::int32_t version = 0);
    set_actions own_watch_fired(std::size_t queue, int type);
    /// A delete that `wait`s answered.
    set_actions deleted(std::error_code ec);
    /// A session event; `close_reason`: why a closed session closed.
    set_actions session_changed(session_event e, std::error_code close_reason = {});

    /// The acquire stops (cancelled, deadline, failed, a try that gave up):
    /// what to delete. Ends with cleaned_up, at once or after the deletes it
    /// waits for; when the transaction's reply is on its way, after created().
    set_actions cancel();
    /// A release of the hold: one multi deletes the nodes (with each queue's
    /// clean-release record under lock-delay); cleaned_up follows deleted().
    set_actions release();
    /// The hold is lost for `ec` (the engine's report): what to delete.
    set_actions lost(std::error_code ec);

    bool waiting() const noexcept { return stage_ == stage::waiting; }
    bool held() const noexcept { return stage_ == stage::held; }
    /// Held, and a node of the set went: the reason is not known yet.
    bool node_gone() const noexcept { return node_gone_; }
    const std::string& guid() const noexcept { return guid_; }
    std::int64_t owner() const noexcept { return owner_; }
    /// Per queue, our place as of its last decision (0 = first).
    const std::vector<std::optional<std::size_t>>& positions() const noexcept { return positions_; }
    /// Per queue, our node's full path; empty before the nodes are known.
    std::vector<std::string> node_paths() const;
    /// The state in words (stage, flags, per queue: node, first, watching).
    std::string describe() const;

private:
    enum class stage { waiting, held, abandoned, over };

    // set_acquire_machine.cpp: the transaction, recovery, listings, watches and
    // the grant; set_acquire_leave.cpp: holding and the ways out.

    set_actions retry(set_step step, std::size_t queue = 0) const;
    set_actions send_create();
    set_actions recovered(const std::vector<std::vector<std::string>>& listings);
    set_actions read_token() const;
    set_actions list(std::size_t queue) const;
    set_actions evaluate(std::optional<std::size_t> only);
    set_actions watch(std::size_t queue, const queue_decision& q);
    set_actions wake(std::size_t queue, bool notified, std::string_view name);
    set_actions grant();
    set_actions own_node_gone();
    set_actions cleanup();
    set_actions delete_nodes(bool wait);
    set_actions requeue(bool delete_nodes_first);
    set_actions fail(std::error_code ec, std::string detail = {}) const;
    static set_actions lose(std::error_code ec);
    std::string refused(std::string_view what, std::string_view path) const;
    std::string path_of(std::size_t queue, std::string_view child) const;
    bool first_everywhere() const noexcept;
    static set_action act(set_action::kind k, std::size_t queue = 0, std::string name = {}, std::int64_t number = 0);

    const set_setup& setup_;
    std::string guid_;
    stage stage_ = stage::waiting;
    std::vector<std::string> nodes_;  // per queue, once created (all or none)
    std::int64_t owner_ = 0;          // the session that made them
    std::int64_t token_ = 0;          // their czxid: the transaction's zxid
    bool token_read_ = false;
    bool evaluated_ = false;          // the first decision (every queue) was made
    int parent_retries_ = 0;
    bool create_in_flight_ = false;
    bool create_uncertain_ = false;   // a transaction's reply was lost: it may have committed
    bool cleanup_after_create_ = false;
    bool node_gone_ = false;
    bool confirming_ = false;         // a grant waits for confirm_session's sync
    // Replies gathered from every queue before a decision: the parents of
    // every directory, the recovering listings, the handover reads. One
    // gathering at a time; a reply of another is not counted.
    enum class gathering { none, parents, recovery, handover };
    gathering gathering_ = gathering::none;
    /// Starts gathering `what` from every queue.
    void gather(gathering what);
    /// Counts a reply of `what`; true when it was the last one.
    bool gathered(gathering what);
    std::size_t pending_ = 0;
    int pending_rc_ = 0;
    std::string pending_at_;
    bool handover_clean_ = true;
    std::vector<std::vector<std::string>> recovery_;
    // The deletes a cleanup or release waits for, and the first error among them.
    std::size_t deletes_pending_ = 0;
    std::error_code delete_error_;
    // Per queue.
    std::vector<std::vector<std::string>> listings_;
    std::vector<bool> listed_;
    std::vector<bool> first_;         // first in that queue (lasts until our node goes)
    std::vector<std::int64_t> generation_;  // watches of older rounds are stale
    std::vector<std::vector<std::string>> watching_;
    std::vector<bool> last_blocker_;
    std::vector<bool> own_watched_;   // our node watched while waiting (set or on its way)
    std::vector<std::optional<std::size_t>> positions_;
    std::vector<revocation_watch> revocations_;  // the requests written into each node while held
    // Lock-delay, per queue: the directory before the transaction, the
    // sequences ahead of us at the previous and at the granting decision.
    std::vector<std::optional<directory_before>> before_;
    std::vector<std::optional<queue_ahead>> ahead_;
    std::vector<queue_ahead> ahead_now_;
    handover_check handover_ = handover_check::unchecked;
};

} // namespace zklock::detail
