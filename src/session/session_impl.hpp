// The shared state of a Session: the ZooKeeper handle, the Asio plumbing that
// drives it, and the thin asynchronous wrappers the lock engine calls.
// Everything except the members marked thread-safe runs on strand_.
#pragma once

#include "fsm/known_dirs.hpp"
#include "fsm/listing_batches.hpp"
#include "fsm/node_stat.hpp"
#include "fsm/policy_words.hpp"
#include <zklock/session.hpp>

#include "support/async_support.hpp"
#include "support/io_seam.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/intrusive/list.hpp>

#include <zookeeper.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <set>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace zklock::detail {

class tls_legs;

/// The Stat the C client gave (all zero for none).
inline node_stat stat_of(const Stat* s) {
    node_stat n;
    if (s) {
        n.czxid = s->czxid;
        n.ctime_ms = s->ctime;
        n.ephemeral_owner = s->ephemeralOwner;
        n.version = s->version;
        n.num_children = s->numChildren;
        n.cversion = s->cversion;
        n.pzxid = s->pzxid;
        n.mzxid = s->mzxid;
    }
    return n;
}

/// An ACL in the C client's form, owning its strings. The C client serializes
/// it while a create is submitted, so it only has to outlive that call.
class c_acl {
public:
    explicit c_acl(acl_list acl);
    c_acl(const c_acl&) = delete;
    c_acl& operator=(const c_acl&) = delete;
    const ACL_vector* get() const noexcept { return &vector_; }
    const acl_list& entries() const noexcept { return entries_; }

private:
    acl_list entries_;
    std::vector<ACL> data_;
    ACL_vector vector_{};
};

/// Owns the callback of one C request; the C client calls every completion
/// exactly once (with ZCLOSING when the handle is closed), which frees it.
/// The session whose C client call is running on this thread (its log scope)
/// notes that a request sent at `sent` got the answer `rc` (session_impl::note_answer).
void note_answer_in_scope(std::chrono::steady_clock::time_point sent, int rc) noexcept;
/// The session whose C client call is running on this thread has one request
/// fewer awaiting its answer (session_impl::process reads ahead only while
/// some are).
void note_taken_in_scope() noexcept;

/// Replies and watch events the C client delivered on this thread, counted so
/// that session_impl::process can tell whether a call read anything.
extern thread_local std::uint64_t delivered_here;

template <class Fn> struct request {
    Fn fn;
    std::chrono::steady_clock::time_point sent = clock::now();  // handed to the C client
    // take(data, rc) is for the requests the leader answers (writes, multi,
    // sync): their answer proves the quorum heard the session. A read is
    // answered by the server the client talks to, which may be a follower cut
    // off from the leader: take(data).
    static const void* make(Fn fn) { return new request{std::move(fn)}; }
    static std::unique_ptr<request> take(const void* data) {
        ++delivered_here;
        note_taken_in_scope();
        return std::unique_ptr<request>(static_cast<request*>(const_cast<void*>(data)));
    }
    /// take(), from the C client's completion with the answer `rc`.
    static std::unique_ptr<request> take(const void* data, int rc) {
        auto r = take(data);
        note_answer_in_scope(r->sent, rc);
        return r;
    }
};

/// Calls a request's callback with a failure code and empty results.
template <class Fn> struct refuse_request;
template <class... Results> struct refuse_request<std::function<void(int, Results...)>> {
    static void call(const std::function<void(int, Results...)>& fn, int rc) { fn(rc, std::decay_t<Results>{}...); }
};

/// One operation of a multi transaction (session_impl::multi).
struct multi_op {
    enum class kind { create, remove, set_data, check };
    kind type = kind::create;
    std::string path;
    std::string data;                   ///< create, set_data
    int flags = 0;                      ///< create
    int version = -1;                   ///< remove, set_data, check (-1: any)
    std::shared_ptr<const c_acl> acl;   ///< create
};

/// A transaction the session owes, as a release is (engine/release_txn.hpp):
/// sent now or once connected, and again after a connection loss, until it
/// commits, the session that owns its nodes is gone, or `judge` ends it. The
/// session knows nothing of what the ops mean.
struct owned_txn {
    enum class verdict {
        send_again,   ///< `judge` changed what `ops` builds: send that
        delete_each,  ///< delete each of `nodes` on its own (delete_owned)
        finish,       ///< end with the reply's code
    };
    std::function<std::vector<multi_op>()> ops;  ///< built afresh for each send
    /// A reply other than ZOK: `rc`, and each op's code.
    std::function<verdict(int rc, const std::vector<int>& errors)> judge;
    std::vector<std::string> nodes;  ///< the nodes it deletes (delete_each; the log names the first)
};

/// What the session tells of its events without a listener entry of its own:
/// a queue engine, one per lock. It is linked into the session's list through
/// its hook (session_impl::subscribe), so that 10,000 locks cost the session
/// no allocation each, and it unlinks itself before it is destroyed.
class session_subscriber : public boost::intrusive::list_base_hook<> {
public:
    using keeper = std::shared_ptr<session_subscriber> (*)(session_subscriber&) noexcept;
    /// On the session's strand, as a listener is called.
    virtual void on_session_event(session_event e) = 0;
    /// The subscriber, kept alive for one call; null once it is being
    /// destroyed. Not virtual: the session may ask while a derived part's
    /// destructor runs on another thread (it then waits to unsubscribe).
    std::shared_ptr<session_subscriber> keep_alive() noexcept { return keep_(*this); }

protected:
    explicit session_subscriber(keeper keep) noexcept : keep_(keep) {}
    ~session_subscriber() = default;

private:
    keeper keep_;
};

class session_impl : public std::enable_shared_from_this<session_impl> {
public:
    using strand_type = boost::asio::strand<boost::asio::any_io_executor>;
    using strand_timer = basic_timer<strand_type>;
    using listener = std::function<void(session_event, std::int64_t)>;

    session_impl(boost::asio::any_io_executor ex, SessionOptions options, std::shared_ptr<own_context> own);
    ~session_impl();

    // ---- thread-safe -------------------------------------------------------
    const SessionOptions& options() const noexcept { return options_; }
    /// A record of zklock's own to the session's log sink (or, without one, to
    /// stderr when SessionOptions::client_log_level asks for its level). Strand.
    void log(log_level level, std::string_view message) const;
    /// The session's ACL policy in the C client's form.
    const std::shared_ptr<const c_acl>& acl() const noexcept { return acl_; }
    /// What contenders with ACL policy `acl` say of it and of this session:
    /// made once for the session's own policy and shared by its locks.
    std::shared_ptr<const policy_words> words_for(const std::shared_ptr<const c_acl>& acl) const;
    /// The default node data "<hostname>:<pid>", made once with the session
    /// and shared by the locks given no data of their own (most locks).
    const std::shared_ptr<const std::string>& default_data() const noexcept { return default_node_data_; }
    const boost::asio::any_io_executor& user_executor() const noexcept { return user_ex_; }
    const strand_type& strand() const noexcept { return strand_; }
    session_state state() const noexcept { return state_.load(); }
    std::int64_t session_id() const noexcept { return session_id_.load(); }
    std::chrono::milliseconds negotiated_timeout() const noexcept {
        return std::chrono::milliseconds(negotiated_timeout_ms_.load());
    }
    /// Counts the sessions this Session has had: one more each time the
    /// server expired the session and a new one began. Thread-safe.
    std::uint64_t generation() const noexcept { return generation_.load(); }
    /// Until when the session of `generation` is certainly alive on the server
    /// (our steady clock; fsm/safe_time.hpp): the epoch when that is not the
    /// session last heard, or nothing was heard.
    std::chrono::steady_clock::time_point safe_until(std::uint64_t generation) const;
    /// A request sent at `sent` got `rc`: when the server answered it, it heard
    /// the current session at `sent` or later. Strand (C client completions).
    void note_answer(std::chrono::steady_clock::time_point sent, int rc) noexcept;
    /// True on a thread that runs the session's I/O: blocking calls there would deadlock.
    bool on_session_thread() const noexcept;
    std::uint64_t add_listener(listener l);
    void remove_listener(std::uint64_t id) noexcept;
    /// Links `s` into the subscribers told of every event after the listeners;
    /// `s` calls unsubscribe before it is destroyed (from any thread).
    void subscribe(session_subscriber& s);
    void unsubscribe(session_subscriber& s) noexcept;
    /// Posts fn to the strand, keeping this alive. Once a Session's own thread has
    /// ended (the Session was destroyed), nothing runs the strand: fn runs here, on
    /// the caller's thread, where it finds the session closed and answers at once.
    template <class F> void post(F&& fn) {
        if (!own_) {
            boost::asio::post(strand_, [self = shared_from_this(), f = std::forward<F>(fn)]() mutable { f(); });
            return;
        }
        if (own_->done) {
            fn();
            return;
        }
        // Counted until run, so that a caller driving the loop runs it before
        // it lets go; posted from a thread that neither runs nor drives the
        // loop, it wakes the loop's thread when that is parked.
        ++own_->queued;
        boost::asio::post(strand_, [self = shared_from_this(), f = std::forward<F>(fn)]() mutable {
            --self->own_->queued;
            f();
        });
        if (!own_->baton.driven_here() && !own_->ioc.get_executor().running_in_this_thread()) own_->baton.nudge();
    }
    /// What a user's call hands the strand (an acquire's start, a release),
    /// on a Session of its own thread (support/loop_baton.hpp): when this
    /// thread drives the loop (a blocking call of it is under way) and is
    /// outside it, run here at once, unless something posted is still queued
    /// (it would be overtaken: then posted, and the driver's loop runs it).
    /// With `may_take` (a call that waits for no answer, as unlock()), taken
    /// likewise when the loop's thread is parked and no one drives: run here,
    /// with what is queued, and the loop given back. Otherwise posted. Either
    /// way nothing runs beside it. Any thread.
    template <class F> void run_or_post(F&& fn, bool may_take) {
        if (own_ && !own_->done && !own_->ioc.get_executor().running_in_this_thread()) {
            auto& own = *own_;
            const bool driving = own.baton.driven_here();
            if (driving ? !own.inline_running : may_take && own.baton.begin(false)) {
                // Taken for this call: run what is queued, then give the loop up.
                struct turn {
                    own_context& own;
                    bool taken;
                    ~turn() {
                        if (!taken) return;
                        if (own.queued.load() > 0) own.ioc.poll();
                        own.baton.end(own.queued.load() > 0);
                    }
                } t{own, !driving};
                if (own.queued.load() == 0) {
                    own.inline_running = true;
                    struct reset {
                        own_context& own;
                        ~reset() { own.inline_running = false; }
                    } r{own};
                    fn();
                    own.inline_running = false;
                    flush_now();  // the sends its requests left due, now that it is done
                } else {
                    post(std::forward<F>(fn));  // the turn's end, or the driver's loop, runs it
                }
                return;
            }
        }
        post(std::forward<F>(fn));
    }
    /// The own loop a blocking call may drive (null on a user's executor).
    own_context* own_loop() const noexcept { return own_.get(); }
    /// Closes and waits when safe (see Session::close).
    void close_and_wait() noexcept;
    /// Shuts down the own thread, if any (Session destructor).
    void shutdown_own_thread() noexcept;

    // ---- strand only --------------------------------------------------------
    void start();
    void close_on_strand();
    bool connected() const noexcept { return state_.load() == session_state::connected; }
    /// Runs fn(error) once connected (now, if connected) or with session_closed.
    /// Returns an id for cancel_connect_waiter.
    std::uint64_t when_connected(std::function<void(std::error_code)> fn);
    void cancel_connect_waiter(std::uint64_t id);
    /// Runs fn() once every address of the connect string has refused a
    /// connect (nothing listens at any of them) since the last connection;
    /// the session keeps trying. Returns an id for cancel_refusal_waiter.
    std::uint64_t when_all_refused(std::function<void()> fn);
    void cancel_refusal_waiter(std::uint64_t id);
    /// The C client said a connect to `address` was refused (from its log).
    void note_refused(std::string address);
    /// TLS leg `leg` (SessionOptions::tls) reached its server but TLS failed
    /// with `code`: logged; when every server has failed so and the session
    /// never connected, it closes with `code` (the C client would reconnect
    /// for ever); a session that connected once keeps trying.
    void note_tls_failure(std::size_t leg, std::error_code code, const std::string& detail);
    /// Before the C client's next connect after a refusal: moves its position
    /// so that connect goes to an address that has not refused in this round
    /// (fsm/server_rotation.hpp says why).
    void steer_to_untried();
    /// Runs the C client (zookeeper_process, then pump()) at `deadline`, or
    /// earlier when already due earlier. Strand.
    void run_client_at(std::chrono::steady_clock::time_point deadline);
    /// Why the session closed: errc::auth_failed when the server refused an
    /// authentication, otherwise errc::session_closed.
    std::error_code close_reason() const {
        return close_reason_ ? close_reason_ : make_error_code(errc::session_closed);
    }
    /// The session id and password while connected (tests use them to expire it).
    std::optional<clientid_t> client_id() const {
        if (!zh_ || !connected()) return std::nullopt;
        return *zoo_client_id(zh_);
    }

    using void_fn = std::function<void(int rc)>;
    using stat_fn = std::function<void(int rc, const node_stat& stat)>;
    using string_stat_fn = std::function<void(int rc, std::string name, const node_stat& stat)>;
    using children_fn = std::function<void(int rc, std::vector<std::string> children)>;
    using data_fn = std::function<void(int rc, std::string data, const node_stat& stat)>;
    using watch_fn = std::function<void(int event_type)>;
    using acl_fn = std::function<void(int rc, acl_list acl)>;

    /// create2 (the reply carries the created node's Stat), with `acl`.
    void create(const std::string& path, const std::string& data, int flags, const c_acl& acl, string_stat_fn fn);
    void get_children(const std::string& path, children_fn fn);
    /// getChildren shared by the calls that want a listing of `path` at the
    /// same time (fsm/listing_batches.hpp): at most one is outstanding per path,
    /// and each call is answered by one sent after it was made. For the
    /// engines' decisions, whose callers may all read the same children.
    void list_shared(const std::string& path, listing_batches::answer_fn fn);
    /// getChildren that leaves a child watch (the herd baseline, QueueWatch).
    void get_children_watch(const std::string& path, watch_fn on_watch, children_fn fn);
    /// getData; with on_watch set, leaves a data watch that fires once (deletion or change).
    void get_data(const std::string& path, watch_fn on_watch, data_fn fn);
    void remove(const std::string& path, int version, void_fn fn);
    void set_data(const std::string& path, const std::string& data, int version, void_fn fn);
    /// exists; with on_watch set, leaves a watch that fires when the node is
    /// created, changed or deleted. Returns the watch's id (remove_watch), 0
    /// without on_watch.
    std::uint64_t exists(const std::string& path, watch_fn on_watch, stat_fn fn);
    /// Forgets the data or exists watch `wid` on `path` (it will not fire) and
    /// removes the session's data watches on `path` from the server
    /// (removeWatches): for a path only that watch watches. No-op for a watch
    /// that fired already, whose request failed, or for wid 0.
    void remove_watch(const std::string& path, std::uint64_t wid);
    /// getACL.
    void get_acl(const std::string& path, acl_fn fn);
    /// setACL (`version` -1: any).
    void set_acl(const std::string& path, int version, const c_acl& acl, void_fn fn);
    /// sync: answered once the server the session talks to has caught up with
    /// the leader (a follower asks the leader: a partitioned one answers nothing).
    void sync(const std::string& path, void_fn fn);
    /// multi: every op commits in one transaction (one zxid), or none does. fn
    /// gets the transaction's code (the first failing op's, or a connection
    /// error: the outcome is then unknown), each op's code, and the path each
    /// create made ("" for the other ops).
    using multi_fn = std::function<void(int rc, std::vector<int> op_errors, std::vector<std::string> created)>;
    void multi(std::vector<multi_op> ops, multi_fn fn);
    /// multi, with each op's Stat as the server returned it: a set_data's
    /// (its mzxid is the transaction's zxid, the czxid of every node the
    /// transaction creates); zero for the other ops and when it failed.
    using multi_stat_fn = std::function<void(int rc, std::vector<int> op_errors, std::vector<std::string> created,
                                             std::vector<node_stat> stats)>;
    void multi_with_stats(std::vector<multi_op> ops, multi_stat_fn fn);
    /// Creates `path` and its missing ancestors as CONTAINER nodes with `acl`;
    /// `path` gets `data`. fn gets ZOK (or the first error and the path that
    /// failed with it). `path` alone is tried first; its ancestors are created
    /// (pipelined, top down) only when its parent is missing.
    void ensure_parents(const std::string& path, const std::string& data, std::shared_ptr<const c_acl> acl,
                        std::function<void(int rc, const std::string& failed_path)> fn);

    /// Deletes `path` now or as soon as connected, retrying across connection
    /// loss, until it commits or the session that owns it (`owner`) is gone.
    /// fn (optional) gets {} on commit or when the node was already gone,
    /// session_expired / session_closed when the session went first.
    void delete_owned(std::string path, std::int64_t owner, std::function<void(std::error_code)> fn = {});
    /// Sends `txn` now or once connected, retried as delete_owned's delete is;
    /// fn (optional) as delete_owned's, once it committed or its verdict ended it.
    void delete_owned_txn(owned_txn txn, std::int64_t owner, std::function<void(std::error_code)> fn = {});
    /// Like delete_owned for nodes whose names are not known (a create whose
    /// reply was lost): after a sync, lists every one of `dirs` and deletes the
    /// children carrying `guid`, if any, with one transaction (a lock set's
    /// nodes, made by one, go by one: no queue sees the set leave before the
    /// others).
    void delete_owned_by_guid(std::vector<std::string> dirs, std::string guid, std::int64_t owner,
                              std::function<void(std::error_code)> fn = {});

    /// How long a hold lasts before its holder watches its own nodes
    /// (contender_engine): a shorter hold never pays for the watch.
    static constexpr std::chrono::milliseconds settle_delay{10};
    /// Runs fn on the strand settle_delay (at most twice it) from
    /// now; calls run in the order made, by one timer. Dropped, not run, when
    /// the session closes.
    void after_settling(std::function<void()> fn);

    /// The lock directories this session has seen exist (fsm/known_dirs.hpp). Strand.
    known_dirs& dirs() noexcept { return dirs_; }

    /// What the session is doing, in words (its state, the C client's, the
    /// socket and timer it waits on, the deletes it still owes): for
    /// diagnosing a hung run (zklock::describe_internals).
    std::string describe() const;


private:
    /// ensure_parents once the directory's parent is known to be missing: every ancestor, then it.
    void ensure_ancestors(const std::string& path, const std::string& data, const c_acl& acl,
                          std::function<void(int rc, const std::string& failed_path)> fn);
    struct janitor_entry {
        std::string path;  // node path, or the first of dirs when guid is set
        std::string guid;
        owned_txn txn;     // a transaction instead (path unused)
        std::int64_t owner = 0;
        std::function<void(std::error_code)> done;
        bool in_flight = false;
        std::vector<std::string> dirs;  // with guid: where to look
    };

    static void on_session_watch(zhandle_t* zh, int type, int state, const char* path, void* ctx);
    static void on_node_watch(zhandle_t* zh, int type, int state, const char* path, void* ctx);
    static void on_auth_reply(int rc, const void* data);

    /// While it lives, the C client's log lines on this thread are this
    /// session's (the C client's log callback takes no context): set around
    /// every call into the C client.
    friend void note_answer_in_scope(std::chrono::steady_clock::time_point sent, int rc) noexcept;
    friend void note_taken_in_scope() noexcept;
    class log_scope {
    public:
        explicit log_scope(session_impl* s) noexcept : previous_(current_) { current_ = s; }
        ~log_scope() { current_ = previous_; }
        log_scope(const log_scope&) = delete;
        log_scope& operator=(const log_scope&) = delete;
        static session_impl* current() noexcept { return current_; }

    private:
        session_impl* previous_;
        static thread_local session_impl* current_;
    };
    static void on_client_log(const char* line);

    void open_handle();
    void drop_handle();
    void handle_state(int zstate);
    void on_connected();
    /// Sends a cheap request the leader answers (sync "/") when nothing such
    /// was answered for a third of the session timeout, then again a third
    /// later, while connected.
    void arm_probe();
    /// Waits for what the C client wants (zookeeper_interest); with
    /// `may_write`, first sends what it has to send when connected (the C
    /// client may call back: never inside a submit).
    void pump(bool may_write = false);
    /// desc_ on a descriptor of its own for fd_ (own_descriptor); fd_ -1 when none can be had.
    void assign_descriptor();
    void process(int events);
    /// A send is due that pump() could not make: made at the end of the turn.
    void flush_soon();
    void flush_now();
    void settle();  // runs the calls of settling_ that are due
    void arm_settle_timer(clock::time_point at);
    void notify(session_event e);
    void run_janitor();
    void janitor_step(std::shared_ptr<janitor_entry> e);
    void finish_janitor(const std::shared_ptr<janitor_entry>& e, std::error_code ec);
    void janitor_txn_step(const std::shared_ptr<janitor_entry>& e, std::function<void(int rc)> on_delete);
    void janitor_guid_step(const std::shared_ptr<janitor_entry>& e, std::function<void(int rc)> on_delete);
    bool can_submit() const noexcept { return zh_ != nullptr && !closing_; }
    /// Submits one request: `call(ctx)` hands the C client the request state that
    /// owns `fn` and returns its code. When the handle is gone or the C client
    /// refuses the submit, `fn` gets the code (posted, never inline) and empty results.
    template <class Fn, class Call> void submit(Fn fn, Call&& call) {
        if (!can_submit()) {
            post([fn = std::move(fn)] { refuse_request<Fn>::call(fn, ZCLOSING); });
            return;
        }
        const void* ctx = request<Fn>::make(std::move(fn));
        ++awaiting_;  // take() counts it off, in this scope or in the C client's completion
        const log_scope scope(this);
        if (const int rc = call(ctx); rc != ZOK) {
            auto r = request<Fn>::take(ctx);
            post([f = std::move(r->fn), rc] { refuse_request<Fn>::call(f, rc); });
            return;
        }
        pump();
    }
    static void on_children(int rc, const String_vector* strings, const void* data);
    void send_shared_listing(const std::string& path);
    static void on_void(int rc, const void* data);
    std::uint64_t register_watch(watch_fn fn);

    SessionOptions options_;
    std::shared_ptr<const c_acl> acl_;
    std::shared_ptr<const policy_words> words_;  // acl_'s
    std::shared_ptr<const std::string> default_node_data_;  // default_node_data(), made with the session
    std::shared_ptr<own_context> own_;  // destroyed after the I/O objects below
    boost::asio::any_io_executor user_ex_;
    strand_type strand_;
    // Their executor is the strand's own type, not an any_io_executor around
    // it: every wait would otherwise allocate the strand again to track its
    // work (two allocations per request and reply on the wire).
    basic_descriptor<strand_type> desc_;  // a duplicate of the C client's socket (own_descriptor)
    strand_timer timer_;
    strand_timer suspend_timer_;
    strand_timer probe_timer_;  // a request every third of the timeout, so that safe_until() keeps up
    mutable std::mutex heard_m_;
    std::chrono::steady_clock::time_point heard_{};  // under heard_m_: the send time of the newest answered request
    std::uint64_t heard_generation_ = 0;             // under heard_m_: the session heard_ belongs to
    std::atomic<std::uint64_t> generation_{0};       // generation()
    strand_timer settle_timer_;  // the front of settling_
    std::deque<std::pair<clock::time_point, std::function<void()>>> settling_;
    std::optional<clock::time_point> timer_deadline_;
    clock::time_point last_receive_{};  // when the server last sent us anything

    zhandle_t* zh_ = nullptr;
    int fd_ = -1;
    std::uint64_t socket_id_ = 0;  // inode of the socket behind fd_
    bool socket_steady_ = false;   // connected at the last pump, fd_ compared or unchanged since
    std::uint64_t fd_generation_ = 0;
    bool read_pending_ = false;
    bool write_pending_ = false;
    bool in_process_ = false;
    std::size_t awaiting_ = 0;  // requests handed to this handle and not answered (submit, take)
    bool flush_due_ = false;  // flush_soon: a send is due at the end of the turn
    bool write_waited_ = false;  // desc_ has been waited on for writing (pump)
    bool closing_ = false;
    std::size_t auth_pending_ = 0;  // auths of this handle the server has not answered yet
    bool awaiting_auth_ = false;    // connected, not announced until the auth replies come
    std::error_code close_reason_;  // why the session closed (strand only)

    std::atomic<session_state> state_{session_state::connecting};
    std::atomic<std::int64_t> session_id_{0};
    std::atomic<long> negotiated_timeout_ms_{0};

    std::mutex listeners_mutex_;  // guards listeners_ and subscribers_
    std::map<std::uint64_t, listener> listeners_;
    boost::intrusive::list<session_subscriber, boost::intrusive::constant_time_size<false>> subscribers_;
    std::atomic<std::uint64_t> next_id_{1};  // listeners (any thread), waiters and watches (strand)

    std::map<std::uint64_t, std::function<void(std::error_code)>> connect_waiters_;
    std::map<std::uint64_t, std::function<void()>> refusal_waiters_;
    std::set<std::string> refused_;  // the addresses that refused in this round of connects
    std::size_t addresses_ = 0;      // of the connect string, resolved; 0: unknown (never all refused)
    // Every address refused (since the last connection): the next connects
    // wait refusal_backoff_ (growing to a cap) instead of following each other
    // as fast as the kernel refuses them.
    bool all_refused_ = false;
    bool steer_pending_ = false;  // a refusal since the last pump: steer_to_untried() before the next connect
    std::chrono::milliseconds refusal_backoff_{0};
    std::chrono::steady_clock::time_point next_attempt_{};
    std::unordered_map<std::uint64_t, watch_fn> watches_;
    // With SessionOptions::tls: the loopback legs the C client connects to
    // (client_connect_), and the legs whose server failed TLS since the last
    // connection.
    std::shared_ptr<tls_legs> legs_;
    std::string client_connect_;
    std::set<std::size_t> tls_failed_;
    std::deque<std::shared_ptr<janitor_entry>> janitor_;
    known_dirs dirs_;
    listing_batches listings_;  // list_shared's
};

} // namespace zklock::detail
