#include <zklock/postgres/postgres_lock_service.hpp>

#include "../detail/async_support.hpp"
#include "../detail/counter_cells.hpp"
#include "../detail/loss_reports.hpp"
#include "pg_connection.hpp"

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <libpq-fe.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <deque>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

namespace zklock {
namespace asio = boost::asio;

namespace detail {
namespace {

enum class pg_method { lease, advisory, row };

// The SQLSTATEs the lock statements are told apart by.
const std::error_code query_canceled = pg::error_from_sqlstate("57014");
const std::error_code lock_not_available = pg::error_from_sqlstate("55P03");

using pg_conn = pg::connection;
using pg_result = pg::result;

std::string first_text(const std::vector<pg_result>& results) { return pg::first_value(results).value_or(""); }

std::uint64_t fnv1a(std::string_view s) {
    std::uint64_t h = 1469598103934665603ull;
    for (const char c : s) {
        h ^= static_cast<unsigned char>(c);
        h *= 1099511628211ull;
    }
    return h;
}

std::string random_owner() {
    static std::mutex m;
    static std::mt19937_64 rng{std::random_device{}() ^ static_cast<std::uint64_t>(
                                                            std::chrono::steady_clock::now().time_since_epoch().count())};
    std::lock_guard lk(m);
    char buf[40];
    std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(rng()),
                  static_cast<unsigned long long>(rng()));
    return buf;
}

lock_capabilities capabilities_of(pg_method m) noexcept {
    lock_capabilities c;
    c.reports_loss = true;
    c.fencing_monotonic_across_failover = true;  // a sequence / row counter: as durable as the database
    switch (m) {
    case pg_method::lease:
        c.backend = "postgres-lease";
        c.fair_fifo = false;
        c.dead_holder = dead_holder_release::ttl_expiry;
        c.server_wakes_waiters = true;  // LISTEN/NOTIFY on release
        c.wakes_one_waiter = false;
        c.limits = "one connection per Lock object; not FIFO; a release wakes every waiter (NOTIFY) and expired leases "
                   "are found by jittered polling; a paused holder can outlive its TTL (use the fencing token, a "
                   "sequence that keeps increasing only while the database is durable: fsync on, no failover to a "
                   "lagging replica)";
        break;
    case pg_method::advisory:
        c.backend = "postgres-advisory";
        c.fair_fifo = true;  // the lock manager queues conflicting waiters in arrival order, no barging
        c.dead_holder = dead_holder_release::connection_end;
        c.server_wakes_waiters = true;
        c.wakes_one_waiter = true;
        c.limits = "one connection per Lock object (advisory locks belong to the server session); the key is a 64-bit "
                   "hash of the name, so colliding names exclude each other; a holder cut off from the server keeps "
                   "believing it holds until its connection fails; fencing tokens keep increasing only while the "
                   "database is durable";
        break;
    case pg_method::row:
        c.backend = "postgres-row";
        c.fair_fifo = false;  // a newcomer can lock the row between a release and the first waiter's retry
        c.dead_holder = dead_holder_release::connection_end;
        c.server_wakes_waiters = true;
        c.wakes_one_waiter = true;
        c.limits = "one connection and one open transaction per holder (long holds hold back VACUUM); mostly but not "
                   "strictly FIFO; a holder cut off from the server keeps believing it holds until its connection "
                   "fails; fencing tokens keep increasing only while the database is durable";
        break;
    }
    return c;
}

class pg_backend;

} // namespace

struct postgres_context {
    std::shared_ptr<own_context> own;
    asio::any_io_executor executor;
    asio::strand<asio::any_io_executor> strand;
    pg_method method;
    std::string conninfo;
    PostgresOptions options;
    std::atomic<bool> crashed{false};
    std::mutex m;
    std::vector<std::weak_ptr<pg_backend>> backends;

    postgres_context(pg_method meth, std::string ci, PostgresOptions o, std::shared_ptr<own_context> ow,
                     asio::any_io_executor ex)
        : own(std::move(ow)), executor(std::move(ex)), strand(asio::make_strand(executor)), method(meth),
          conninfo(std::move(ci)), options(std::move(o)) {}
    bool on_thread() const noexcept {
        if (own) return own->ioc.get_executor().running_in_this_thread();
        return strand.running_in_this_thread();
    }
};

namespace {

// One contender for one lock, on its own connection. Everything but the
// atomics runs on the context's strand.
class pg_backend : public lock_backend, public std::enable_shared_from_this<pg_backend> {
public:
    pg_backend(std::shared_ptr<postgres_context> ctx, std::string name)
        : ctx_(std::move(ctx)), name_(std::move(name)), deadline_timer_(ctx_->strand), retry_timer_(ctx_->strand),
          renew_timer_(ctx_->strand), valid_timer_(ctx_->strand), cancel_timer_(ctx_->strand),
          losses_(detail::loss_reports::make([c = ctx_](std::function<void()> fn) { asio::post(c->strand, std::move(fn)); },
                                             ctx_->executor)) {
        channel_ = "zklock_" + hex(fnv1a(name_));
        ttl_ = ctx_->options.lease_ttl;
        renew_every_ = ctx_->options.renew_interval.count() > 0 ? ctx_->options.renew_interval : ttl_ / 3;
    }
    ~pg_backend() override {
        if (conn_) {
            try {
                asio::post(ctx_->strand, [c = std::move(conn_)] { c->close(); });
            } catch (...) {
            }
        }
    }

    void acquire(std::optional<std::chrono::steady_clock::time_point> deadline, bool no_wait,
                 asio::cancellation_slot slot, acquire_callback callback) override {
        if (busy_.exchange(true)) {
            asio::post(ctx_->strand, [cb = std::move(callback)] { cb(make_error_code(errc::already_acquiring), false); });
            return;
        }
        if (slot.is_connected()) {
            slot.assign([weak = weak_from_this()](asio::cancellation_type) {
                if (auto self = weak.lock())
                    asio::post(self->ctx_->strand, [self] { self->abort_acquire(operation_aborted()); });
            });
        }
        asio::post(ctx_->strand, [self = shared_from_this(), deadline, no_wait, cb = std::move(callback)]() mutable {
            self->start_acquire(deadline, no_wait, std::move(cb));
        });
    }

    std::error_code release(std::function<void(std::error_code)> done) override {
        if (!held_.exchange(false)) return make_error_code(errc::not_held);
        busy_ = false;  // a new acquire may start now: it queues behind the release on the connection
        asio::post(ctx_->strand, [self = shared_from_this(), done = std::move(done)]() mutable {
            self->do_release(std::move(done));
        });
        return {};
    }

    void shutdown() noexcept override {
        try {
            asio::post(ctx_->strand, [self = shared_from_this()] {
                self->shutting_down_ = true;
                if (self->callback_) self->abort_acquire(operation_aborted());
                if (self->held_.exchange(false)) {
                    self->busy_ = false;
                    self->do_release(nullptr);
                }
                self->losses_->end_waits(operation_aborted());
                self->losses_->forget_callbacks();
                self->close_if_idle();
            });
        } catch (...) {
        }
    }

    bool held() const noexcept override { return held_.load(); }
    std::int64_t fencing_token() const noexcept override { return token_.load(); }
    void on_lost(std::function<void(std::error_code)> callback) override { losses_->add_callback(std::move(callback)); }
    void wait_lost(asio::cancellation_slot slot, std::function<void(std::error_code)> callback) override {
        losses_->wait(slot, std::move(callback), [self = shared_from_this()] { return self->held_.load(); });
    }
    bool on_backend_thread() const noexcept override { return ctx_->on_thread(); }
    asio::any_io_executor executor() const override { return ctx_->executor; }
    lock_capabilities capabilities() const noexcept override { return capabilities_of(ctx_->method); }
    lock_counters counters() const noexcept override { return counters_.snapshot(); }

    /// The test-only crash: drop the connection, release nothing, tell nobody.
    void crash() {
        cancel_timers();
        if (conn_) conn_->close();
        conn_.reset();
        held_ = false;
        if (callback_) finish(make_error_code(errc::session_closed), false);
        losses_->end_waits(make_error_code(errc::session_closed));
        busy_ = false;
    }

private:
    static std::string hex(std::uint64_t v) {
        char buf[20];
        std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
        return buf;
    }
    std::string ttl_interval() const { return std::to_string(ttl_.count()) + " milliseconds"; }

    // ---- connection ---------------------------------------------------------------
    void ensure_connected(std::function<void(std::error_code)> next) {
        if (ctx_->crashed) return next(make_error_code(errc::session_closed));
        if (conn_ && conn_->connected()) return next({});
        if (conn_) conn_->close();
        conn_ = std::make_shared<pg_conn>(ctx_->strand);
        connecting_ = true;
        const char* prefix = ctx_->method == pg_method::lease ? "zklock-lease:"
                             : ctx_->method == pg_method::advisory ? "zklock-advisory:"
                                                                    : "zklock-row:";
        auto conn = conn_;
        conn->connect(ctx_->conninfo, prefix + name_, ctx_->options.connect_timeout,
                      [self = shared_from_this(), conn, next = std::move(next)](std::error_code ec) mutable {
                          if (ec || conn != self->conn_) {
                              self->connecting_ = false;
                              if (conn == self->conn_) self->conn_.reset();
                              return next(ec ? ec : make_error_code(errc::connection_loss));
                          }
                          std::weak_ptr<pg_backend> weak = self;
                          conn->on_broken([weak] {
                              if (auto s = weak.lock()) s->connection_ended();
                          });
                          conn->on_notify([weak] {
                              if (auto s = weak.lock()) s->notified();
                          });
                          conn->query(self->setup_sql(), {}, true, pg::no_deadline,
                                      [self, conn, next = std::move(next)](std::error_code ec2, std::vector<pg_result>) {
                                          self->connecting_ = false;
                                          if (ec2 && conn == self->conn_) {
                                              conn->close();
                                              self->conn_.reset();
                                          }
                                          next(ec2);
                                      });
                      });
    }

    std::string setup_sql() const {
        // Concurrent CREATE ... IF NOT EXISTS can fail on the catalog's unique
        // indexes: serialise it on a transaction advisory lock (two-int key space,
        // disjoint from the bigint keys of the advisory backend).
        std::string sql = "BEGIN; SELECT pg_advisory_xact_lock(2053925995, 0); "
                          "CREATE SEQUENCE IF NOT EXISTS zklock_fence; ";
        if (ctx_->method == pg_method::lease)
            sql += "CREATE TABLE IF NOT EXISTS zklock_leases(name text PRIMARY KEY, owner text NOT NULL, "
                   "fence bigint NOT NULL, expires_at timestamptz NOT NULL); ";
        // The row's fence comes from the sequence, not fence + 1: a dead holder's
        // transaction rolls back, and a counter in the row would hand its token out again.
        if (ctx_->method == pg_method::row)
            sql += "CREATE TABLE IF NOT EXISTS zklock_rows(name text PRIMARY KEY, fence bigint NOT NULL DEFAULT 0); ";
        sql += "COMMIT;";
        if (ctx_->method == pg_method::lease) sql += " LISTEN " + channel_ + ";";
        return sql;
    }

    void connection_ended() {
        conn_.reset();
        if (!held_) return;
        if (ctx_->method == pg_method::lease) {
            // The lease lives on the server until its TTL: reconnect and renew.
            renew_timer_.expires_after(std::chrono::milliseconds(0));
            renew_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
                if (!ec) self->renew();
            });
            return;
        }
        lost(make_error_code(errc::session_expired));  // the server released the lock with the connection
    }

    void close_if_idle() {
        if (!shutting_down_ || callback_ || releasing_ || (conn_ && conn_->busy())) return;
        cancel_timers();
        if (conn_) conn_->close();
        conn_.reset();
    }

    void drop_connection() {
        if (conn_) conn_->close();
        conn_.reset();
    }

    void cancel_timers() {
        deadline_timer_.cancel();
        retry_timer_.cancel();
        renew_timer_.cancel();
        valid_timer_.cancel();
        cancel_timer_.cancel();
    }

    // ---- acquire ------------------------------------------------------------------
    void start_acquire(std::optional<std::chrono::steady_clock::time_point> deadline, bool no_wait,
                       acquire_callback cb) {
        callback_ = std::move(cb);
        ++acq_gen_;
        no_wait_ = no_wait;
        abort_.reset();
        in_flight_ = false;
        notified_in_flight_ = false;
        backoff_ = std::chrono::milliseconds(10);
        if (ctx_->crashed) return finish(make_error_code(errc::session_closed), false);
        if (deadline) {
            deadline_timer_.expires_at(*deadline);
            deadline_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
                if (!ec) self->abort_acquire(std::error_code{});
            });
        }
        ensure_connected([self = shared_from_this(), gen = acq_gen_](std::error_code ec) {
            if (!self->callback_ || gen != self->acq_gen_) return;  // aborted while connecting
            if (ec) return self->finish(ec, false);
            self->attempt();
        });
    }

    // `why`: {} for the deadline (not acquired, no error), operation_aborted for a cancel.
    void abort_acquire(std::error_code why) {
        if (!callback_ || abort_) return;
        if (in_flight_) {
            abort_ = why;
            if (ctx_->method != pg_method::lease) send_cancel_repeatedly();
            return;  // the attempt's result settles it (and undoes a grant)
        }
        if (connecting_) drop_connection();  // may hold the schema lock: closing frees it
        connecting_ = false;
        finish(why, false);
        close_if_idle();
    }

    // A cancel that reaches the server before the query does is ignored, so it is
    // sent again until the query answers.
    void send_cancel_repeatedly() {
        if (!in_flight_ || !conn_) return;
        conn_->send_cancel();
        cancel_timer_.expires_after(std::chrono::milliseconds(200));
        cancel_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (!ec) self->send_cancel_repeatedly();
        });
    }

    void attempt() {
        if (!callback_) return;
        if (!conn_ || !conn_->connected()) {
            return ensure_connected([self = shared_from_this(), gen = acq_gen_](std::error_code ec) {
                if (!self->callback_ || gen != self->acq_gen_) return;
                if (ec) return self->finish(ec, false);
                self->attempt();
            });
        }
        in_flight_ = true;
        notified_in_flight_ = false;
        auto done = [self = shared_from_this(), gen = acq_gen_](std::error_code ec, std::vector<pg_result> results) {
            if (gen != self->acq_gen_) return self->close_if_idle();
            self->in_flight_ = false;
            self->cancel_timer_.cancel();
            self->attempt_done(ec, std::move(results));
        };
        switch (ctx_->method) {
        case pg_method::lease:
            owner_ = random_owner();
            // The fence is drawn only after the row is ours, while this statement still
            // holds its row lock: a statement whose VALUES drew nextval() first and then
            // ran late could otherwise win the lease after a later holder, with a
            // smaller token (the conformance suite caught this under load). The row's
            // fence column is not used.
            conn_->query("WITH won AS (INSERT INTO zklock_leases(name, owner, fence, expires_at) "
                         "VALUES ($1, $2, 0, now() + $3::interval) "
                         "ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, "
                         "expires_at = excluded.expires_at WHERE zklock_leases.expires_at < now() RETURNING name) "
                         "SELECT nextval('zklock_fence') FROM won",
                         {name_, owner_, ttl_interval()}, false, pg::no_deadline, std::move(done));
            lease_sent_ = std::chrono::steady_clock::now();
            counter_cells::bump(counters_.attempts);
            break;
        case pg_method::advisory:
            if (no_wait_)
                conn_->query("SELECT CASE WHEN pg_try_advisory_lock(hashtextextended($1, 0)) "
                             "THEN nextval('zklock_fence') END",
                             {name_}, false, pg::no_deadline, std::move(done));
            else  // nextval only once the lock is granted: the CTE's row exists only then
                conn_->query("WITH l AS MATERIALIZED (SELECT pg_advisory_lock(hashtextextended($1, 0))) "
                             "SELECT nextval('zklock_fence') FROM l",
                             {name_}, false, pg::no_deadline, std::move(done));
            counter_cells::bump(counters_.attempts);
            break;
        case pg_method::row: {
            if (!row_ensured_) {
                // Outside the lock's transaction, so that a try_lock never waits on another
                // transaction's uncommitted insert of the same row.
                // NOT EXISTS reads the snapshot: an existing row, even one locked and updated by
                // the holder's open transaction, makes it insert nothing and wait for nobody.
                conn_->query("INSERT INTO zklock_rows(name) SELECT $1 WHERE NOT EXISTS "
                             "(SELECT 1 FROM zklock_rows WHERE name = $1) ON CONFLICT DO NOTHING",
                             {name_}, false, pg::no_deadline,
                             [self = shared_from_this(), gen = acq_gen_](std::error_code ec, std::vector<pg_result>) {
                                 if (!self->callback_ || gen != self->acq_gen_) return self->close_if_idle();
                                 self->in_flight_ = false;
                                 self->cancel_timer_.cancel();
                                 if (self->abort_) return self->finish(*self->abort_, false);
                                 if (ec) return self->finish(ec, false);
                                 self->row_ensured_ = true;
                                 self->attempt();
                             });
                return;
            }
            const std::string lit = literal(name_);
            conn_->query("BEGIN; SELECT fence FROM zklock_rows WHERE name = " + lit + " FOR UPDATE" +
                             (no_wait_ ? " NOWAIT" : "") + "; UPDATE zklock_rows SET fence = nextval('zklock_fence') WHERE name = " +
                             lit + " RETURNING fence",
                         {}, true, pg::no_deadline, std::move(done));
            counter_cells::bump(counters_.attempts);
            break;
        }
        }
    }

    static std::string literal(const std::string& s) {
        // Names are validated ([A-Za-z0-9._-]), so quoting alone is safe.
        return "'" + s + "'";
    }

    void attempt_done(std::error_code ec, std::vector<pg_result> results) {
        if (!callback_) return close_if_idle();
        const std::string value = ec ? std::string() : first_text(results);
        const bool granted = !ec && !value.empty();
        const bool aborted = abort_.has_value();
        if (ec == errc::connection_loss) {
            conn_.reset();
            if (aborted) return finish(*abort_, false);
            return finish(ec, false);
        }
        switch (ctx_->method) {
        case pg_method::lease:
            if (ec) return finish(ec, false);
            if (granted) {
                if (aborted) return undo_then_finish(*abort_);
                return grant(std::stoll(value));
            }
            if (aborted) return finish(*abort_, false);
            if (no_wait_) return finish({}, false);
            return wait_for_release();
        case pg_method::advisory:
            if (granted) {
                if (aborted) return undo_then_finish(*abort_);
                return grant(std::stoll(value));
            }
            if (aborted && (ec == query_canceled || !ec)) return finish(*abort_, false);
            return finish(ec, false);  // no_wait and taken: {} and false
        case pg_method::row:
            if (granted) {
                if (aborted) return undo_then_finish(*abort_);
                return grant(std::stoll(value));
            }
            // Not granted: the transaction (if any) is open or aborted; roll it back.
            if (!ec && !aborted) {
                // The row vanished (deleted by hand): insert it again and retry.
                row_ensured_ = false;
                return rollback_then([self = shared_from_this()] { self->attempt(); });
            }
            if (aborted && (ec == query_canceled || !ec)) {
                const auto why = *abort_;
                return rollback_then([self = shared_from_this(), why] { self->finish(why, false); });
            }
            if (ec == lock_not_available && no_wait_)
                return rollback_then([self = shared_from_this()] { self->finish({}, false); });
            return rollback_then([self = shared_from_this(), ec] { self->finish(ec, false); });
        }
    }

    void rollback_then(std::function<void()> next) {
        if (!conn_) return next();
        conn_->query("ROLLBACK", {}, true, pg::no_deadline,
                     [self = shared_from_this(), next = std::move(next)](std::error_code ec, std::vector<pg_result>) {
                         if (ec) self->drop_connection();  // a late cancel hit the rollback: the close ends the transaction
                         next();
                     });
    }

    // A grant that arrived after a cancel or the deadline: give it back first.
    void undo_then_finish(std::error_code why) {
        releasing_ = true;
        release_on_server([self = shared_from_this(), why](std::error_code) {
            self->releasing_ = false;
            self->finish(why, false);
            self->close_if_idle();
        });
    }

    void grant(std::int64_t token) {
        token_ = token;
        held_ = true;
        counter_cells::bump(counters_.acquisitions);
        if (ctx_->method == pg_method::lease) {
            arm_validity(lease_sent_ + ttl_);
            schedule_renew(renew_every_);
        }
        finish({}, true);
    }

    void finish(std::error_code ec, bool acquired) {
        deadline_timer_.cancel();
        retry_timer_.cancel();
        cancel_timer_.cancel();
        waiting_ = false;
        if (!acquired) busy_ = false;
        if (auto cb = std::exchange(callback_, nullptr)) cb(ec, acquired);
        close_if_idle();
    }

    // ---- lease waiting ------------------------------------------------------------
    void wait_for_release() {
        if (notified_in_flight_) return attempt();  // released while our insert was in flight
        waiting_ = true;
        const auto cap = std::min<std::chrono::steady_clock::duration>(ttl_ / 4, std::chrono::milliseconds(500));
        std::uniform_int_distribution<long long> jitter(0, std::chrono::duration_cast<std::chrono::microseconds>(backoff_).count());
        const auto wait = backoff_ / 2 + std::chrono::microseconds(jitter(rng_));
        backoff_ = std::min<std::chrono::steady_clock::duration>(backoff_ * 2, cap);
        retry_timer_.expires_after(wait);
        retry_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (ec || !self->waiting_) return;
            self->waiting_ = false;
            counter_cells::bump(self->counters_.timer_retries);
            self->attempt();
        });
    }

    void notified() {
        if (callback_ && (in_flight_ || waiting_)) counter_cells::bump(counters_.wakeups);
        if (in_flight_) notified_in_flight_ = true;
        if (!waiting_) return;
        waiting_ = false;
        retry_timer_.cancel();
        backoff_ = std::chrono::milliseconds(10);
        attempt();
    }

    // ---- holding ------------------------------------------------------------------
    void arm_validity(std::chrono::steady_clock::time_point until) {
        valid_timer_.expires_at(until);
        valid_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (!ec && self->held_) self->lost(make_error_code(errc::session_expired));
        });
    }

    void schedule_renew(std::chrono::steady_clock::duration after) {
        renew_timer_.expires_after(after);
        renew_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (!ec) self->renew();
        });
    }

    void renew() {
        if (!held_ || ctx_->crashed) return;
        ensure_connected([self = shared_from_this()](std::error_code ec) {
            if (!self->held_) return self->close_if_idle();
            if (ec) return self->schedule_renew(std::chrono::milliseconds(100));
            const auto sent = std::chrono::steady_clock::now();
            self->conn_->query("UPDATE zklock_leases SET expires_at = now() + $3::interval "
                               "WHERE name = $1 AND owner = $2",
                               {self->name_, self->owner_, self->ttl_interval()}, false, pg::no_deadline,
                               [self, sent](std::error_code ec2, std::vector<pg_result> results) {
                                   if (!self->held_) return self->close_if_idle();
                                   if (ec2) return self->schedule_renew(std::chrono::milliseconds(100));
                                   const char* rows = results.empty() ? "0" : PQcmdTuples(results.back().get());
                                   if (std::string(rows) == "0") return self->lost(make_error_code(errc::node_deleted));
                                   self->arm_validity(sent + self->ttl_);
                                   self->schedule_renew(self->renew_every_);
                               });
        });
    }

    void lost(std::error_code why) {
        if (!held_.exchange(false)) return;
        renew_timer_.cancel();
        valid_timer_.cancel();
        busy_ = false;
        losses_->lost(why);
        close_if_idle();
    }

    // ---- release ------------------------------------------------------------------
    void do_release(std::function<void(std::error_code)> done) {
        renew_timer_.cancel();
        valid_timer_.cancel();
        losses_->end_waits({});
        releasing_ = true;
        release_on_server([self = shared_from_this(), done = std::move(done)](std::error_code ec) {
            self->releasing_ = false;
            if (done) done(ec);
            self->close_if_idle();
        });
    }

    void release_on_server(std::function<void(std::error_code)> done) {
        if (!conn_ || !conn_->connected()) {
            // Advisory and row locks went with the connection; a lease row stays until its TTL.
            conn_.reset();
            return done({});
        }
        auto cb = [self = shared_from_this(), done = std::move(done)](std::error_code ec, std::vector<pg_result>) {
            // A failed release (e.g. hit by a late cancel) must not leave the lock held:
            // closing the connection ends the session, and with it the lock.
            if (ec && self->ctx_->method != pg_method::lease) {
                self->drop_connection();
                ec = {};
            }
            done(ec);
        };
        switch (ctx_->method) {
        case pg_method::lease:
            conn_->query("WITH d AS (DELETE FROM zklock_leases WHERE name = $1 AND owner = $2 RETURNING 1) "
                         "SELECT pg_notify($3, '') FROM d",
                         {name_, owner_, channel_}, false, pg::no_deadline, std::move(cb));
            break;
        case pg_method::advisory:
            conn_->query("SELECT pg_advisory_unlock(hashtextextended($1, 0))", {name_}, false, pg::no_deadline, std::move(cb));
            break;
        case pg_method::row:
            conn_->query("COMMIT", {}, true, pg::no_deadline, std::move(cb));
            break;
        }
    }

    std::shared_ptr<postgres_context> ctx_;
    std::string name_;
    std::string channel_;
    std::string owner_;
    std::chrono::milliseconds ttl_{};
    std::chrono::steady_clock::duration renew_every_{};
    std::shared_ptr<pg_conn> conn_;
    asio::steady_timer deadline_timer_, retry_timer_, renew_timer_, valid_timer_, cancel_timer_;
    acquire_callback callback_;
    std::shared_ptr<detail::loss_reports> losses_;
    std::optional<std::error_code> abort_;
    std::chrono::steady_clock::time_point lease_sent_{};
    std::chrono::steady_clock::duration backoff_{};
    std::minstd_rand rng_{std::random_device{}()};
    std::uint64_t acq_gen_ = 0;
    bool no_wait_ = false;
    bool in_flight_ = false;
    bool notified_in_flight_ = false;
    bool waiting_ = false;
    bool connecting_ = false;
    bool releasing_ = false;
    bool shutting_down_ = false;
    bool row_ensured_ = false;
    std::atomic<bool> held_{false};
    std::atomic<bool> busy_{false};
    std::atomic<std::int64_t> token_{0};
    counter_cells counters_;
};

pg_method to_method(int m) {
    return m == 0 ? pg_method::lease : m == 1 ? pg_method::advisory : pg_method::row;
}

} // namespace
} // namespace detail

PostgresLockServiceBase::PostgresLockServiceBase(method m, std::string conninfo, PostgresOptions options) {
    if (options.lease_ttl.count() <= 0)
        throw error(make_error_code(errc::invalid_argument), "zklock::PostgresOptions: lease_ttl must be positive");
    if (options.renew_interval.count() < 0 || options.renew_interval >= options.lease_ttl)
        throw error(make_error_code(errc::invalid_argument),
                    "zklock::PostgresOptions: renew_interval must be shorter than lease_ttl");
    std::shared_ptr<detail::own_context> own;
    auto executor = options.executor;
    if (!executor) {
        own = detail::own_context::start();
        executor = own->ioc.get_executor();
    }
    context_ = std::make_shared<detail::postgres_context>(detail::to_method(static_cast<int>(m)), std::move(conninfo),
                                                          std::move(options), std::move(own), std::move(executor));
}

PostgresLockServiceBase::~PostgresLockServiceBase() {
    if (context_->own) context_->own->stop_and_join();
}

Lock PostgresLockServiceBase::make_lock(const std::string& name) {
    std::string reason;
    if (const auto ec = validate_lock_name(name, &reason)) throw error(ec, "zklock: " + reason + ": '" + name + "'");
    auto backend = std::make_shared<detail::pg_backend>(context_, name);
    {
        std::lock_guard lk(context_->m);
        auto& v = context_->backends;
        v.erase(std::remove_if(v.begin(), v.end(), [](const auto& w) { return w.expired(); }), v.end());
        v.push_back(backend);
    }
    return Lock(std::move(backend));
}

lock_capabilities PostgresLockServiceBase::capabilities() const noexcept {
    return detail::capabilities_of(context_->method);
}

void PostgresLockServiceBase::simulate_crash_for_testing() noexcept {
    context_->crashed = true;
    std::vector<std::shared_ptr<detail::pg_backend>> live;
    {
        std::lock_guard lk(context_->m);
        for (const auto& w : context_->backends)
            if (auto b = w.lock()) live.push_back(std::move(b));
    }
    auto done = std::make_shared<std::promise<void>>();
    auto f = done->get_future();
    try {
        asio::post(context_->strand, [live, done] {
            for (const auto& b : live) b->crash();
            done->set_value();
        });
        if (!context_->on_thread()) f.wait();
    } catch (...) {
    }
}

PostgresLeaseLockService::PostgresLeaseLockService(std::string conninfo, PostgresOptions options)
    : PostgresLockServiceBase(method::lease, std::move(conninfo), std::move(options)) {}
PostgresAdvisoryLockService::PostgresAdvisoryLockService(std::string conninfo, PostgresOptions options)
    : PostgresLockServiceBase(method::advisory, std::move(conninfo), std::move(options)) {}
PostgresRowLockService::PostgresRowLockService(std::string conninfo, PostgresOptions options)
    : PostgresLockServiceBase(method::row, std::move(conninfo), std::move(options)) {}

} // namespace zklock
