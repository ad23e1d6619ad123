#include "backends/postgres/pg_backend.hpp"

#include <boost/asio/post.hpp>

#include <cstdio>
#include <string_view>

namespace zklock::detail::pg {
namespace asio = boost::asio;

namespace {

std::uint64_t fnv1a(std::string_view s) {
    std::uint64_t h = 1469598103934665603ull;
    for (const char c : s) {
        h ^= static_cast<unsigned char>(c);
        h *= 1099511628211ull;
    }
    return h;
}

std::string hex(std::uint64_t v) {
    char buf[20];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
}

} // namespace

pg_backend::pg_backend(std::shared_ptr<postgres_context> ctx, std::string name)
    : ctx_(std::move(ctx)), name_(std::move(name)), deadline_timer_(ctx_->strand), retry_timer_(ctx_->strand),
      renew_timer_(ctx_->strand), valid_timer_(ctx_->strand), cancel_timer_(ctx_->strand),
      losses_(detail::loss_reports::make([c = ctx_](std::function<void()> fn) { asio::post(c->strand, std::move(fn)); },
                                         ctx_->executor)) {
    channel_ = "zklock_" + hex(fnv1a(name_));
    ttl_ = ctx_->options.lease_ttl;
    renew_every_ = ctx_->options.renew_interval.count() > 0 ? ctx_->options.renew_interval : ttl_ / 3;
}

pg_backend::~pg_backend() {
    if (conn_) {
        try {
            asio::post(ctx_->strand, [c = std::move(conn_)] { c->close(); });
        } catch (...) {
        }
    }
}

void pg_backend::acquire(std::optional<time_point> deadline, bool no_wait, asio::cancellation_slot slot,
                         acquire_callback callback) {
    const auto post = [c = ctx_](std::function<void()> fn) { asio::post(c->strand, std::move(fn)); };
    if (begin_acquire(shared_from_this(), &pg_backend::gate_, post, slot, callback,
                      [](pg_backend& b) { b.abort_acquire(operation_aborted()); }) == 0)
        return;
    asio::post(ctx_->strand, [self = shared_from_this(), deadline, no_wait, cb = std::move(callback)]() mutable {
        self->start_acquire(deadline, no_wait, std::move(cb));
    });
}

std::error_code pg_backend::release(std::function<void(std::error_code)> done) {
    // A new acquire may start from now on: it queues behind the release on the connection.
    if (!gate_.release()) return make_error_code(errc::not_held);
    asio::post(ctx_->strand, [self = shared_from_this(), done = std::move(done)]() mutable {
        self->do_release(std::move(done));
    });
    return {};
}

void pg_backend::shutdown() noexcept {
    try {
        asio::post(ctx_->strand, [self = shared_from_this()] {
            self->shutting_down_ = true;
            if (self->callback_) self->abort_acquire(operation_aborted());
            if (self->gate_.end_hold()) self->do_release(nullptr);
            self->losses_->end_waits(operation_aborted());
            self->losses_->forget_callbacks();
            self->close_if_idle();
        });
    } catch (...) {
    }
}

void pg_backend::wait_lost(asio::cancellation_slot slot, std::function<void(std::error_code)> callback) {
    losses_->wait(slot, std::move(callback), [self = shared_from_this()] { return self->gate_.held(); });
}

void pg_backend::end_of_service() {
    cancel_timers();
    if (conn_) conn_->close();
    conn_.reset();
    gate_.end_hold();
    if (callback_) finish(make_error_code(errc::session_closed), false);
    losses_->end_waits(make_error_code(errc::session_closed));
}

void pg_backend::ensure_connected(std::function<void(std::error_code)> next) {
    if (ctx_->ended) return next(make_error_code(errc::session_closed));
    if (conn_ && conn_->connected()) return next({});
    if (conn_) conn_->close();
    conn_ = std::make_shared<connection>(ctx_->strand);
    connecting_ = true;
    auto conn = conn_;
    if (ctx_->options.log.callback)  // a copy of the sink: the context owns the thread whose handlers own conn
        conn->on_notice([sink = ctx_->options.log, source = method().capabilities().backend, name = name_](
                            log_level level, const std::string& message) {
            emit(sink, level, source, "lock " + name + ": " + message);
        });
    conn->connect(ctx_->conninfo, method().application_prefix() + name_, ctx_->options.connect_timeout,
                  [self = shared_from_this(), conn, next = std::move(next)](std::error_code ec) mutable {
                      if (ec || conn != self->conn_) {
                          self->connecting_ = false;
                          if (conn == self->conn_) self->conn_.reset();
                          if (ec)
                              self->ctx_->log(log_level::warn, "lock " + self->name_ + ": cannot connect to " +
                                                                   conn->endpoint() + ": " + ec.message());
                          return next(ec ? ec : make_error_code(errc::connection_loss));
                      }
                      self->ctx_->log(log_level::info, "lock " + self->name_ + ": connected to " + conn->endpoint());
                      std::weak_ptr<pg_backend> weak = self;
                      conn->on_broken([weak] {
                          if (auto s = weak.lock()) s->connection_ended();
                      });
                      conn->on_notify([weak] {
                          if (auto s = weak.lock()) s->notified();
                      });
                      conn->query(self->setup_sql(), {}, true, no_deadline,
                                  [self, conn, next = std::move(next)](std::error_code ec2, std::vector<result>) {
                                      self->connecting_ = false;
                                      if (ec2 && conn == self->conn_) {
                                          conn->close();
                                          self->conn_.reset();
                                      }
                                      next(ec2);
                                  });
                  });
}

std::string pg_backend::setup_sql() const {
    // Concurrent CREATE ... IF NOT EXISTS can fail on the catalog's unique
    // indexes: serialise it on a transaction advisory lock (two-int key space,
    // disjoint from the bigint keys of the advisory backend).
    // Without the server's "already exists, skipping" notices: they would reach
    // the log on every connection.
    std::string sql = "BEGIN; SET LOCAL client_min_messages = warning; SELECT pg_advisory_xact_lock(2053925995, 0); "
                      "CREATE SEQUENCE IF NOT EXISTS zklock_fence; ";
    sql += method().create_tables_sql();
    sql += "COMMIT;";
    sql += method().after_setup_sql(channel_);
    return sql;
}

void pg_backend::connection_ended() {
    const auto where = conn_ ? conn_->endpoint() : std::string("the server");
    conn_.reset();
    if (!gate_.held()) return;
    const bool by_ttl = postgres_steps::lives_by_ttl(method().kind());
    ctx_->log(log_level::warn, "lock " + name_ + ": connection to " + where + " lost while held" +
                                   (by_ttl ? "; reconnecting to renew the lease" : ""));
    if (by_ttl) {
        // The lease lives on the server until its TTL: reconnect and renew.
        renew_timer_.expires_after(std::chrono::milliseconds(0));
        renew_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (!ec) self->renew();
        });
        return;
    }
    lost(make_error_code(errc::session_expired));  // the server released the lock with the connection
}

void pg_backend::close_if_idle() {
    if (!shutting_down_ || callback_ || releasing_ || (conn_ && conn_->busy())) return;
    cancel_timers();
    if (conn_) conn_->close();
    conn_.reset();
}

void pg_backend::drop_connection() {
    if (conn_) conn_->close();
    conn_.reset();
}

void pg_backend::cancel_timers() {
    deadline_timer_.cancel();
    retry_timer_.cancel();
    renew_timer_.cancel();
    valid_timer_.cancel();
    cancel_timer_.cancel();
}

} // namespace zklock::detail::pg
