// The queue engine: one place in a ZooKeeper lock queue, or in several at
// once (a lock set, MultiMutex: one node in each directory, made by one
// transaction), written once and shared by every recipe. A recipe chooses the
// rule (how many leases, which marker); the protocol's decisions are
// fsm/acquire_machine's, and this engine performs them: it sends the
// requests, feeds the answers, watches and session events back, grants,
// releases and reports loss.
#pragma once

#include "engine/queue_entry.hpp"

#include "fsm/acquire_machine.hpp"
#include "fsm/path.hpp"
#include "fsm/release_refusal.hpp"
#include "session/session_impl.hpp"
#include <zklock/lock.hpp>
#include <zklock/lock_stats.hpp>

#include <boost/asio/cancellation_signal.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace zklock::detail {

/// The queue at `path` as the server has it now (blocking; see zklock::list_contenders).
std::vector<zklock::contender> list_contenders(const std::shared_ptr<session_impl>& session, const std::string& path,
                                               std::error_code& ec);

class contender_engine : public queue_entry {
public:

    /// `node_data`: what its nodes store (the session's default "<hostname>:<pid>"
    /// when null). `acl`: the ACL of the nodes and directories this contender
    /// creates (the session's policy when null).
    static std::shared_ptr<contender_engine> make(std::shared_ptr<session_impl> session, std::string dir,
                                                  queue_rule rule, std::shared_ptr<const std::string> node_data,
                                                  std::shared_ptr<const c_acl> acl = nullptr);
    /// A lock set's: `dirs` already validated (validate_lock_set), `rule` the
    /// mutex rule (with its lock_delay); the set is held when it is first in
    /// every queue.
    static std::shared_ptr<contender_engine> make(std::shared_ptr<session_impl> session, std::vector<std::string> dirs,
                                                  queue_rule rule, std::shared_ptr<const std::string> node_data,
                                                  std::shared_ptr<const c_acl> acl = nullptr);

    // ---- thread-safe (acquire, release, loss: queue_entry) ----------------------
    /// Our node's full path in the first directory; empty when none.
    std::string node_path() const;
    /// Per lock directory, our node's full path once created; empty when none.
    std::vector<std::string> node_paths() const;
    /// Per lock directory, our place in its queue as of its last listing (0 = first).
    std::vector<std::optional<std::size_t>> queue_positions() const;
    const std::string& dir() const noexcept { return setup_.dirs.front(); }
    const std::vector<std::string>& dirs() const noexcept { return setup_.dirs; }
    /// The recipe's queue rule (who holds: revoke_holders()).
    const queue_rule& rule() const noexcept { return setup_.rule; }
    /// Releases the held node and creates the next at the tail of the queue in
    /// one transaction, then waits for the grant as acquire() does
    /// (QueueLock::requeue): completes as acquire() does; errc::not_held, at
    /// once, when not held. Any thread.
    void requeue(std::optional<clock::time_point> deadline, bool no_wait, boost::asio::cancellation_slot slot,
                 acquire_callback callback);
    /// The acquire protocol's state in words (phase, the attempt's node and
    /// flags, what it watches); strand only (zklock::describe_internals).
    std::string describe() const;

private:
    using attempt = engine_attempt<acquire_machine>;

    contender_engine(std::shared_ptr<session_impl> session, std::vector<std::string> dirs, queue_rule rule,
                     std::shared_ptr<const std::string> node_data, std::shared_ptr<const c_acl> acl);
    static std::shared_ptr<contender_engine> make_engine(std::shared_ptr<session_impl> session, std::vector<std::string> dirs,
                                                  queue_rule rule, std::shared_ptr<const std::string> node_data,
                                                  std::shared_ptr<const c_acl> acl);

    std::shared_ptr<contender_engine> shared_from_this() {
        return std::static_pointer_cast<contender_engine>(queue_entry::shared_from_this());
    }

    // strand only (queue_entry's hooks first)
    void new_attempt() override;
    void abandon(std::error_code ec) override;
    void fail(std::error_code ec) override;
    void do_release(std::function<void(std::error_code)> done) override;
    bool hold_ending() const noexcept override { return attempt_ && attempt_->fsm.node_gone(); }
    void lose(std::error_code ec) override;
    std::string event_path() const override { return event_path_; }
    void let_go_revoked() override;
    /// Fails the acquire (or loses the hold) with `ec`, keeping `detail` for failure_detail().
    void fail(std::error_code ec, std::string detail);
    void set_node_name(std::string name, std::size_t queue = 0);
    /// Our nodes and places are not known (none queued).
    void forget_nodes();
    void on_session_event(session_event e) override;

    /// Tells `a`'s machine an event (`event(machine)` returns its actions) and performs them.
    template <class Event>
    void feed(const std::shared_ptr<attempt>& a, Event&& event);
    void perform(const std::shared_ptr<attempt>& a, const acquire_action& action);
    /// The request of `action`, its answer fed back to `a`.
    void send(const std::shared_ptr<attempt>& a, const acquire_action& action);
    /// The create: one queue's create2, or a multi of every queue's create.
    void send_create(const std::shared_ptr<attempt>& a, const acquire_action& action);
    /// The listing of `action`; a requeue's pipelined listing goes behind its multi (send_requeue).
    void send_list(const std::shared_ptr<attempt>& a, const acquire_action& action);
    void list_now(const std::shared_ptr<attempt>& a, const acquire_action& action);
    /// A requeue's pipelined listing, its multi in flight: sent right behind
    /// it when the multi's reply has the token, otherwise once it is answered.
    void list_behind_requeue(const std::shared_ptr<attempt>& a, const acquire_action& action);
    void send_delete(const std::shared_ptr<attempt>& a, const acquire_action& action);
    void send_watch(const std::shared_ptr<attempt>& a, const acquire_action& action);
    void send_release_watch(const std::shared_ptr<attempt>& a, const acquire_action& action);
    /// Removes `a`'s watch on a `.released` sibling that did not fire: the
    /// server keeps a watch on a path nobody creates until the session ends.
    void drop_release_watch(attempt& a);
    void watch_own_node_later(const std::shared_ptr<attempt>& a);
    std::string path_of(const std::string& child, std::size_t queue = 0) const {
        return child_path(setup_.dirs[queue], child);
    }
    bool dirs_known() const;

    // The requeue (strand only, contender_requeue.cpp): the hold's release
    // joins the next attempt's create in one multi.
    struct pending_requeue {
        std::shared_ptr<attempt> held;       // the attempt that held (its machine's release made `release`)
        std::weak_ptr<attempt> next;         // the attempt whose create joins the release
        acquire_action release;              // the held node's delete, as unlock() would send it
        bool proof = true;                   // with the `.released` sibling (release.mark): until refused
        bool mark = true;                    // with the mark (under the mutex rule): until refused
        bool begun = false;                  // `next` is made
        bool in_flight = false;              // the multi is sent, not answered
        bool token_in_reply = false;         // the multi in flight has a set_data: its Stat is the token
        bool listing_sent = false;           // `listing` went right behind the multi in flight
        std::optional<acquire_action> listing;  // the pipelined listing, kept until the multi applied
    };
    void do_requeue(std::optional<clock::time_point> deadline, bool no_wait, std::uint64_t id,
                    acquire_callback callback);
    bool requeue_for(const std::shared_ptr<attempt>& a) const { return requeue_ && requeue_->next.lock() == a; }
    void send_requeue(const std::shared_ptr<attempt>& a, const acquire_action& create);
    void requeue_answered(const std::shared_ptr<attempt>& a, const acquire_action& create, int rc,
                          const std::vector<int>& errors, const std::vector<release_role>& roles, std::string name,
                          std::optional<std::int64_t> zxid);
    /// The Stat of a requeue's new node `name` read (the multi's reply had none).
    void requeued_node_read(const std::shared_ptr<attempt>& a, const std::string& name, int rc, const node_stat& st);
    /// The held node's release, as unlock() sends it: a requeue that did not apply.
    void release_instead(pending_requeue& r);
    /// Drops a requeue whose multi is not in flight, its release sent as unlock() sends it.
    void drop_requeue();

    std::shared_ptr<const std::string> node_data_;  // the session's default, shared, unless given
    std::shared_ptr<const c_acl> acl_;
    acquire_setup setup_;  // what every attempt's machine is told; setup_.dirs are the lock directories
    std::string event_path_;  // the directories, comma-separated

    // strand only
    std::shared_ptr<attempt> attempt_;
    std::unique_ptr<pending_requeue> requeue_;  // null unless a requeue's multi is to be sent or answered
    bool capturing_release_ = false;            // do_requeue: the machine's release delete goes into requeue_

    // thread-safe snapshots (mutex_ guards them): our nodes' names, per
    // directory (their paths made when asked, so a held lock keeps the
    // directory's path once), and a set's places in its queues
    std::vector<std::string> node_names_;
    std::vector<std::optional<std::size_t>> positions_;
};

template <class Event>
void contender_engine::feed(const std::shared_ptr<attempt>& a, Event&& event) {
    a->fsm.session = {session_->session_id(), session_->connected(), session_->state() == session_state::closed,
                      dirs_known(), attempt_budget()};
    // An action that ends the attempt (fail, requeue, give up) comes last.
    for (const auto& action : event(a->fsm)) perform(a, action);
}

} // namespace zklock::detail
