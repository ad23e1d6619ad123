// Chaos runs: clients looping on one lock while a seeded schedule of faults
// from the kit hits the servers and the clients, judged by a SafetyLedger.
// The chaos suite (tests/integration/test_chaos*.cpp) and the soak
// (`zklock chaos`) are both built from these pieces.
//
//     const auto seed = lab::chaos_seed();            // $ZKLOCK_CHAOS_SEED or fresh
//     std::cout << lab::describe_seed(seed) << "\n";  // printed first: how to replay
//     lab::ChaosCluster cluster({.nodes = 3, .clients = 6}, seed);
//     cluster.start();
//     cluster.apply({lab::chaos_fault::kill_leader, 0, 1s, 1s});
//     const auto outcome = cluster.finish();
//     std::cout << lab::chaos_line(outcome) << "\n";
//     EXPECT_TRUE(lab::chaos_violations(outcome).empty());
//
// The pass conditions (chaos_violations()): no two grants with one token, the
// fenced resource's accepted tokens strictly increasing across holders (no
// holder's accepted writes after a newer holder's), every overlap of two
// critical sections explained by a loss report to one of them, no loss
// reported as node_deleted (no chaos fault deletes nodes), no failed acquire,
// every client entering the critical section again after the last fault, no
// node left on the lock path once every client has released (sessions still
// open), no client hung past a deadline.
//
// Replay: the schedule is drawn from one std::mt19937_64 seeded with the seed
// (bounded draws by modulo, so the same seed gives the same schedule with any
// standard library); the clients' hold times come from generators seeded from
// it too. Thread timing is not replayed: a replay runs the same faults in the
// same order, against whatever interleaving the machine produces.
//
// Requirements: as the fixtures (Java and the ZooKeeper jar); the iptables
// faults (blackhole_client, partition_leader) need root (PacketFilter::
// unavailable()); chaos_schedule_options::without_iptables() leaves them out.
//
// Thread-safety: ChaosCluster is not thread-safe (one thread drives it, as the
// Ensemble); ChaosClient's members may be called from any thread but its own
// worker's.
#pragma once

#include <zklock/mutex.hpp>
#include <zklock/session.hpp>
#include <zklock/testing/ensemble.hpp>
#include <zklock/testing/faults.hpp>
#include <zklock/testing/faulty_link.hpp>
#include "safety/safety_ledger.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace zklock::lab {

// The fault kit and the servers the harness drives.
using testing::Ensemble;
using testing::EnsembleOptions;
using testing::FaultyLink;
using testing::PacketFilter;
using testing::SessionFreeze;

// ---- seeds --------------------------------------------------------------------

/// The environment variable that replays a chaos run: its decimal seed.
inline constexpr const char* chaos_seed_variable = "ZKLOCK_CHAOS_SEED";
/// A seed's text: decimal digits only, 0 to 2^64-1. nullopt otherwise.
std::optional<std::uint64_t> parse_chaos_seed(std::string_view text);
/// $ZKLOCK_CHAOS_SEED when set (std::invalid_argument when it is not a
/// seed), else a fresh one from std::random_device.
std::uint64_t chaos_seed();
/// "chaos seed N (replay: ZKLOCK_CHAOS_SEED=N)".
std::string describe_seed(std::uint64_t seed);

// ---- fault schedules (pure) -----------------------------------------------------

/// The faults a schedule draws from.
enum class chaos_fault {
    kill_leader,        ///< kill -9 of the ensemble's leader; restarted when the fault ends
    kill_follower,      ///< kill -9 of a follower (`target` picks which); restarted when it ends
    pause_server,       ///< SIGSTOP of server `target` (pause_for) for the duration
    partition_leader,   ///< the leader cut off from its peers (iptables) for the duration
    blackhole_client,   ///< client `target` cut off from every server (iptables) for the duration
    reset_client,       ///< client `target`'s connections reset (RST)
    drop_create_reply,  ///< the reply to client `target`'s next create lost (the node is made)
    delay_client,       ///< client `target`'s link 20-200 ms slow for the duration
    expire_session,     ///< client `target`'s session expired by the server
    freeze_holder,      ///< a client in its critical section (else `target`) frozen for the duration
    garble_create_reply,  ///< the reply to client `target`'s next create garbled (the C client drops the connection)
};
std::string_view to_string(chaos_fault f) noexcept;
/// Every fault, in declaration order.
std::vector<chaos_fault> all_chaos_faults();

/// One fault of a schedule.
struct chaos_step {
    /// The fault to inject.
    chaos_fault fault = chaos_fault::kill_leader;
    std::size_t target = 0;                  ///< client or node index (see chaos_fault)
    std::chrono::milliseconds duration{0};   ///< how long the fault lasts (0 for instant ones)
    std::chrono::milliseconds quiet{0};      ///< time without a fault after it ends
    /// Equal when every field is.
    friend bool operator==(const chaos_step&, const chaos_step&) = default;
};
/// "kill_leader for 1200 ms, then 800 ms quiet" and the like.
std::string describe(const chaos_step& step);

/// What a schedule draws from.
struct chaos_schedule_options {
    /// The faults to draw from.
    std::vector<chaos_fault> faults = all_chaos_faults();
    std::size_t clients = 6;  ///< targets of client faults: [0, clients)
    std::size_t nodes = 3;    ///< targets of server faults: [0, nodes); node faults need nodes > 1, except pause_server
    std::chrono::milliseconds min_duration{500};  ///< a fault lasts at least this long
    std::chrono::milliseconds max_duration{4000}; ///< and at most this long
    std::chrono::milliseconds min_quiet{500};     ///< the quiet after a fault lasts at least this long
    std::chrono::milliseconds max_quiet{3000};    ///< and at most this long
    /// Leaves out the faults that need iptables (blackhole_client, partition_leader).
    chaos_schedule_options& without_iptables();
};
/// The next step drawn from `rng`. Instant faults (reset_client,
/// drop_create_reply, expire_session) get duration 0. Throws
/// std::invalid_argument when no fault fits the options.
chaos_step next_chaos_step(std::mt19937_64& rng, const chaos_schedule_options& options);
/// `count` steps drawn from a generator seeded with `seed`.
std::vector<chaos_step> chaos_schedule(std::uint64_t seed, const chaos_schedule_options& options, std::size_t count);

/// A FaultyLink::drop_next_reply() needle that only a lock node's create
/// request holds: its path ends with the marker "-lock-" (the server appends the
/// sequence number) followed by the high bytes of the node data's length, where
/// a getData, exists or delete of a queue node has the sequence digits. (A
/// needle of the lock path would catch a waiter's getData of its predecessor.)
std::string lock_create_needle();

// ---- verdicts (pure) ------------------------------------------------------------

/// What a run ended with, for chaos_violations() and chaos_line().
struct chaos_outcome {
    /// The safety ledger's verdict of the run.
    safety_summary summary;
    std::size_t leftovers = 0;                ///< lock nodes left once every client released
    std::vector<std::string> leftover_nodes;  ///< their names
    std::vector<std::string> hung;            ///< clients that did not finish a step by its deadline
    std::vector<std::string> stalled;         ///< clients that did not enter again after the last fault
    std::vector<std::string> failed_acquires; ///< "client: error" of acquires that failed (not a timeout)
    std::vector<std::string> wrong_losses;    ///< "client: reason" of losses no fault of the run can cause
    std::uint64_t faults = 0;                 ///< faults applied
};
/// Every pass condition the outcome breaks, in words; empty when it passes.
std::vector<std::string> chaos_violations(const chaos_outcome& outcome);
/// One line: "faults=N grants=N accepted=N refused=N overlaps=N
/// unexplained_overlaps=N lost=N stale_unfenced=N duplicate_tokens=N
/// longest_gap_ms=N leftovers=N hung=N stalled=N budgeted=N inside_budget=N".
std::string chaos_line(const chaos_outcome& outcome);

// ---- clients ----------------------------------------------------------------------

/// Which recipe the clients loop on.
enum class chaos_recipe {
    mutex,            ///< Mutex: acquire, write, release
    leader_election,  ///< LeaderElection: campaign, write with the epoch, async_resign
    semaphore,        ///< Semaphore (permits): acquire a lease, release it; no writes
};
std::string_view to_string(chaos_recipe r) noexcept;

/// What one ChaosClient does: which recipe on which path, its deadlines, its critical section.
struct ChaosClientOptions {
    /// The lock's path.
    std::string path = "/zklock-chaos/lock";
    /// Which recipe the client loops on.
    chaos_recipe recipe = chaos_recipe::mutex;
    std::size_t permits = 2;  ///< semaphore only
    /// Each acquire's deadline (async_try_lock_for, or a cancelled campaign).
    std::chrono::milliseconds acquire_timeout{5000};
    /// Beyond its own deadline, how long a library call may take before the
    /// client counts as hung (it then stops).
    std::chrono::milliseconds hang_margin{20000};
    /// How long a release may take to complete (the session owns the delete:
    /// across a partition, until it heals or the session ends).
    std::chrono::milliseconds release_timeout{30000};
    /// Writes per critical section (at least 2: the freeze catches a holder between them).
    std::size_t writes = 2;
    /// Each section holds a random 0..max_hold between its writes (the work).
    std::chrono::milliseconds max_hold{5};
};

/// One client: a Session on its own thread and a worker thread looping on one
/// lock: acquire (with a deadline), record enter(name, token) in the ledger,
/// write `writes` times (each write first checks it still holds: a client told
/// of its loss stops), leave, release (async, with a deadline), and when the
/// release says the lock was already gone, or a loss was reported during the
/// section, record lost(). Loss reasons are kept (losses()).
///
/// freeze() stops both the session (SessionFreeze) and the worker (at its next
/// step), as SIGSTOP would stop a process holding them; thaw() lets the worker
/// take its next step first (a holder's late write) and then the session.
class ChaosClient {
public:
    /// Connects (throws as Session::connect) but does not start the worker.
    ChaosClient(std::string name, SessionOptions session, ChaosClientOptions options, SafetyLedger& ledger,
                std::uint64_t seed);
    /// stop(), then closes the session.
    ~ChaosClient();
    ChaosClient(const ChaosClient&) = delete;
    ChaosClient& operator=(const ChaosClient&) = delete;

    /// Starts the worker thread (the session is connected by the constructor).
    void start();
    /// Asks the worker to stop after its current step (thaws it first); does not wait.
    void request_stop();
    /// Asks the worker to stop after its current step (it releases what it
    /// holds) and waits up to `timeout`; false, and hung() true, when it did
    /// not finish. The session stays open.
    bool stop(std::chrono::milliseconds timeout);

    /// The client's name in the ledger and in reports.
    [[nodiscard]] const std::string& name() const noexcept { return name_; }
    /// The client's Session (for faults aimed at it).
    [[nodiscard]] Session& session() noexcept { return *session_; }
    /// Critical sections entered so far.
    [[nodiscard]] std::uint64_t grants() const noexcept { return grants_.load(); }
    /// True while in its critical section (between enter and leave/lost).
    [[nodiscard]] bool in_section() const noexcept { return in_section_.load(); }
    /// Its place in the queue as it last read it (0 = first), -1 when not queued.
    [[nodiscard]] std::int64_t queue_position() const noexcept { return position_.load(); }
    /// The token of the current (or last) section.
    [[nodiscard]] std::int64_t token() const noexcept { return token_.load(); }
    /// The client stopped because a step passed its deadline; what it was doing.
    [[nodiscard]] bool hung() const noexcept { return hung_.load(); }
    /// Where the client hung (empty when it did not).
    [[nodiscard]] std::string hung_in() const;
    /// One line of what the client is doing now, for a run that stalls:
    /// grants, section, token, queue position, session state, freeze gate,
    /// steps taken, and where it hung.
    [[nodiscard]] std::string describe_state() const;
    /// Reasons of reported losses (and releases that found the lock gone), with counts.
    [[nodiscard]] std::map<std::string, std::uint64_t> losses() const;
    /// Acquires that failed with an error, as "error message" with counts.
    [[nodiscard]] std::map<std::string, std::uint64_t> failed_acquires() const;

    /// Freezes the worker at its next step (waiting for it to get there, at
    /// most acquire_timeout + hang_margin), then the session (see the class).
    /// No-op when frozen.
    /// With `with_session` false only the worker stops: a holder busy in its
    /// critical section while its session runs on.
    void freeze(bool with_session = true);
    /// True once the worker is held at a step; `in_section` says whether it
    /// was inside its critical section there.
    [[nodiscard]] bool worker_frozen(bool* in_section = nullptr) const;
    /// Expires the frozen session on the server (SessionFreeze::expire).
    void expire_frozen();
    /// Lets the worker take one step (a late write, if it was in its section),
    /// waits (bounded) until it has, then lets the session run. No-op when not frozen.
    void thaw();
    /// True while freeze() holds the client.
    [[nodiscard]] bool frozen() const noexcept { return frozen_.load(); }

    /// Runs `before` on the worker's thread right before its next release and
    /// `after` right after the release was requested (before its completion is
    /// awaited): e.g. freeze the session in `before` and expire it in `after`,
    /// so the session expires with the release in flight. Once.
    void around_next_release(std::function<void()> before, std::function<void()> after);
    /// The same around the next acquire: `after` runs once the acquire was
    /// requested, before its completion is awaited.
    void around_next_acquire(std::function<void()> before, std::function<void()> after);

    /// The last loss reported to the client (on_lost, or a release that found
    /// the lock gone): its reason and when the client heard of it.
    struct loss_report {
        /// The loss reason, in words.
        std::string reason;
        /// When the client heard of it.
        std::chrono::steady_clock::time_point at;
    };
    /// The last loss reported, if any.
    [[nodiscard]] std::optional<loss_report> last_loss() const;

private:
    void run();
    void run_mutex();
    void run_election();
    void run_semaphore();
    // The freeze point of the worker: waits while frozen; returns false when stopping.
    bool step(bool in_section);
    void hold_a_little();
    // A write or the end of a section happened (thaw() waits for the first after a gate).
    void acted();
    void backoff();
    void count_loss(const std::string& reason);
    void count_failure(const std::string& reason);
    // Records where the worker hung and, while its lock object still exists,
    // what the library was doing there (describe_internals).
    void set_hung(std::string where);
    // The session's and the current Mutex's internals, in words.
    std::string internals() const;
    // Runs `request` between the hooks set for the next acquire (or release),
    // which are used once.
    void between_hooks(bool release, const std::function<void()>& request);
    // A failed acquire: counted; false when the session is closed (the worker
    // stops), otherwise true after a short backoff.
    bool retry_after_failure(std::error_code ec);
    // One critical section, as the ledger sees it.
    struct section {
        SafetyLedger::section_id id = 0;
        bool lost = false;  // told (or found) during the section
    };
    // An on_lost report: counted, and noticed by the section it ends.
    void watch_losses(std::error_code ec);
    // Enters with `token`; writes (when `write`) while `still_held()` and no
    // loss was reported; leaves, or records the loss. The budget `safe_for()`
    // gives (Lock::safe_for()) goes to the ledger as the section starts and
    // before each step.
    section hold_section(std::int64_t token, const std::function<bool()>& still_held, bool write,
                         const std::function<std::optional<std::chrono::milliseconds>()>& safe_for);
    // Releases through `release`, between the release hooks; a release that
    // finds the lock gone records a loss in `held`. False when it hung (named `what`).
    bool release_section(std::optional<section> held, std::string_view what,
                         const std::function<void(std::function<void(std::error_code)>)>& release);

    std::string name_;
    ChaosClientOptions options_;
    SafetyLedger& ledger_;
    std::unique_ptr<Session> session_;
    std::mt19937_64 rng_;
    std::thread worker_;
    std::atomic<bool> stopping_{false};
    std::atomic<bool> done_{false};
    std::atomic<bool> hung_{false};
    std::atomic<std::uint64_t> grants_{0};
    std::atomic<bool> in_section_{false};
    std::atomic<std::int64_t> token_{0};
    std::atomic<std::int64_t> position_{-1};
    std::atomic<std::uint64_t> lost_reports_{0};  // on_lost calls so far
    std::atomic<bool> frozen_{false};

    mutable std::mutex m_;
    std::condition_variable cv_;
    bool gate_closed_ = false;      // the worker waits at its next step
    bool worker_held_ = false;      // ... and is there now
    bool held_in_section_ = false;
    std::uint64_t steps_ = 0;       // steps taken (thaw waits for the next)
    std::unique_ptr<SessionFreeze> session_freeze_;
    std::string hung_in_;
    std::map<std::string, std::uint64_t> losses_;
    std::map<std::string, std::uint64_t> failures_;
    std::function<void()> before_release_, after_release_, before_acquire_, after_acquire_;
    std::optional<loss_report> last_loss_;
    std::string internals_at_hang_;

    mutable std::mutex mutex_m_;  // guards mutex_ (set while run_mutex's Mutex exists)
    const Mutex* mutex_ = nullptr;
};

// ---- a whole run ------------------------------------------------------------------

/// A chaos run: the ensemble, the clients and the schedule's bounds.
struct ChaosOptions {
    /// Servers: 3 (default) an ensemble, 1 a standalone server.
    std::size_t nodes = 3;
    /// How many clients loop on the lock.
    std::size_t clients = 6;
    /// Session timeout the clients ask for (tickTime 100 ms: 200 ms to 4 s).
    std::chrono::milliseconds session_timeout{1500};
    /// Each client talks to every server through a FaultyLink of its own, for
    /// the client faults (blackhole, reset, lost reply, delay). Default on.
    bool links = true;
    /// What every client does.
    ChaosClientOptions client;
    /// Progress lines (each fault as applied, waits); default: none.
    std::function<void(const std::string&)> log;
};

/// Servers, clients and a ledger for one run. Starts the servers and connects
/// the clients (workers not started yet). Destruction stops the clients
/// (bounded), closes their sessions, heals and stops everything: no process,
/// iptables rule, link or directory is left.
class ChaosCluster {
public:
    /// Starts the ensemble and the clients; `seed` draws the schedule (printed, to replay a run).
    ChaosCluster(ChaosOptions options, std::uint64_t seed);
    ~ChaosCluster();
    ChaosCluster(const ChaosCluster&) = delete;
    ChaosCluster& operator=(const ChaosCluster&) = delete;

    /// The ensemble the faults hit.
    [[nodiscard]] Ensemble& ensemble() noexcept { return *ensemble_; }
    /// The clients, in index order.
    [[nodiscard]] std::size_t clients() const noexcept { return clients_.size(); }
    /// Client `i` (the target index of client faults).
    [[nodiscard]] ChaosClient& client(std::size_t i) { return *clients_.at(i); }
    /// Client i's link to node n (options.links only).
    [[nodiscard]] FaultyLink& link(std::size_t client, std::size_t node);
    /// The ledger every client writes to.
    [[nodiscard]] SafetyLedger& ledger() noexcept { return ledger_; }
    /// A session straight to the servers (no link), for checks.
    [[nodiscard]] Session& observer() noexcept { return *observer_; }
    /// The options the cluster was made with.
    [[nodiscard]] const ChaosOptions& options() const noexcept { return options_; }
    /// The generator seeded with the run's seed.
    [[nodiscard]] std::mt19937_64& rng() noexcept { return rng_; }

    /// Starts every client's worker.
    void start();
    /// Applies one fault: injects it, waits its duration (a frozen holder is
    /// thawed as soon as another client has written with a newer token),
    /// heals it (restarts, heals partitions, waits for a quorum), then waits the
    /// quiet time. Returns what was done, in words. Throws std::runtime_error
    /// when the servers do not come back.
    std::string apply(const chaos_step& step);
    /// Waits until every client has entered its critical section once more
    /// than when called (bounded); returns the names of those that did not.
    std::vector<std::string> wait_for_progress(std::chrono::milliseconds timeout);
    /// Every client's describe_state(), one line each.
    [[nodiscard]] std::vector<std::string> describe_clients() const;
    /// Stops the workers (each releases), waits (bounded) until the lock path
    /// holds no node while the sessions are still open, and judges.
    /// `stalled` is passed through to the outcome (wait_for_progress()'s answer).
    chaos_outcome finish(std::vector<std::string> stalled = {},
                         std::chrono::milliseconds timeout = std::chrono::seconds(30));
    /// Faults applied so far.
    [[nodiscard]] std::uint64_t faults() const noexcept { return faults_; }

private:
    void log(const std::string& line) const;
    std::string freeze_a_holder(std::size_t fallback, std::chrono::milliseconds duration);

    ChaosOptions options_;
    std::mt19937_64 rng_;
    SafetyLedger ledger_;
    std::unique_ptr<Ensemble> ensemble_;
    std::vector<std::vector<std::unique_ptr<FaultyLink>>> links_;  // [client][node]
    std::unique_ptr<Session> observer_;
    std::vector<std::unique_ptr<ChaosClient>> clients_;
    std::uint64_t faults_ = 0;
    bool finished_ = false;
};

}  // namespace zklock::lab
