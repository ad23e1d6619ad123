#include <zklock/leader_election.hpp>

#include "engine/contender.hpp"
#include "engine/engine_access.hpp"
#include "session/session_access.hpp"
#include "recipes/queue_factory.hpp"
#include "session/session_impl.hpp"

#include "fsm/reply_kind.hpp"
#include "fsm/lock_node.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>

#include <future>
#include <stop_token>

namespace zklock {
namespace asio = boost::asio;

namespace detail {

// The leader as its node says: a revocation request replaces the id it stored.
LeaderInfo leader_info(std::string data, std::int64_t epoch, std::string node) {
    LeaderInfo info{std::move(data), epoch, std::move(node)};
    if (is_revocation_request(info.participant_id)) {
        info.participant_id.clear();
        info.revocation_requested = true;
    }
    return info;
}

/// One wait for the leader to differ from a known one: lists the queue, reads the
/// first node with a data watch (the only node observers watch), and repeats when
/// it changes. A child watch is set only while nobody leads, a directory watch
/// only while the election does not exist.
class leader_watch : public std::enable_shared_from_this<leader_watch> {
public:
    using callback = std::function<void(std::error_code, std::optional<LeaderInfo>)>;

    leader_watch(std::shared_ptr<session_impl> s, std::string dir, std::optional<LeaderInfo> known, callback cb)
        : session_(std::move(s)), dir_(std::move(dir)), known_(std::move(known)), callback_(std::move(cb)) {}

    ~leader_watch() { session_->remove_listener(listener_); }

    void start(asio::cancellation_slot slot) {
        // The watches set below hold this object; a closed session drops them,
        // so the close must complete the wait.
        listener_ = session_->add_listener([weak = weak_from_this()](session_event e, std::int64_t) {
            auto self = weak.lock();
            if (!self) return;
            if (e == session_event::closed) self->finish(make_error_code(errc::session_closed), {});
            else if (e == session_event::expired) self->step();  // its watches died with the handle
        });
        if (slot.is_connected()) {
            slot.assign([weak = weak_from_this()](asio::cancellation_type) {
                if (auto self = weak.lock()) self->session_->post([self] { self->finish(operation_aborted(), {}); });
            });
        }
        session_->post([self = shared_from_this()] { self->step(); });
    }

private:
    void step() {
        if (done_) return;
        session_->when_connected([self = shared_from_this()](std::error_code ec) {
            if (ec) return self->finish(ec, {});
            self->list();
        });
    }

    std::function<void(int)> rewatch() {
        return [self = shared_from_this()](int) { self->step(); };
    }

    void retry_or_fail(int rc) {
        const auto k = detail::classify_reply(rc);
        if (k == detail::reply_kind::retry || k == detail::reply_kind::session_gone)
            return step();  // when_connected waits for the (new) session
        finish(detail::reply_error(rc), {});
    }

    void list() {
        auto self = shared_from_this();
        session_->get_children(dir_, [self](int rc, std::vector<std::string> children) {
            if (self->done_) return;
            if (rc == ZNONODE) return self->wait_for_dir();
            if (rc != ZOK) return self->retry_or_fail(rc);
            const auto sorted = sorted_contenders(children);
            if (sorted.empty()) return self->nobody_leads();
            self->read_first(sorted.front().name);
        });
    }

    void nobody_leads() {
        if (known_) return finish({}, std::nullopt);
        auto self = shared_from_this();
        session_->get_children_watch(dir_, rewatch(), [self](int rc, std::vector<std::string> children) {
            if (self->done_) return;
            if (rc == ZNONODE) return self->wait_for_dir();
            if (rc != ZOK) return self->retry_or_fail(rc);
            if (!sorted_contenders(children).empty()) self->step();  // someone arrived meanwhile
        });
    }

    void wait_for_dir() {
        if (known_) return finish({}, std::nullopt);
        auto self = shared_from_this();
        session_->exists(dir_, rewatch(), [self](int rc, const node_stat&) {
            if (self->done_) return;
            if (rc == ZOK) return self->step();  // created meanwhile
            if (rc != ZNONODE) self->retry_or_fail(rc);
        });
    }

    void read_first(const std::string& name) {
        auto self = shared_from_this();
        session_->get_data(dir_ + "/" + name, rewatch(), [self, name](int rc, std::string data, const node_stat& st) {
            if (self->done_) return;
            if (rc == ZNONODE) return self->step();  // left meanwhile
            if (rc != ZOK) return self->retry_or_fail(rc);
            LeaderInfo info = leader_info(std::move(data), st.czxid, name);
            if (!self->known_ || self->known_->epoch != info.epoch) self->finish({}, std::move(info));
            // Otherwise the data watch on the leader's node wakes us.
        });
    }

    void finish(std::error_code ec, std::optional<LeaderInfo> info) {
        if (done_) return;
        done_ = true;
        session_->remove_listener(listener_);
        auto cb = std::exchange(callback_, nullptr);
        cb(ec, std::move(info));
    }

    std::shared_ptr<session_impl> session_;
    std::string dir_;
    std::optional<LeaderInfo> known_;
    callback callback_;
    bool done_ = false;
    std::uint64_t listener_ = 0;
};

} // namespace detail

namespace {
// The session state our place in the queue keeps alive.
const std::shared_ptr<detail::session_impl>& session_of(const QueueLock& place) {
    return detail::engine_access::engine(place)->session();
}

MutexOptions participant(std::string id, LeaderElectionOptions options) {
    MutexOptions o;
    o.node_data = std::move(id);
    o.acl = std::move(options.acl);
    o.names = options.names;
    o.lock_delay = options.lock_delay;
    // Curator's LeaderLatch, the one peer that reads these names, acts on its
    // predecessor's deletion only: a release mark would leave it waiting.
    o.mark_release = options.names != node_names::curator;
    o.revocable = options.revocable;
    o.on_revocation = std::move(options.on_revocation);
    return o;
}

detail::queue_rule candidate() {
    detail::queue_rule rule;
    rule.role = detail::node_role::leader;  // Curator's naming spells it as LeaderLatch does
    return rule;
}
} // namespace

LeaderElection::LeaderElection(Session& session, std::string path, std::string participant_id,
                               LeaderElectionOptions options, std::error_code* ec)
    : participant_id_(participant_id),
      candidate_(detail::make_queue_lock(
          detail::session_access::session(session),
          detail::request_of(std::move(path), participant(std::move(participant_id), std::move(options)), candidate()),
          ec)) {}

LeaderElection::LeaderElection(Session& session, std::string path, std::string participant_id,
                               LeaderElectionOptions options)
    : LeaderElection(session, std::move(path), std::move(participant_id), std::move(options), nullptr) {}

LeaderElection::LeaderElection(Session& session, std::string path, std::string participant_id,
                               LeaderElectionOptions options, std::error_code& ec)
    : LeaderElection(session, std::move(path), std::move(participant_id), std::move(options), &ec) {}

Leadership LeaderElection::term() const { return Leadership{candidate_.fencing_token(), candidate_.node_path(), participant_id_}; }

std::optional<Leadership> LeaderElection::leadership() const {
    auto t = term();
    if (!candidate_.is_held() || t.epoch == 0) return std::nullopt;
    return t;
}

Leadership LeaderElection::campaign(std::error_code& ec) {
    candidate_.lock(ec);
    return ec ? Leadership{} : term();
}

Leadership LeaderElection::campaign() {
    std::error_code ec;
    auto t = campaign(ec);
    throw_if(ec, ("zklock::LeaderElection::campaign " + path()).c_str());
    return t;
}

void LeaderElection::resign() noexcept { detail::engine_access::engine(candidate_)->shutdown(); }

void LeaderElection::async_resign_impl(asio::any_completion_handler<void(std::error_code)> handler) {
    if (candidate_.is_held()) return candidate_.async_unlock(std::move(handler));  // not_held if lost meanwhile
    resign();  // a pending campaign, if any, completes with operation_canceled
    detail::post_completion(std::move(handler), session_of(candidate_)->user_executor(), make_error_code(errc::not_held));
}

void LeaderElection::async_campaign_impl(asio::any_completion_handler<void(std::error_code, Leadership)> handler) {
    const auto slot = asio::get_associated_cancellation_slot(handler);
    auto ex = session_of(candidate_)->user_executor();
    // The completion may run after this object is gone: it reads the term from the
    // queue place it keeps alive, not from `this`.
    auto user_ex = asio::get_associated_executor(handler, ex);  // where the slot is detached (see Semaphore)
    candidate_.async_lock(asio::bind_cancellation_slot(
        slot, asio::bind_executor(user_ex, [engine = detail::engine_access::engine(candidate_), id = participant_id_, ex,
                                            h = std::move(handler)](std::error_code ec) mutable {
            Leadership term;
            if (!ec) term = Leadership{engine->fencing_token(), engine->node_path(), id};
            detail::post_completion(std::move(h), ex, ec, std::move(term));
        })));
}

void LeaderElection::async_wait_leader_change_impl(
    std::optional<LeaderInfo> known,
    asio::any_completion_handler<void(std::error_code, std::optional<LeaderInfo>)> handler) {
    const auto slot = asio::get_associated_cancellation_slot(handler);
    auto ex = session_of(candidate_)->user_executor();
    auto shared = std::make_shared<decltype(handler)>(std::move(handler));
    auto watch = std::make_shared<detail::leader_watch>(
        session_of(candidate_), path(), std::move(known), [shared, ex](std::error_code ec, std::optional<LeaderInfo> info) {
            detail::post_completion(std::move(*shared), ex, ec, std::move(info));
        });
    watch->start(slot);
}

std::optional<LeaderInfo> LeaderElection::leader(std::error_code& ec) const {
    const auto queue = detail::list_contenders(session_of(candidate_), path(), ec);
    if (ec || queue.empty()) return std::nullopt;
    return detail::leader_info(queue.front().data, queue.front().fencing_token, queue.front().node);
}

std::optional<LeaderInfo> LeaderElection::leader() const {
    std::error_code ec;
    auto info = leader(ec);
    throw_if(ec, ("zklock::LeaderElection::leader " + path()).c_str());
    return info;
}

void LeaderElection::run_as_leader(const std::function<void(std::stop_token, const Leadership&)>& task,
                                   RunAsLeaderOptions options, std::stop_token outer) {
    if (session_of(candidate_)->on_session_thread())
        throw error(make_error_code(errc::would_deadlock), "zklock::LeaderElection::run_as_leader");
    while (!outer.stop_requested()) {
        std::promise<std::pair<std::error_code, Leadership>> p;
        auto f = p.get_future();
        auto cancel = std::make_shared<asio::cancellation_signal>();
        async_campaign(asio::bind_cancellation_slot(cancel->slot(), [&p](std::error_code ec, Leadership l) {
            p.set_value({ec, std::move(l)});
        }));
        {
            // Stopping `outer` cancels the campaign; the signal is emitted on the
            // session's executor, where the operation completes.
            std::stop_callback on_outer(outer, [cancel, ex = session_of(candidate_)->user_executor()] {
                asio::post(ex, [cancel] { cancel->emit(asio::cancellation_type::terminal); });
            });
            f.wait();
        }
        auto [ec, term] = f.get();
        if (ec == std::errc::operation_canceled) return;
        throw_if(ec, ("zklock::LeaderElection::run_as_leader " + path()).c_str());
        if (!is_leader()) {
            // The term was lost before this thread got to run the task (a slow
            // wake-up, the session expired meanwhile; a newer leader may already
            // lead): a leader-only task never starts on a term already lost.
            resign();
            if (!options.rejoin) return;
            continue;
        }

        std::stop_source stop;
        std::stop_callback forward(outer, [&stop] { stop.request_stop(); });
        std::promise<void> lost_done;
        candidate_.async_wait_lost([&stop, &lost_done](std::error_code lost) {
            if (lost) stop.request_stop();
            lost_done.set_value();
        });
        try {
            task(stop.get_token(), term);
        } catch (...) {
            resign();
            lost_done.get_future().wait();  // the loss wait refers to this frame
            throw;
        }
        resign();  // if still leading; completes the loss wait
        lost_done.get_future().wait();
        if (!options.rejoin) return;
    }
}

} // namespace zklock
