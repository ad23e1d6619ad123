// A workload of the simulation: the contenders of one recipe on its own lock
// paths, with that recipe's invariant in its own form. The runner makes one
// per recipe a schedule draws, gives it contenders, checks it after every
// step of the world, and aims its faults at its participants' sessions.
#pragma once

#include "world.hpp"
#include "zk_model.hpp"

#include <zklock/lock.hpp>
#include <zklock/mutex.hpp>
#include <zklock/session.hpp>

#include <boost/asio/cancellation_signal.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace zklock::sim {

/// What a workload gets from the runner.
struct workload_env {
    world& w;
    zk_server& server;
    const bool& stopping;  ///< the run is being torn down: handlers touch nothing
    int timeout_ms = 0;    ///< the sessions' requested timeout
    /// Records a broken invariant (the first one is the run's failure).
    std::function<void(std::string)> fail;
};

/// One contender: a simulated process with its own clock and session, which
/// takes its lock `rounds_left` times, holding each time for a while, and
/// waits for its loss report when the library gave a hold up. A recipe
/// subclasses it with its lock object.
class sim_contender {
public:
    sim_contender(workload_env& env, int index, std::string lock_path);
    virtual ~sim_contender() = default;
    sim_contender(const sim_contender&) = delete;
    sim_contender& operator=(const sim_contender&) = delete;

    const int index;
    const int process;
    const std::string lock_path;  ///< what the journal names (a set's paths joined)
    std::unique_ptr<Session> session;
    int rounds_left = 0;
    bool done = false;
    bool holding = false;  ///< granted, unlock not asked yet
    std::int64_t token = 0;
    int losses_reported = 0;
    std::error_code last_loss;
    nanos granted_at = 0;  ///< global time of the last grant
    /// The workload's look at each grant, right when it is told (before granted()).
    std::function<void(sim_contender&)> on_grant;

    /// "c<index>", as the journal names it.
    std::string name() const { return "c" + std::to_string(index); }
    /// Starts the first round after up to 200 ms.
    void start();
    /// Holds with a positive budget now, on its own clock.
    bool certainly_holds();
    /// Destroys the lock objects, then the session, as the contender's process.
    void teardown();
    /// Whether its hold counts in check_exclusion (one whose node was deleted
    /// from outside is only owed the news).
    virtual bool counts_for_exclusion() const { return true; }

    // The recipe.
    virtual void async_acquire(std::function<void(std::error_code)> done) = 0;
    virtual void async_release(std::function<void(std::error_code)> done) = 0;
    virtual bool is_held() const = 0;
    virtual std::optional<std::chrono::milliseconds> safe_for() const = 0;
    virtual std::int64_t fencing_token() const = 0;
    virtual void drop_lock() = 0;

protected:
    /// A grant (after the bookkeeping); the default holds 1 to 400 ms, then releases.
    virtual void granted();
    /// A reported loss (after the bookkeeping).
    virtual void lost(std::error_code) {}
    /// Called by the lock's on_lost handler.
    void report_loss(std::error_code ec);
    /// Ends the hold (waits for the loss report when the library gave it up
    /// unreported), then the next round after up to 100 ms.
    void release();
    /// Runs fn as this contender's process after `delay` (global time).
    void later(nanos delay, std::function<void()> fn);
    void acquire();
    void on_granted();

    workload_env& env_;

private:
    int reported_at_grant_ = 0;
    bool awaiting_report_ = false;
};

/// A contender with a Mutex (MutexOptions as the workload sets them).
class mutex_contender : public sim_contender {
public:
    mutex_contender(workload_env& env, int index, std::string path, MutexOptions options = {});
    Mutex& mutex() { return *mutex_; }

    void async_acquire(std::function<void(std::error_code)> done) override;
    void async_release(std::function<void(std::error_code)> done) override;
    bool is_held() const override { return mutex_->is_held(); }
    std::optional<std::chrono::milliseconds> safe_for() const override { return mutex_->safe_for(); }
    std::int64_t fencing_token() const override { return mutex_->fencing_token(); }
    void drop_lock() override { mutex_.reset(); }

private:
    std::unique_ptr<Mutex> mutex_;
};

/// How a contender asks this time: plain; with a deadline of 1 to 1500 ms
/// (one acquire in four), which, when it passes, leaves the queue and deletes
/// the node (found by its guid when its create's reply was lost); or
/// cancelled by its caller 0 to 1500 ms after asking (one in eight), with the
/// same duty. An acquire granted first completes granted either way.
struct acquire_draw {
    enum class kind { plain, deadline, cancelled } how = kind::plain;
    std::chrono::milliseconds after{0};  ///< the deadline, or when the cancel comes
};
acquire_draw draw_acquire(world& w);
/// A signal that `process` emits (terminal cancellation) after `delay`; an
/// emit after the operation completed is a no-op, as Asio allows.
std::shared_ptr<boost::asio::cancellation_signal> cancel_after(world& w, int process, nanos delay);
/// Acquires `lock` as drawn; `done` gets errc::timeout for a deadline that
/// passed, std::errc::operation_canceled for a cancelled acquire.
void drawn_acquire(world& w, int process, Lock& lock, std::function<void(std::error_code)> done);

/// Fails when more of `contenders` (those that count_for_exclusion()) than
/// `allowed` hold `what` with positive budgets at once (each on its own clock).
void check_exclusion(workload_env& env, const std::vector<std::unique_ptr<sim_contender>>& contenders,
                     const std::string& what, std::size_t allowed = 1);

/// One recipe's workload.
class workload {
public:
    explicit workload(workload_env& env) : env_(env) {}
    virtual ~workload() = default;
    workload(const workload&) = delete;
    workload& operator=(const workload&) = delete;

    /// What the journal calls it, with its paths.
    virtual std::string describe() const = 0;
    /// Adds contender `index` (the runner's numbering) and starts it.
    virtual void add(int index) = 0;
    /// After every step: the recipe's invariant (env.fail on a breach).
    virtual void check() = 0;
    /// Once every client has ended and the world is quiet.
    virtual void finish() {}
    /// A server request was applied (session 0: the server's own change).
    virtual void applied(std::int64_t, const zk_request&, const zk_reply&) {}
    /// A node the run may leave behind (the workload's own persistent data).
    virtual bool keeps(const std::string&) const { return false; }

    std::vector<sim_contender*> contenders() const;
    bool done() const;
    /// Closes every session (the run's contenders have all finished).
    void close_sessions();
    /// Destroys every lock and session, as their processes.
    void teardown();

protected:
    workload_env& env_;
    std::vector<std::unique_ptr<sim_contender>> contenders_;
};

/// The recipes beside the runner's own Mutex, Semaphore and SharedMutex.
enum class workload_kind { lock_set, election, lock_delay, revocation, guarded, requeue };
inline constexpr int workload_kinds = 6;
std::unique_ptr<workload> make_workload(workload_kind kind, workload_env& env, int instance);

std::unique_ptr<workload> make_lock_set_workload(workload_env& env, int instance);
std::unique_ptr<workload> make_election_workload(workload_env& env, int instance);
std::unique_ptr<workload> make_lock_delay_workload(workload_env& env, int instance);
std::unique_ptr<workload> make_revocation_workload(workload_env& env, int instance);
std::unique_ptr<workload> make_guarded_workload(workload_env& env, int instance);
std::unique_ptr<workload> make_requeue_workload(workload_env& env, int instance);

// Helpers over the server's tree.

/// The sequence of a lock node's name (ZooKeeper's %010d: "-2147483648" after the wrap).
std::int32_t sequence_of(const std::string& path);
/// a before b in serial-number order.
bool serial_before(std::int32_t a, std::int32_t b);
/// Moves whenever the children of `dir` change, or `dir` is made or removed
/// (its pzxid; -1 while it does not exist): what queue_of(dir) reads changes
/// only with it (a node's ephemeral owner is fixed at its create).
std::int64_t children_version(const zk_server& server, const std::string& dir);
/// The ephemeral children of `dir` (full paths) in queue order.
std::vector<std::string> queue_of(const zk_server& server, const std::string& dir);
/// The full path of the ephemeral node whose czxid is `czxid`, or nullptr.
const std::string* node_with_czxid(const zk_server& server, std::int64_t czxid);

} // namespace zklock::sim
