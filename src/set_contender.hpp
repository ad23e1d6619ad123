// A lock set's place in several ZooKeeper lock queues at once (MultiMutex):
// one multi transaction creates a protected node with one guid in every lock
// directory; in each queue the node follows the mutex rule; the set is held
// when it is first in every queue (detail/lock_set.hpp decides). Release and
// cancellation delete every node with one multi; a lost transaction reply is
// recovered by the guid in every directory, as the single queue's engine
// (contender.hpp) recovers its create.
#pragma once

#include "contender.hpp"
#include "queue_entry.hpp"

#include <zklock/detail/lock_set.hpp>

namespace zklock::detail {

class ZKLOCK_EXPORT set_contender : public queue_entry {
public:

    /// `dirs`: the lock paths, already validated (validate_lock_set).
    /// `lock_delay`: as the single queue's (queue_rule::lock_delay), per queue.
    static std::shared_ptr<set_contender> make(std::shared_ptr<session_impl> session, std::vector<std::string> dirs,
                                               std::string node_data, std::shared_ptr<const c_acl> acl = nullptr,
                                               std::chrono::milliseconds lock_delay = {});
    ~set_contender() override;

    // ---- thread-safe (acquire, release, loss: queue_entry) ----------------------

    /// Per lock path, our place in its queue as of its last listing (0 = first).
    std::vector<std::optional<std::size_t>> queue_positions() const;
    /// Per lock path, our node's full path once created; empty when none.
    std::vector<std::string> node_paths() const;
    const std::vector<std::string>& dirs() const noexcept { return dirs_; }
    /// The protocol's state in words; strand only.
    std::string describe() const;

private:
    struct attempt {
        std::string guid;
        std::vector<std::string> nodes;  // per directory, once created (all or none)
        std::int64_t owner = 0;
        std::int64_t token = 0;
        bool token_read = false;         // the Stat of our first node came back
        bool evaluated = false;          // the first decision (every queue) was made
        bool create_in_flight = false;
        bool create_uncertain = false;
        bool abandoned = false;
        std::function<void()> after_create;
        std::vector<std::vector<std::string>> listings;  // per queue, the last listing
        std::vector<bool> listed;
        std::vector<bool> first;                         // per queue: first (lasts until our node goes)
        std::vector<std::uint64_t> generation;           // per queue: watches of older rounds are stale
        std::vector<std::vector<std::string>> watching;  // per queue
        std::vector<bool> last_blocker;
        bool node_gone = false;
        // Lock-delay, per queue (as contender_engine's attempt).
        std::vector<std::optional<directory_before>> before;
        std::vector<std::optional<std::vector<std::int32_t>>> ahead;
        std::vector<std::vector<std::int32_t>> ahead_now;
        bool handover_checked = false;
        std::shared_ptr<boost::asio::steady_timer> delay_timer;
    };

    set_contender(std::shared_ptr<session_impl> session, std::vector<std::string> dirs, std::string node_data,
                  std::shared_ptr<const c_acl> acl, std::chrono::milliseconds lock_delay);
    void subscribe();

    std::shared_ptr<set_contender> shared_from_this() {
        return std::static_pointer_cast<set_contender>(queue_entry::shared_from_this());
    }
    std::weak_ptr<set_contender> weak_from_this() { return shared_from_this(); }

    // strand only: queue_entry's hooks
    void new_attempt() override;
    void abandon(std::error_code ec) override;
    void fail(std::error_code ec) override { fail(ec, {}); }
    void do_release(std::function<void(std::error_code)> done) override;
    bool hold_ending() const noexcept override { return attempt_ && attempt_->node_gone; }

    // strand only: acquiring (set_contender.cpp)
    void requeue(const std::shared_ptr<attempt>& a);
    void retry_when_connected(const std::shared_ptr<attempt>& a, std::function<void()> step);
    void send_create(const std::shared_ptr<attempt>& a, int parent_retries);
    void on_created(const std::shared_ptr<attempt>& a, int rc, const std::vector<int>& op_errors,
                    const std::vector<std::string>& created, int parent_retries);
    void create_parents(const std::shared_ptr<attempt>& a, int parent_retries);
    void recover_create(const std::shared_ptr<attempt>& a);
    void adopt(const std::shared_ptr<attempt>& a, const set_recovery& found);
    void read_token(const std::shared_ptr<attempt>& a);
    void list_queue(const std::shared_ptr<attempt>& a, std::size_t i);
    void on_listing(const std::shared_ptr<attempt>& a, std::size_t i, int rc, std::vector<std::string> children);
    void evaluate(const std::shared_ptr<attempt>& a, std::optional<std::size_t> only);
    void watch(const std::shared_ptr<attempt>& a, std::size_t i, const queue_decision& q);
    void watch_node(const std::shared_ptr<attempt>& a, std::size_t i, const std::string& name, std::uint64_t generation);
    void wake(const std::shared_ptr<attempt>& a, std::size_t i, bool notified, const std::string& name);
    void grant(const std::shared_ptr<attempt>& a);
    /// Lock-delay: true when the grant waits (checking every queue's handover, or after a loss).
    bool hold_back(const std::shared_ptr<attempt>& a);

    // strand only: holding and leaving (set_contender_hold.cpp)
    void watch_own_node(const std::shared_ptr<attempt>& a, std::size_t i);
    void own_node_gone(const std::shared_ptr<attempt>& a);
    void cleanup(const std::shared_ptr<attempt>& a, std::function<void(std::error_code)> done);
    void fail(std::error_code ec, std::string detail);
    void lose(std::error_code ec) override;
    std::string event_path() const override;
    void on_session_event(session_event e);
    void set_positions(const std::vector<std::optional<std::size_t>>& positions);
    void clear_nodes();

    /// The set is held when its node is first in every queue.
    static bool first_everywhere(const attempt& a) noexcept {
        return std::find(a.first.begin(), a.first.end(), false) == a.first.end();
    }
    bool current(const std::shared_ptr<attempt>& a) const noexcept { return a == attempt_ && !a->abandoned; }
    std::string path_of(std::size_t i, const std::string& child) const { return dirs_[i] + "/" + child; }
    std::vector<std::string> paths_of(const attempt& a) const;
    std::string refused(const std::string& what, const std::string& path) const;

    std::vector<std::string> dirs_;
    std::string node_data_;
    std::shared_ptr<const c_acl> acl_;
    std::chrono::milliseconds lock_delay_;
    std::uint64_t listener_id_ = 0;

    // strand only
    std::shared_ptr<attempt> attempt_;

    // thread-safe snapshots, under mutex_
    std::vector<std::optional<std::size_t>> positions_;
    std::vector<std::string> node_paths_;
};

} // namespace zklock::detail
