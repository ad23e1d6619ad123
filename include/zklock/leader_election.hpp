// zklock::LeaderElection: one leader among many participants, for leader-only work.
#pragma once

#include <zklock/acl.hpp>
#include <zklock/export.hpp>
#include <zklock/guarded_write.hpp>
#include <zklock/lock_events.hpp>
#include <zklock/lock_stats.hpp>
#include <zklock/node_names.hpp>
#include <zklock/queue_lock.hpp>
#include <zklock/revocation.hpp>
#include <zklock/session.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/async_result.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <system_error>
#include <vector>

namespace zklock {

/// A term as leader, as returned by campaign().
struct Leadership {
    /// The czxid of our election node: a fencing token that increases with every
    /// new leader (on the whole ensemble). Give it to whatever the leader writes to.
    std::int64_t epoch = 0;
    std::string node;            ///< full path of our election node
    std::string participant_id;  ///< our id, as given to the constructor
};

/// Who leads an election now.
struct LeaderInfo {
    std::string participant_id;  ///< the data of the lowest node (empty while a revocation request replaces it)
    std::int64_t epoch = 0;      ///< its czxid
    std::string node;            ///< its name
    /// A revocation request is pending on the leader's node (revoke_leader(),
    /// request_revocation()): the request replaced its data, the id with it.
    bool revocation_requested = false;
    /// Equal when every field is.
    friend bool operator==(const LeaderInfo&, const LeaderInfo&) = default;
};

/// Options of a LeaderElection.
struct LeaderElectionOptions {
    /// ACL of the election's nodes, its directory and the container parents.
    /// Default (none): the session's policy, SessionOptions::acl.
    std::optional<acl_list> acl;
    /// How our election node is named, so that a peer library's election on the
    /// same path waits for it (zklock/node_names.hpp). Default node_names::zklock:
    /// `_c_<uuid>-lock-<seq>`, which Apache Curator's LeaderSelector counts;
    /// node_names::curator: `_c_<uuid>-latch-<seq>`, counted by Curator's
    /// LeaderLatch (and not by LeaderSelector); node_names::kazoo:
    /// `<32 hex>__lock__<seq>`, counted by kazoo's Election. zklock counts every
    /// peer's nodes whatever this says.
    node_names names = node_names::zklock;
    /// Lock-delay, as MutexOptions::lock_delay: after a leader is lost without
    /// resigning, the next one waits this long before it leads.
    std::chrono::milliseconds lock_delay{0};
    /// Cooperative revocation of a term (MutexOptions::revocable): a leader
    /// asked to step down (revoke_leader(), request_revocation(), `zklock
    /// revoke`) does so when on: it resigns, and the term ends as a loss with
    /// errc::revoked (on_lost, async_wait_lost, the stop_token of
    /// run_as_leader(), which then campaigns again, at the back of the line,
    /// unless RunAsLeaderOptions::rejoin is false). Off (the default): the
    /// request is reported (lock_event revocation_requested) and ignored.
    bool revocable = false;
    /// With `revocable`: the handler instead of resigning, as
    /// MutexOptions::on_revocation; the term lasts until someone resigns.
    revocation_handler on_revocation;
};

/// Options of run_as_leader().
struct RunAsLeaderOptions {
    /// Campaign again after each term (after the task returns or leadership is
    /// lost). Default true.
    bool rejoin = true;
};

/// Leader election on the lock queue: the participant whose node is first leads;
/// the others wait in line, each watching only the node ahead of it, so a leader
/// that resigns or dies hands over to exactly one successor, in arrival order.
///
/// The leader is told when leadership is lost (session expired, node deleted,
/// connection suspended past the session timeout): on_lost(), async_wait_lost(),
/// is_leader() turning false, and the stop_token of run_as_leader(). A reconnect
/// within the session timeout is not a loss and does not start a new election: the
/// node stays, so does the leader. Before leadership is granted the engine checks
/// that the first node's ephemeral owner is this session, so a node left by an
/// expired session never makes us leader by mistake.
///
/// Thread-safety: members may be called from any thread.
class ZKLOCK_EXPORT LeaderElection {
public:
    /// `participant_id` is stored as our node's data: leader() and observers see it.
    /// Throws zklock::error: errc::invalid_path for a bad path, errc::invalid_argument
    /// for an id too large for one request to the server or an invalid ACL.
    LeaderElection(Session& session, std::string path, std::string participant_id,
                   LeaderElectionOptions options = {});
    /// Same, reporting bad input in `ec` (every campaign then fails with that
    /// error, and failure_detail() says why).
    LeaderElection(Session& session, std::string path, std::string participant_id, LeaderElectionOptions options,
                   std::error_code& ec);
    /// Moves the participant (leading or not); the moved-from object may only
    /// be destroyed or assigned to.
    LeaderElection(LeaderElection&&) noexcept = default;
    /// Resigns (or leaves the line), then takes `other`'s place.
    LeaderElection& operator=(LeaderElection&&) noexcept = default;

    /// Blocks until we lead. Throws zklock::error on failure.
    Leadership campaign();
    /// As above; errors in `ec` instead of thrown.
    Leadership campaign(std::error_code& ec);

    /// Completes when we lead. Signature: void(std::error_code, Leadership).
    /// Cancellation (terminal, partial, total): we leave the queue, no node is left.
    template <class CompletionToken> auto async_campaign(CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, void(std::error_code, Leadership)>(
            [this](auto handler) { async_campaign_impl(std::move(handler)); }, token);
    }

    /// Gives up leadership, or our place in line (a pending campaign then completes
    /// with std::errc::operation_canceled), at once: the next participant takes over
    /// without waiting for any timeout. Never throws.
    void resign() noexcept;
    /// Resigns and completes when the server has deleted our node: the next
    /// participant leads from then on. Signature: void(std::error_code): {}
    /// when we led; errc::not_held when we did not lead (a pending campaign is
    /// given up and completes with std::errc::operation_canceled);
    /// session_expired, session_closed or node_deleted when the term had
    /// already been lost.
    template <class CompletionToken> auto async_resign(CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, void(std::error_code)>(
            [this](auto handler) { async_resign_impl(std::move(handler)); }, token);
    }
    /// True while this participant leads.
    bool is_leader() const noexcept { return candidate_.is_held(); }
    /// How much longer our term is certainly safe (Lock::safe_for()); zero
    /// when we do not lead.
    std::optional<std::chrono::milliseconds> safe_for() const noexcept { return candidate_.safe_for(); }
    /// Why the last failed campaign failed, in words (as Lock::failure_detail()).
    std::string failure_detail() const { return candidate_.failure_detail(); }
    /// Commits `ops` in one ZooKeeper transaction that also checks that our
    /// node still exists: all of them while we lead, none once we do not
    /// (see commit_guarded() in guarded_write.hpp for the errors).
    /// errc::not_held, and nothing sent, when this object does not lead.
    /// Blocking. Errors: thrown as zklock::error, or in `ec`.
    ///@{
    guarded_result commit_guarded(const std::vector<guarded_op>& ops);
    guarded_result commit_guarded(const std::vector<guarded_op>& ops, std::error_code& ec);
    ///@}
    /// Our current term, if we lead.
    std::optional<Leadership> leadership() const;
    /// Asks the current leader to step down (cooperative revocation,
    /// revocation.hpp): writes a revocation request into its node. Returns the
    /// node asked (full path); none when nobody leads or we lead (we are never
    /// asked). A revocable leader resigns (or calls its handler); another keeps
    /// leading. Blocking. Errors: thrown as zklock::error, or in `ec` (as
    /// request_revocation()); a leader gone before the request is not an error.
    ///@{
    std::optional<std::string> revoke_leader();
    std::optional<std::string> revoke_leader(std::error_code& ec);
    ///@}

    /// Called with the reason every time leadership is lost (not on resign()).
    void on_lost(std::function<void(std::error_code)> callback) { candidate_.on_lost(std::move(callback)); }
    /// As Lock::async_wait_lost, for the current term.
    template <class CompletionToken> auto async_wait_lost(CompletionToken&& token) {
        return candidate_.async_wait_lost(std::forward<CompletionToken>(token));
    }

    /// The current leader, read from the server (blocking); none when nobody leads.
    std::optional<LeaderInfo> leader() const;
    /// As above; errors in `ec` instead of thrown.
    std::optional<LeaderInfo> leader(std::error_code& ec) const;

    /// Completes when the leader differs from `known` (by epoch; pass nullopt to
    /// learn the current leader, or to wait for one when nobody leads). Watches
    /// only the first node of the queue, so observers cause no herd.
    /// Signature: void(std::error_code, std::optional<LeaderInfo>).
    /// Cancellation: terminal, partial, total.
    template <class CompletionToken>
    auto async_wait_leader_change(std::optional<LeaderInfo> known, CompletionToken&& token) {
        return boost::asio::async_initiate<CompletionToken, void(std::error_code, std::optional<LeaderInfo>)>(
            [this, known = std::move(known)](auto handler) mutable {
                async_wait_leader_change_impl(std::move(known), std::move(handler));
            },
            token);
    }

    /// Runs `task(stop, term)` on the calling thread each time we lead. `stop` is
    /// requested the moment leadership is lost (or `outer` is); the task should
    /// return promptly then. After the task returns we resign if still leading,
    /// and with options.rejoin campaign again; returns when `outer` is stopped or,
    /// without rejoin, after one term. Errors other than loss throw zklock::error,
    /// among them errc::session_closed when the session is closed (it cannot
    /// campaign again) and errc::would_deadlock on the session's own thread. An
    /// exception from `task` resigns and propagates. A term lost before the task
    /// could start (the calling thread woke after the session had expired) does
    /// not start the task: it counts as a term that ended at once.
    void run_as_leader(const std::function<void(std::stop_token, const Leadership&)>& task,
                       RunAsLeaderOptions options = {}, std::stop_token outer = {});

    /// The election's path.
    const std::string& path() const noexcept { return candidate_.path(); }
    /// This participant's id (stored in its node).
    const std::string& participant_id() const noexcept { return participant_id_; }
    /// Our place in line as of the last listing (0 = leading); none when not
    /// campaigning.
    std::optional<std::size_t> queue_position() const noexcept { return candidate_.queue_position(); }
    /// Calls `callback(position)` on the session's executor whenever our place
    /// in line changes (as QueueLock::on_queue_position).
    void on_queue_position(std::function<void(std::size_t)> callback) { candidate_.on_queue_position(std::move(callback)); }
    /// Calls `callback(event)` on the session's executor for each event of
    /// this participant's campaigns, as QueueLock::on_event: queued (in line),
    /// moved, granted (elected: the wait, the epoch as fencing_token), released
    /// (resigned: the term's length), lost, left (a campaign that ended
    /// without leading). Register before campaigning.
    void on_event(std::function<void(const lock_event&)> callback) { candidate_.on_event(std::move(callback)); }
    /// Our node's full path while campaigning or leading; empty otherwise.
    std::string node_path() const { return candidate_.node_path(); }
    /// Counters of the last campaign (as Lock::stats()).
    lock_stats stats() const { return candidate_.stats(); }

private:
    void async_campaign_impl(boost::asio::any_completion_handler<void(std::error_code, Leadership)> handler);
    void async_resign_impl(boost::asio::any_completion_handler<void(std::error_code)> handler);
    void async_wait_leader_change_impl(
        std::optional<LeaderInfo> known,
        boost::asio::any_completion_handler<void(std::error_code, std::optional<LeaderInfo>)> handler);
    Leadership term() const;
    LeaderElection(Session& session, std::string path, std::string participant_id, LeaderElectionOptions options,
                   std::error_code* ec);

    std::string participant_id_;
    QueueLock candidate_;  // our place in the election's queue
};

} // namespace zklock
