// The queue engine: one place in a ZooKeeper lock queue, written once and
// shared by every recipe. A recipe chooses the rule (how many leases, which
// marker); the engine creates the node, lists, watches the one node it must
// wait for, re-checks, grants, releases, cleans up after cancellation and
// reports loss.
#pragma once

#include "queue_entry.hpp"

#include <zklock/detail/lock_delay.hpp>
#include <zklock/detail/lock_node.hpp>
#include <zklock/lock.hpp>
#include <zklock/lock_stats.hpp>

#include <boost/asio/cancellation_signal.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>

namespace zklock::detail {

/// "<hostname>:<pid>": what a node stores when the user gives no data.
std::string default_node_data();

/// The queue at `path` as the server has it now (blocking; see zklock::list_contenders).
std::vector<zklock::contender> list_contenders(const std::shared_ptr<session_impl>& session, const std::string& path,
                                               std::error_code& ec);

/// Lock-delay (contender_delay.cpp): the lock directory as read before a
/// create (nullopt when the read failed), and the setData that records a
/// clean release of `node` in `dir` (nullopt without that read).
std::optional<directory_before> directory_read(int rc, const std::string& data, const node_stat& st);
std::optional<multi_op> release_record_op(const std::string& dir, const std::string& rule_data,
                                          const std::optional<directory_before>& before, const std::string& node);

class ZKLOCK_EXPORT contender_engine : public queue_entry {
public:

    /// `acl`: the ACL of the nodes and directories this contender creates (the
    /// session's policy when null).
    static std::shared_ptr<contender_engine> make(std::shared_ptr<session_impl> session, std::string dir,
                                                  queue_rule rule, std::string node_data,
                                                  std::shared_ptr<const c_acl> acl = nullptr);
    ~contender_engine() override;

    // ---- thread-safe (acquire, release, loss: queue_entry) ----------------------
    std::optional<std::size_t> queue_position() const noexcept;
    std::string node_path() const;
    const std::string& dir() const noexcept { return dir_; }
    /// The acquire protocol's state in words (phase, the attempt's node and
    /// flags, what it watches); strand only (zklock::testing::describe_internals).
    std::string describe() const;

    /// Calls `callback(position)` on the strand whenever our place in the queue changes.
    void on_position(std::function<void(std::size_t)> callback);

private:
    struct attempt {
        std::string guid;         // the tag in the node's name (node_form: a UUID or 32 hex)
        std::string node;         // child name once created
        std::int64_t owner = 0;   // session that created it
        bool create_in_flight = false;  // a create was sent and its reply has not come
        bool create_uncertain = false;  // a create's reply was lost: the node may exist
        bool abandoned = false;
        std::function<void()> after_create;  // cleanup waiting for the create reply
        std::int64_t token = 0;   // czxid of the node
        std::vector<std::string> watching;
        bool last_blocker = false;
        std::uint64_t watch_generation = 0;
        std::error_code dir_error;  // the lock directory's data or ACL disagrees with the rule or policy
        std::string dir_error_detail;
        std::vector<std::string> persistent;  // watched nodes that are not ephemeral
        bool node_gone = false;    // held, and our node was deleted: why is not known yet
        bool claiming = false;     // setting the directory's data (a semaphore's permit count)
        std::optional<std::vector<std::string>> deferred_listing;  // a listing that came while claiming
        // Lock-delay (contender_delay.cpp): the directory before our create, the
        // sequences ahead of us at the previous and at the granting listing,
        // whether the grant was checked, the wait after a loss.
        std::optional<directory_before> before;
        std::optional<std::vector<std::int32_t>> ahead;
        std::vector<std::int32_t> ahead_now;
        bool handover_checked = false;
        std::shared_ptr<boost::asio::steady_timer> delay_timer;
    };

    contender_engine(std::shared_ptr<session_impl> session, std::string dir, queue_rule rule, std::string node_data,
                     std::shared_ptr<const c_acl> acl);
    void subscribe();

    std::shared_ptr<contender_engine> shared_from_this() {
        return std::static_pointer_cast<contender_engine>(queue_entry::shared_from_this());
    }
    std::weak_ptr<contender_engine> weak_from_this() { return shared_from_this(); }

    // strand only (queue_entry's hooks first)
    void new_attempt() override;
    void abandon(std::error_code ec) override;
    void fail(std::error_code ec) override;
    void do_release(std::function<void(std::error_code)> done) override;
    bool hold_ending() const noexcept override { return attempt_ && attempt_->node_gone; }
    void send_create(const std::shared_ptr<attempt>& a, int parent_retries);
    void check_dir_data(const std::shared_ptr<attempt>& a);
    void compare_dir_data(const std::shared_ptr<attempt>& a, const std::string& data);
    void claim_dir(const std::shared_ptr<attempt>& a, std::int32_t version);
    void check_dir_acl(const std::shared_ptr<attempt>& a);
    /// Fails the acquire (or loses the hold) with `ec`, keeping `detail` for failure_detail().
    void fail(std::error_code ec, std::string detail);
    /// failure_detail() of a refusal by the server (errc::no_auth) on `path`.
    std::string refused(const std::string& what, const std::string& path) const;
    /// failure_detail() of errc::foreign_recipe: `peer` (a peer semaphore, in words) owns the path.
    std::string foreign_semaphore_detail(const std::string& peer) const;
    void set_position(std::int64_t position);
    void on_created(const std::shared_ptr<attempt>& a, int rc, std::string name, const node_stat& st, int parent_retries);
    void recover_create(const std::shared_ptr<attempt>& a);
    void list(const std::shared_ptr<attempt>& a);
    void evaluate(const std::shared_ptr<attempt>& a, int rc, const std::vector<std::string>& children);
    void watch(const std::shared_ptr<attempt>& a);
    void watch_node(const std::shared_ptr<attempt>& a, const std::string& name, std::uint64_t generation);
    void on_watch_event(const std::shared_ptr<attempt>& a, const std::string& name, std::uint64_t generation,
                        int type);
    void wake(const std::shared_ptr<attempt>& a, bool notified, const std::string& name);
    void count_notification();
    void grant(const std::shared_ptr<attempt>& a);
    // lock-delay (contender_delay.cpp)
    void read_dir_before(const std::shared_ptr<attempt>& a);
    void note_listing(const std::shared_ptr<attempt>& a, const std::vector<std::string>& children, const queue_decision& d);
    void note_wake(const std::shared_ptr<attempt>& a, const std::string& name);
    /// True when the grant waits: the handover is being checked, or was not clean.
    bool hold_back(const std::shared_ptr<attempt>& a);
    /// The clean-release record to commit with our node's delete; empty without lock-delay.
    std::vector<multi_op> release_record(const attempt& a) const;
    void watch_own_node(const std::shared_ptr<attempt>& a);
    void own_node_gone(const std::shared_ptr<attempt>& a);
    void cleanup(const std::shared_ptr<attempt>& a, std::function<void(std::error_code)> done);
    void lose(std::error_code ec) override;
    std::string event_path() const override { return dir_; }
    void on_session_event(session_event e);
    void retry_when_connected(const std::shared_ptr<attempt>& a, std::function<void()> step);
    bool current(const std::shared_ptr<attempt>& a) const noexcept { return a == attempt_ && !a->abandoned; }
    std::string path_of(const std::string& child) const { return dir_ + "/" + child; }

    std::string dir_;
    queue_rule rule_;
    node_form form_;  // how our node's name is spelled
    std::string node_data_;
    std::shared_ptr<const c_acl> acl_;
    acl_list expanded_acl_;  // the policy as the server stores it; empty when the policy is open
    std::uint64_t listener_id_ = 0;

    // strand only
    std::shared_ptr<attempt> attempt_;
    std::function<void(std::size_t)> position_callback_;

    // thread-safe snapshots (mutex_ guards node_path_)
    std::atomic<std::int64_t> position_{-1};
    std::string node_path_;
};

} // namespace zklock::detail
