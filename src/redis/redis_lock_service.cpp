#include <zklock/redis/redis_lock_service.hpp>

#include "../detail/async_support.hpp"
#include "../detail/counter_cells.hpp"
#include "../detail/loss_reports.hpp"
#include "connection.hpp"

#include <zklock/detail/redlock.hpp>

#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <future>
#include <map>
#include <mutex>
#include <random>

#include <pthread.h>
#include <signal.h>

namespace zklock {
namespace asio = boost::asio;

namespace detail {
namespace {

using std::chrono::milliseconds;
using clock_type = std::chrono::steady_clock;
using redis::connection;
using redis::reply;
using redis::strand_type;

// SET NX PX and, when set, INCR the fencing counter: the token (> 0), or 0 when taken.
constexpr const char* acquire_script =
    "if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return redis.call('incr', KEYS[2]) end "
    "return 0";
// Compare-and-delete; publishes the released token on the release channel when
// ARGV[2] is '1' (so a Redlock waiter counts one release once, whatever the masters).
constexpr const char* release_script =
    "if redis.call('get', KEYS[1]) == ARGV[1] then redis.call('del', KEYS[1]) "
    "if ARGV[2] == '1' then redis.call('publish', KEYS[2], ARGV[1]) end return 1 end return 0";
// Compare-and-PEXPIRE: 1 when renewed, 0 when the key is no longer ours.
constexpr const char* extend_script =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0";
// Redlock: raise a master's fencing counter (KEYS[2]) to at least ARGV[1].
constexpr const char* raise_script =
    "local c = tonumber(redis.call('get', KEYS[2]) or '0') "
    "if c < tonumber(ARGV[1]) then redis.call('set', KEYS[2], ARGV[1]) end return 1";

constexpr milliseconds first_backoff{50};
constexpr milliseconds max_backoff{1000};
constexpr milliseconds resubscribe_delay{250};

/// One Redis server's subscriber connection, shared by every lock of a service:
/// one SUBSCRIBE per channel however many waiters, UNSUBSCRIBE when the last
/// one leaves. A waiter's wake function runs with the released token on every
/// message, and with nullptr once its channel's subscription is confirmed (the
/// acquire retries then, so a release between the failed attempt and the
/// subscription is not missed).
class subscriber : public std::enable_shared_from_this<subscriber> {
public:
    subscriber(strand_type strand, std::shared_ptr<connection> conn) : conn_(std::move(conn)), timer_(strand) {}

    void start() {
        conn_->set_push_handler(
            [weak = weak_from_this()](const std::string& kind, const std::string& channel, const std::string& payload) {
                if (auto self = weak.lock()) self->on_push(kind, channel, payload);
            });
        conn_->set_disconnect_handler([weak = weak_from_this()] {
            if (auto self = weak.lock()) self->on_disconnect();
        });
    }

    using waker = std::function<void(const std::string* released_token)>;

    void add(const std::string& channel, std::uint64_t id, waker wake) {
        auto& e = channels_[channel];
        e.wakers[id] = std::move(wake);
        switch (e.st) {
        case state::none: subscribe(channel, e); break;
        case state::subscribed: asio::post(timer_.get_executor(), [w = e.wakers[id]] { w(nullptr); }); break;
        case state::subscribing:
        case state::unsubscribing: break;  // the reply brings the wake / the re-subscribe
        }
    }

    void remove(const std::string& channel, std::uint64_t id) {
        const auto it = channels_.find(channel);
        if (it == channels_.end()) return;
        it->second.wakers.erase(id);
        if (!it->second.wakers.empty()) return;
        if (it->second.st == state::subscribed) {
            if (conn_->connected() && conn_->subscribe_command("UNSUBSCRIBE", channel)) it->second.st = state::unsubscribing;
            else channels_.erase(it);
        } else if (it->second.st == state::none) {
            channels_.erase(it);
        }
    }

    void close() {
        closed_ = true;
        timer_.cancel();
        conn_->close(false);
    }

private:
    enum class state { none, subscribing, subscribed, unsubscribing };
    struct entry {
        state st = state::none;
        std::map<std::uint64_t, waker> wakers;
    };

    void subscribe(const std::string& channel, entry& e) {
        if (!closed_ && conn_->subscribe_command("SUBSCRIBE", channel)) {
            e.st = state::subscribing;
        } else {
            e.st = state::none;
            schedule_resubscribe();
        }
    }

    static void wake_all(const entry& e, const std::string* released_token) {
        std::vector<waker> wakers;
        for (const auto& [id, w] : e.wakers) wakers.push_back(w);
        for (auto& w : wakers) w(released_token);
    }

    void on_push(const std::string& kind, const std::string& channel, const std::string& payload) {
        const auto it = channels_.find(channel);
        if (it == channels_.end()) return;
        entry& e = it->second;
        if (kind == "message") {
            wake_all(e, &payload);
        } else if (kind == "subscribe") {
            e.st = state::subscribed;
            if (e.wakers.empty()) {
                if (conn_->subscribe_command("UNSUBSCRIBE", channel)) e.st = state::unsubscribing;
            } else {
                wake_all(e, nullptr);
            }
        } else if (kind == "unsubscribe") {
            if (e.wakers.empty()) channels_.erase(it);
            else subscribe(channel, e);
        }
    }

    void on_disconnect() {
        for (auto it = channels_.begin(); it != channels_.end();) {
            if (it->second.wakers.empty()) {
                it = channels_.erase(it);
            } else {
                it->second.st = state::none;
                ++it;
            }
        }
        if (!channels_.empty()) schedule_resubscribe();  // waiters fall back on their backoff meanwhile
    }

    void schedule_resubscribe() {
        if (closed_ || resubscribe_armed_) return;
        resubscribe_armed_ = true;
        timer_.expires_after(resubscribe_delay);
        timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            self->resubscribe_armed_ = false;
            if (ec || self->closed_) return;
            for (auto& [channel, e] : self->channels_)
                if (e.st == state::none && !e.wakers.empty()) self->subscribe(channel, e);
        });
    }

    std::shared_ptr<connection> conn_;
    asio::steady_timer timer_;
    std::map<std::string, entry> channels_;
    bool closed_ = false;
    bool resubscribe_armed_ = false;
};

struct master {
    std::shared_ptr<connection> commands;
    std::shared_ptr<subscriber> wakeups;
};

/// One master's address: parsed, with the options' credentials and db where
/// the address names none.
redis_address master_address(const std::string& text, const RedisOptions& opts) {
    std::error_code ec;
    std::string reason;
    auto a = resolve_redis_address(text, opts.user, opts.password, opts.db, ec, &reason);
    if (ec) throw error(ec, "zklock::RedisLockService: " + reason);
    return a;
}

} // namespace

struct redis_context {
    std::vector<redis_address> addresses;  // first: validated before any thread starts
    std::shared_ptr<own_context> own;  // the io_context outlives the connections
    asio::any_io_executor executor;
    strand_type strand;
    RedisOptions options;
    std::string_view backend;
    std::vector<master> masters;
    std::size_t quorum = 1;
    milliseconds drift{};
    std::atomic<std::uint64_t> next_id{1};
    std::atomic<bool> closed{false};
    std::mutex closers_mutex;
    std::map<std::uint64_t, std::function<void()>> closers;  // of the live locks: end them when the service ends  // set on the strand; commands then fail with session_closed at once
    // strand only
    bool abandoned = false;
    std::mt19937_64 rng{std::random_device{}() ^ (std::uint64_t(std::random_device{}()) << 32)};

    static std::vector<redis_address> validate(const std::vector<std::string>& host_ports, const RedisOptions& opts) {
        if (host_ports.empty())
            throw error(make_error_code(errc::invalid_argument), "zklock::RedlockService: no Redis master given");
        if (opts.ttl < milliseconds(10))
            throw error(make_error_code(errc::invalid_argument), "zklock::RedisLockService: ttl under 10 ms");
        if (opts.db < 0)
            throw error(make_error_code(errc::invalid_argument), "zklock::RedisLockService: a negative db number");
        if (opts.password.empty() && !opts.user.empty())
            throw error(make_error_code(errc::invalid_argument), "zklock::RedisLockService: a user without a password");
        std::vector<redis_address> out;
        for (const auto& hp : host_ports) out.push_back(master_address(hp, opts));
        return out;
    }

    redis_context(const std::vector<std::string>& host_ports, RedisOptions opts, std::string_view name)
        : addresses(validate(host_ports, opts)), own(redis::own_thread_unless(opts.executor)),
          executor(own ? asio::any_io_executor(own->ioc.get_executor()) : opts.executor),
          strand(asio::make_strand(executor)), options(std::move(opts)), backend(name) {
        for (const auto& address : addresses) {
            master m;
            m.commands = std::make_shared<connection>(strand, address, options.connect_timeout, options.command_timeout);
            m.wakeups = std::make_shared<subscriber>(
                strand, std::make_shared<connection>(strand, address, options.connect_timeout, options.command_timeout));
            m.wakeups->start();
            masters.push_back(std::move(m));
        }
        quorum = redlock::quorum(masters.size());
        drift = redlock::drift(options.ttl);
    }

    bool on_thread() const noexcept {
        if (own) return own->ioc.get_executor().running_in_this_thread();
        return strand.running_in_this_thread();
    }

    std::string random_token() {
        char buf[33];
        std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(rng()),
                      static_cast<unsigned long long>(rng()));
        return buf;
    }

    milliseconds uniform(milliseconds lo, milliseconds hi) {
        return milliseconds(std::uniform_int_distribution<long long>(lo.count(), hi.count())(rng));
    }

    /// Runs on the strand, and waits for it unless called there.
    template <class F> void run_and_wait(F fn) {
        if (on_thread()) return fn();
        std::promise<void> done;
        asio::post(strand, [&] {
            fn();
            done.set_value();
        });
        done.get_future().wait();
    }

    /// Posts to the strand; once the own thread has ended (the service is gone)
    /// nothing runs it, so fn runs here and finds the service closed.
    template <class F> void post(F&& fn) {
        if (own && own->done) return fn();
        asio::post(strand, std::forward<F>(fn));
    }

    void close(bool graceful) {
        if (graceful) {  // the service ends: its locks release (and report errc::session_closed) first
            std::map<std::uint64_t, std::function<void()>> live;
            {
                std::lock_guard lk(closers_mutex);
                live = closers;
            }
            for (auto& [id, c] : live) c();
        }
        closed = true;
        for (auto& m : masters) {
            m.commands->close(graceful);
            m.wakeups->close();
        }
    }
};

namespace {

lock_capabilities redis_capabilities(std::string_view backend) noexcept {
    lock_capabilities c;
    c.backend = backend;
    c.fair_fifo = false;
    c.dead_holder = dead_holder_release::ttl_expiry;
    c.fencing_monotonic_across_failover = false;
    c.server_wakes_waiters = true;
    c.wakes_one_waiter = false;
    c.reports_loss = true;
    if (backend == "redlock")
        c.limits = "not FIFO (pub/sub wakes every waiter); safety rests on clocks and on the holder renewing within the "
                   "ttl, a dead holder blocks others until its ttl runs out, and fencing tokens restart when masters "
                   "restart without persistence";
    else
        c.limits = "not FIFO (pub/sub wakes every waiter); a dead holder blocks others until its ttl runs out, and a "
                   "holder paused past its ttl or a failover to a lagging replica can let two clients hold the lock "
                   "(fencing tokens restart when Redis restarts without persistence)";
    return c;
}

using redlock::master_reply;
using result = master_reply;

/// A script's integer reply: > 0 yes, 0 no; anything else failed.
result classify(std::error_code ec, const reply& r) {
    if (ec) return {result::kind::failed, 0, ec};
    if (r.type == reply::kind::integer) return {r.integer > 0 ? result::kind::yes : result::kind::no, r.integer, {}};
    return {result::kind::failed, 0, std::make_error_code(std::errc::protocol_error)};
}

class redis_backend : public lock_backend, public std::enable_shared_from_this<redis_backend> {
public:
    redis_backend(std::shared_ptr<redis_context> ctx, std::string key)
        : ctx_(std::move(ctx)), key_(std::move(key)), fence_key_(key_ + ":fence"), channel_(key_ + ":released"),
          id_(ctx_->next_id++), ttl_(ctx_->options.ttl), deadline_timer_(ctx_->strand), retry_timer_(ctx_->strand),
          watchdog_timer_(ctx_->strand),
          losses_(detail::loss_reports::make([c = ctx_](std::function<void()> fn) { c->post(std::move(fn)); }, ctx_->executor)) {}

    void acquire(std::optional<clock_type::time_point> deadline, bool no_wait, asio::cancellation_slot slot,
                 acquire_callback callback) override {
        if (busy_.exchange(true)) {
            ctx_->post([cb = std::move(callback)] { cb(make_error_code(errc::already_acquiring), false); });
            return;
        }
        const std::uint64_t op = ++op_counter_;
        if (slot.is_connected()) {
            slot.assign([weak = weak_from_this(), op](asio::cancellation_type) {
                if (auto self = weak.lock())
                    self->ctx_->post([self, op] {
                        if (self->op_ == op) self->give_up(operation_aborted());
                    });
            });
        }
        ctx_->post([self = shared_from_this(), op, deadline, no_wait, cb = std::move(callback)]() mutable {
            self->start(op, deadline, no_wait, std::move(cb));
        });
    }

    std::error_code release(std::function<void(std::error_code)> done) override {
        if (!held_.exchange(false)) return make_error_code(errc::not_held);
        busy_ = false;
        ctx_->post([self = shared_from_this(), done = std::move(done)] {
            if (!self->holding_) {  // lost in between: that was reported
                if (done) done({});
                return;
            }
            self->end_hold();
            self->release_everywhere(self->token_, [done](std::error_code ec) {
                if (done) done(ec);
            });
            self->losses_->end_waits({});
        });
        return {};
    }

    void shutdown() noexcept override {
        try {
            ctx_->post([self = shared_from_this()] {
                self->give_up(operation_aborted());
                if (self->holding_) {
                    self->held_ = false;
                    self->busy_ = false;
                    self->end_hold();
                    self->release_everywhere(self->token_, nullptr);
                }
                self->losses_->end_waits(operation_aborted());
                self->losses_->forget_callbacks();
            });
        } catch (...) {
        }
    }

    bool held() const noexcept override { return held_.load(); }
    std::int64_t fencing_token() const noexcept override { return fence_.load(); }

    void on_lost(std::function<void(std::error_code)> callback) override { losses_->add_callback(std::move(callback)); }

    void wait_lost(asio::cancellation_slot slot, std::function<void(std::error_code)> callback) override {
        losses_->wait(slot, std::move(callback), [self = shared_from_this()] { return self->holding_; });
    }

    ~redis_backend() override {
        std::lock_guard lk(ctx_->closers_mutex);
        ctx_->closers.erase(id_);
    }

    void register_closer() {
        std::lock_guard lk(ctx_->closers_mutex);
        ctx_->closers[id_] = [weak = weak_from_this()] {
            if (auto self = weak.lock()) self->close_for_service();
        };
    }

    /// The service ends (strand): abandon the acquire, release what is held.
    void close_for_service() {
        give_up(make_error_code(errc::session_closed));
        if (!holding_) return;
        held_ = false;
        busy_ = false;
        end_hold();
        release_everywhere(token_, nullptr);
        losses_->lost(make_error_code(errc::session_closed));
    }

    bool on_backend_thread() const noexcept override { return ctx_->on_thread(); }
    asio::any_io_executor executor() const override { return ctx_->executor; }
    lock_capabilities capabilities() const noexcept override { return redis_capabilities(ctx_->backend); }
    lock_counters counters() const noexcept override { return counters_.snapshot(); }

private:
    std::size_t n() const noexcept { return ctx_->masters.size(); }

    std::vector<std::string> eval(const char* script, std::string arg1, std::string arg2) const {
        return {"EVAL", script, "2", key_, script == acquire_script || script == raise_script ? fence_key_ : channel_,
                std::move(arg1), std::move(arg2)};
    }

    /// Sends `cmd` to every master; `done` gets one result per master once all answered.
    void on_all(std::vector<std::string> cmd, std::function<void(std::vector<result>)> done) {
        struct gather {
            std::vector<result> results;
            std::size_t left;
            std::function<void(std::vector<result>)> done;
        };
        if (ctx_->closed) {  // at once: after the service's end nothing may wait on its strand
            if (done) done(std::vector<result>(n(), result{result::kind::failed, 0, make_error_code(errc::session_closed)}));
            return;
        }
        auto g = std::make_shared<gather>(gather{std::vector<result>(n()), n(), std::move(done)});
        for (std::size_t i = 0; i < n(); ++i) {
            ctx_->masters[i].commands->command(cmd, [g, i](std::error_code ec, reply r) {
                g->results[i] = classify(ec, r);
                if (--g->left == 0 && g->done) g->done(std::move(g->results));
            });
        }
    }

    // ---- acquire -------------------------------------------------------------
    void start(std::uint64_t op, std::optional<clock_type::time_point> deadline, bool no_wait, acquire_callback cb) {
        callback_ = std::move(cb);
        op_ = op;
        deadline_ = deadline;
        no_wait_ = no_wait;
        backoff_ = first_backoff;
        last_error_ = {};
        if (ctx_->closed) return finish(make_error_code(errc::session_closed), false);
        if (deadline_) {
            deadline_timer_.expires_at(*deadline_);
            deadline_timer_.async_wait([self = shared_from_this(), op](boost::system::error_code ec) {
                if (!ec && self->op_ == op) self->give_up(self->last_error_);
            });
        }
        attempt();
    }

    void attempt() {
        if (!callback_) return;
        if (round_in_flight_) {
            wake_pending_ = true;
            return;
        }
        retry_timer_.cancel();
        round_in_flight_ = true;
        wake_pending_ = false;
        counter_cells::bump(counters_.attempts);
        const auto token = ctx_->random_token();
        const auto started = clock_type::now();
        on_all(eval(acquire_script, token, std::to_string(ttl_.count())),
               [self = shared_from_this(), op = op_, token, started](std::vector<result> results) {
                   self->round_done(op, token, started, results);
               });
    }

    void round_done(std::uint64_t op, const std::string& token, clock_type::time_point started,
                    const std::vector<result>& results) {
        const auto t = redlock::tally(results);
        const bool active = callback_ && op_ == op;
        if (active && redlock::won(t, ctx_->quorum, redlock::validity(ttl_, clock_type::now() - started, ctx_->drift))) {
            round_in_flight_ = false;
            return grant(token, t.fence, started);
        }
        if (!active) {  // cancelled or timed out meanwhile: take back what was set
            round_in_flight_ = false;
            if (t.undo) release_everywhere(token, nullptr, /*publish=*/false);
            if (callback_) attempt();  // a newer acquire waited for this round
            return;
        }
        if (!t.undo) {
            round_in_flight_ = false;
            return round_failed(t);
        }
        // Too few or too late: delete what was set before deciding, so a failed
        // acquire has left nothing behind when it completes.
        release_everywhere(
            token,
            [self = shared_from_this(), op, t](std::error_code) {
                self->round_in_flight_ = false;
                if (self->callback_ && self->op_ == op) self->round_failed(t);
                else if (self->callback_) self->attempt();
            },
            /*publish=*/false);
    }

    void round_failed(const redlock::round_tally& t) {
        const bool passed = deadline_ && clock_type::now() >= *deadline_;
        switch (redlock::next_step(t, ctx_->quorum, no_wait_, deadline_.has_value(), passed, ctx_->closed)) {
        case redlock::after_round::fail: return finish(last_error_ = t.first_error, false);
        case redlock::after_round::retry_on_error:
            last_error_ = t.first_error;
            return retry_after(next_backoff());
        case redlock::after_round::give_up: return finish({}, false);
        case redlock::after_round::wait:
        case redlock::after_round::retry_split_vote:
            register_waits();
            if (wake_pending_) return attempt();
            // A split vote (Redlock): everybody retries after a short random delay.
            return retry_after(t.yes > 0 ? ctx_->uniform(milliseconds(5), milliseconds(50)) : next_backoff());
        }
    }

    clock_type::duration next_backoff() {
        const auto cap = std::min<milliseconds>(backoff_, ttl_);
        backoff_ = std::min(backoff_ * 2, max_backoff);
        return ctx_->uniform(cap / 2, cap);
    }

    void retry_after(clock_type::duration delay) {
        if (deadline_) delay = std::min(delay, std::max(clock_type::duration::zero(), *deadline_ - clock_type::now()));
        retry_timer_.expires_after(delay);
        retry_timer_.async_wait([self = shared_from_this(), op = op_](boost::system::error_code ec) {
            if (!ec && self->op_ == op) {
                counter_cells::bump(self->counters_.timer_retries);
                self->attempt();
            }
        });
    }

    /// `released_token`: the token a release message names, nullptr for a
    /// subscription confirmed. With several masters one release sends one
    /// message each: it counts as one wake-up.
    void wake(const std::string* released_token) {
        if (!callback_) return;
        if (released_token && *released_token != last_release_seen_) {
            last_release_seen_ = *released_token;
            counter_cells::bump(counters_.wakeups);
        }
        attempt();
    }

    void register_waits() {
        if (registered_) return;
        registered_ = true;
        for (auto& m : ctx_->masters) {
            m.wakeups->add(channel_, id_, [weak = weak_from_this()](const std::string* released_token) {
                if (auto self = weak.lock()) self->wake(released_token);
            });
        }
    }

    void unregister_waits() {
        if (!registered_) return;
        registered_ = false;
        for (auto& m : ctx_->masters) m.wakeups->remove(channel_, id_);
    }

    void grant(const std::string& token, long long fence, clock_type::time_point started) {
        token_ = token;
        holding_ = true;
        ++hold_gen_;
        valid_until_ = started + ttl_ - ctx_->drift;
        renew_failing_ = false;
        fence_ = fence;
        held_ = true;
        counter_cells::bump(counters_.acquisitions);
        if (n() > 1) on_all(eval(raise_script, std::to_string(fence), "0"), nullptr);  // see RedlockService
        finish({}, true);
        schedule_watchdog(ttl_ / 3);
    }

    void finish(std::error_code ec, bool acquired) {
        deadline_timer_.cancel();
        retry_timer_.cancel();
        unregister_waits();
        op_ = 0;
        if (!acquired) busy_ = false;
        if (auto cb = std::exchange(callback_, nullptr)) cb(ec, acquired);
    }

    void give_up(std::error_code ec) {
        if (callback_) finish(ec, false);
    }

    // ---- hold ----------------------------------------------------------------
    void schedule_watchdog(clock_type::duration delay) {
        delay = std::min(delay, std::max(clock_type::duration::zero(), valid_until_ - clock_type::now()));
        watchdog_timer_.expires_after(delay);
        watchdog_timer_.async_wait([self = shared_from_this(), gen = hold_gen_](boost::system::error_code ec) {
            if (!ec && self->holding_ && self->hold_gen_ == gen) self->tick();
        });
    }

    void tick() {
        const auto now = clock_type::now();
        if (now >= valid_until_) return lose(make_error_code(errc::session_expired));
        if (!renew_in_flight_) {
            renew_in_flight_ = true;
            on_all(eval(extend_script, token_, std::to_string(ttl_.count())),
                   [self = shared_from_this(), gen = hold_gen_, now](std::vector<result> results) {
                       self->renewed(gen, now, results);
                   });
        }
        schedule_watchdog(renew_failing_ ? ttl_ / 10 : ttl_ / 3);
    }

    void renewed(std::uint64_t gen, clock_type::time_point started, const std::vector<result>& results) {
        renew_in_flight_ = false;
        if (!holding_ || gen != hold_gen_) return;
        switch (redlock::after_renewal(results, ctx_->quorum)) {
        case redlock::renewal::extended:
            valid_until_ = std::max(valid_until_, started + ttl_ - ctx_->drift);
            renew_failing_ = false;
            break;
        case redlock::renewal::lost: lose(make_error_code(errc::node_deleted)); break;  // a majority no longer holds our token
        case redlock::renewal::retry_sooner:
            renew_failing_ = true;  // unreachable: retry sooner until the lease runs out
            schedule_watchdog(ttl_ / 10);
            break;
        }
    }

    void end_hold() {
        holding_ = false;
        ++hold_gen_;
        watchdog_timer_.cancel();
        fence_ = 0;
    }

    void lose(std::error_code why) {
        if (!holding_) return;
        held_ = false;
        busy_ = false;
        end_hold();
        if (!ctx_->abandoned) release_everywhere(token_, nullptr);  // wherever it may still be ours
        losses_->lost(why);
    }

    /// Compare-and-delete on every master; `done`: {} when deleted somewhere,
    /// errc::node_deleted when it was nowhere ours any more, else the first error.
    void release_everywhere(const std::string& token, std::function<void(std::error_code)> done, bool publish = true) {
        on_all(eval(release_script, token, publish ? "1" : "0"), [done = std::move(done)](std::vector<result> results) {
            if (!done) return;
            std::error_code first_error;
            bool deleted = false, answered = false;
            for (const auto& r : results) {
                if (r.k == result::kind::yes) deleted = true;
                if (r.k != result::kind::failed) answered = true;
                else if (!first_error) first_error = r.error;
            }
            if (deleted) return done({});
            done(answered ? make_error_code(errc::node_deleted) : first_error);
        });
    }

    std::shared_ptr<redis_context> ctx_;
    const std::string key_, fence_key_, channel_;
    const std::uint64_t id_;
    const milliseconds ttl_;
    // strand only
    acquire_callback callback_;
    std::uint64_t op_ = 0;
    std::optional<clock_type::time_point> deadline_;
    bool no_wait_ = false;
    bool round_in_flight_ = false, wake_pending_ = false, registered_ = false;
    milliseconds backoff_{first_backoff};
    std::error_code last_error_;
    asio::steady_timer deadline_timer_, retry_timer_, watchdog_timer_;
    std::string token_;
    std::string last_release_seen_;  // the token of the last release message counted as a wake-up
    bool holding_ = false, renew_in_flight_ = false, renew_failing_ = false;
    std::uint64_t hold_gen_ = 0;
    clock_type::time_point valid_until_{};
    std::shared_ptr<detail::loss_reports> losses_;
    // any thread
    std::atomic<std::uint64_t> op_counter_{0};
    std::atomic<bool> held_{false}, busy_{false};
    std::atomic<std::int64_t> fence_{0};
    counter_cells counters_;
};

Lock make_redis_lock(const std::shared_ptr<redis_context>& ctx, const std::string& name) {
    std::string reason;
    if (const auto ec = validate_lock_name(name, &reason)) throw error(ec, "zklock: " + reason + ": '" + name + "'");
    auto backend = std::make_shared<redis_backend>(ctx, RedisLockService::key_for(ctx->options.key_prefix, name));
    backend->register_closer();
    return Lock(std::move(backend));
}

void close_context(const std::shared_ptr<redis_context>& ctx) noexcept {
    try {
        // Graceful: the releases the Locks' destructors queued still reach the server.
        asio::post(ctx->strand, [ctx] { ctx->close(true); });
        if (ctx->own) ctx->own->stop_and_join();
    } catch (...) {
    }
}

void abandon(const std::shared_ptr<redis_context>& ctx) {
    ctx->run_and_wait([&] {
        ctx->abandoned = true;
        ctx->close(false);
    });
}

} // namespace
} // namespace detail

RedisLockService::RedisLockService(const std::string& host_port, RedisOptions options)
    : context_(std::make_shared<detail::redis_context>(std::vector<std::string>{host_port}, std::move(options), "redis")) {}
RedisLockService::~RedisLockService() { detail::close_context(context_); }
Lock RedisLockService::make_lock(const std::string& name) { return detail::make_redis_lock(context_, name); }
lock_capabilities RedisLockService::capabilities() const noexcept { return detail::redis_capabilities("redis"); }
void RedisLockService::abandon_for_testing() { detail::abandon(context_); }
std::string RedisLockService::key_for(std::string_view prefix, std::string_view name) {
    return std::string(prefix) + "{" + std::string(name) + "}";
}

RedlockService::RedlockService(const std::vector<std::string>& host_ports, RedisOptions options)
    : context_(std::make_shared<detail::redis_context>(host_ports, std::move(options), "redlock")) {}
RedlockService::~RedlockService() { detail::close_context(context_); }
Lock RedlockService::make_lock(const std::string& name) { return detail::make_redis_lock(context_, name); }
lock_capabilities RedlockService::capabilities() const noexcept { return detail::redis_capabilities("redlock"); }
void RedlockService::abandon_for_testing() { detail::abandon(context_); }

} // namespace zklock
