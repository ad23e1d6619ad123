// A lock set's place in several ZooKeeper lock queues at once (MultiMutex):
// one multi transaction creates a node with one guid in every lock directory;
// in each queue the node follows the mutex rule; the set is held when it is
// first in every queue. The protocol's decisions are
// fsm/set_acquire_machine's; this engine performs them: it sends the
// requests, feeds the answers, watches and session events back, grants,
// releases and reports loss, as the single queue's engine (contender.hpp)
// does for its acquire_machine.
#pragma once

#include "engine/contender.hpp"
#include "engine/queue_entry.hpp"

#include "fsm/path.hpp"
#include "fsm/set_acquire_machine.hpp"

namespace zklock::detail {

class lock_set_engine : public queue_entry {
public:

    /// `dirs`: the lock paths, already validated (validate_lock_set).
    /// `lock_delay`: as the single queue's (queue_rule::lock_delay), per queue.
    static std::shared_ptr<lock_set_engine> make(std::shared_ptr<session_impl> session,
                                                 std::vector<std::string> dirs, std::string node_data,
                                                 std::shared_ptr<const c_acl> acl = nullptr,
                                                 std::chrono::milliseconds lock_delay = {});

    // ---- thread-safe (acquire, release, loss: queue_entry) ----------------------

    /// Per lock path, our place in its queue as of its last listing (0 = first).
    std::vector<std::optional<std::size_t>> queue_positions() const;
    /// Per lock path, our node's full path once created; empty when none.
    std::vector<std::string> node_paths() const;
    const std::vector<std::string>& dirs() const noexcept { return setup_.dirs; }
    /// The protocol's state in words; strand only.
    std::string describe() const;

private:
    using attempt = engine_attempt<set_acquire_machine>;

    lock_set_engine(std::shared_ptr<session_impl> session, std::vector<std::string> dirs, std::string node_data,
                    std::shared_ptr<const c_acl> acl, std::chrono::milliseconds lock_delay);

    std::shared_ptr<lock_set_engine> shared_from_this() {
        return std::static_pointer_cast<lock_set_engine>(queue_entry::shared_from_this());
    }

    // strand only: queue_entry's hooks
    void new_attempt() override;
    void abandon(std::error_code ec) override;
    void fail(std::error_code ec) override { fail(ec, {}); }
    void do_release(std::function<void(std::error_code)> done) override;
    bool hold_ending() const noexcept override { return attempt_ && attempt_->fsm.node_gone(); }
    void lose(std::error_code ec) override;
    std::string event_path() const override;
    void let_go_revoked() override;
    /// Fails the acquire (or loses the hold) with `ec`, keeping `detail` for failure_detail().
    void fail(std::error_code ec, std::string detail);
    void on_session_event(session_event e) override;
    void set_positions(const std::vector<std::optional<std::size_t>>& positions);
    void clear_nodes();

    /// Tells `a`'s machine an event (`event(machine)` returns its actions) and performs them.
    template <class Event>
    void feed(const std::shared_ptr<attempt>& a, Event&& event);
    /// Performs one action; true when it is the grant (completed after the others).
    bool perform(const std::shared_ptr<attempt>& a, const set_action& action);
    void watch_own_nodes_later(const std::shared_ptr<attempt>& a);
    /// The request of `action`, its answer fed back to `a`.
    void send(const std::shared_ptr<attempt>& a, const set_action& action);
    void send_create(const std::shared_ptr<attempt>& a, const set_action& action);
    void send_watch(const std::shared_ptr<attempt>& a, const set_action& action);
    void send_delete(const std::shared_ptr<attempt>& a, const set_action& action);
    std::string path_of(std::size_t i, const std::string& child) const { return child_path(setup_.dirs[i], child); }

    std::string node_data_;
    std::shared_ptr<const c_acl> acl_;
    set_setup setup_;  // what every attempt's machine is told; setup_.dirs are the lock directories

    // strand only
    std::shared_ptr<attempt> attempt_;

    // thread-safe snapshots, under mutex_
    std::vector<std::optional<std::size_t>> positions_;
    std::vector<std::string> node_paths_;
};

} // namespace zklock::detail
