#include "backends/mysql/my_backend.hpp"

#include <boost/asio/post.hpp>

namespace zklock::detail::mysql {
namespace asio = boost::asio;

my_backend::my_backend(std::shared_ptr<mysql_context> ctx, std::string name)
    : ctx_(std::move(ctx)), name_(std::move(name)), deadline_timer_(ctx_->strand), retry_timer_(ctx_->strand),
      renew_timer_(ctx_->strand), valid_timer_(ctx_->strand),
      losses_(detail::loss_reports::make([c = ctx_](std::function<void()> fn) { asio::post(c->strand, std::move(fn)); },
                                         ctx_->executor)) {
    ttl_ = ctx_->options.lease_ttl;
    renew_every_ = ctx_->options.renew_interval.count() > 0 ? ctx_->options.renew_interval : ttl_ / 3;
}

my_backend::~my_backend() {
    if (conn_) {
        try {
            asio::post(ctx_->strand, [c = std::move(conn_)] { c->close(); });
        } catch (...) {
        }
    }
}

void my_backend::acquire(std::optional<time_point> deadline, bool no_wait, asio::cancellation_slot slot,
                         acquire_callback callback) {
    const auto post = [c = ctx_](std::function<void()> fn) { asio::post(c->strand, std::move(fn)); };
    if (begin_acquire(shared_from_this(), &my_backend::gate_, post, slot, callback,
                      [](my_backend& b) { b.abort_acquire(operation_aborted()); }) == 0)
        return;
    asio::post(ctx_->strand, [self = shared_from_this(), deadline, no_wait, cb = std::move(callback)]() mutable {
        self->start_acquire(deadline, no_wait, std::move(cb));
    });
}

std::error_code my_backend::release(std::function<void(std::error_code)> done) {
    if (!gate_.release()) return make_error_code(errc::not_held);
    asio::post(ctx_->strand, [self = shared_from_this(), done = std::move(done)]() mutable {
        self->do_release(std::move(done));
    });
    return {};
}

void my_backend::shutdown() noexcept {
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

void my_backend::wait_lost(asio::cancellation_slot slot, std::function<void(std::error_code)> callback) {
    losses_->wait(slot, std::move(callback), [self = shared_from_this()] { return self->gate_.held(); });
}

std::string my_backend::failure_detail() const {
    std::lock_guard lk(detail_m_);
    return detail_;
}

void my_backend::note_failure(const std::string& what) {
    std::lock_guard lk(detail_m_);
    detail_ = what;
}

void my_backend::end_of_service() {
    cancel_timers();
    if (conn_) conn_->close();
    conn_.reset();
    gate_.end_hold();
    if (callback_) finish(make_error_code(errc::session_closed), false);
    losses_->end_waits(make_error_code(errc::session_closed));
}

void my_backend::ensure_connected(std::function<void(std::error_code)> next) {
    if (ctx_->ended) return next(make_error_code(errc::session_closed));
    if (conn_ && conn_->connected()) return next({});
    if (conn_) conn_->close();
    conn_ = std::make_shared<connection>(ctx_->strand, ctx_);
    connecting_ = true;
    auto conn = conn_;
    conn->connect(ctx_->address, ctx_->options.connect_timeout,
                  [self = shared_from_this(), conn, next = std::move(next)](std::error_code ec, std::string message) mutable {
                      if (ec || conn != self->conn_) {
                          self->connecting_ = false;
                          if (conn == self->conn_) self->conn_.reset();
                          if (ec) {
                              self->note_failure("cannot connect to " + conn->endpoint() + ": " + message);
                              self->ctx_->log(log_level::warn, "lock " + self->name_ + ": cannot connect to " +
                                                                   conn->endpoint() + ": " + message);
                          }
                          return next(ec ? ec : make_error_code(errc::connection_loss));
                      }
                      self->ctx_->log(log_level::info, "lock " + self->name_ + ": connected to " + conn->endpoint());
                      std::weak_ptr<my_backend> weak = self;
                      conn->on_broken([weak] {
                          if (auto s = weak.lock()) s->connection_ended();
                      });
                      self->setup(conn, std::move(next));
                  });
}

// The three setup steps of mysql_statements.hpp: session, create (only when
// something is missing), verify.
void my_backend::setup(std::shared_ptr<connection> conn, std::function<void(std::error_code)> next) {
    auto fail = [self = shared_from_this(), conn, next](std::error_code ec, std::string msg) {
        self->connecting_ = false;
        if (ec == errc::invalid_argument || ec == errc::no_node) msg = "the lock table has the wrong shape: " + msg;
        self->note_failure(msg);
        self->ctx_->log(log_level::warn, "lock " + self->name_ + ": " + msg);
        if (conn == self->conn_) {
            conn->close();
            self->conn_.reset();
        }
        next(ec);
    };
    auto verify = [self = shared_from_this(), conn, next, fail]() {
        conn->query(mysql_sql::verify(self->method()),
                    [self, next, fail](std::error_code ec, std::vector<result> results, std::string msg) {
                        if (!ec && last_value(results) != std::optional<std::string>(mysql_sql::verify_ok))
                            return fail(make_error_code(errc::invalid_argument),
                                        "the lock table's name column is not a unique key of its own");
                        if (ec) return fail(ec, msg);
                        self->connecting_ = false;
                        next({});
                    });
    };
    conn->query(mysql_sql::session(method()), [self = shared_from_this(), conn, fail, verify](
                                                  std::error_code ec, std::vector<result> results, std::string msg) {
        if (ec) return fail(ec, msg);
        if (last_value(results) == std::optional<std::string>(mysql_sql::objects_needed(self->method())))
            return verify();
        conn->query(mysql_sql::create(self->method()),
                    [fail, verify](std::error_code ec2, std::vector<result>, std::string msg2) {
                        if (ec2) return fail(ec2, msg2);
                        verify();
                    });
    });
}

void my_backend::connection_ended() {
    const auto where = conn_ ? conn_->endpoint() : std::string("the server");
    conn_.reset();
    if (!gate_.held()) return;
    const bool by_ttl = mysql_steps::lives_by_ttl(method());
    ctx_->log(log_level::warn, "lock " + name_ + ": connection to " + where + " lost while held" +
                                   (by_ttl ? "; reconnecting to renew the lease" : ""));
    if (by_ttl) {
        renew_timer_.expires_after(std::chrono::milliseconds(0));
        renew_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (!ec) self->renew();
        });
        return;
    }
    lost(make_error_code(errc::session_expired));  // the server released the lock with the connection
}

void my_backend::close_if_idle() {
    if (!shutting_down_ || callback_ || releasing_ || (conn_ && conn_->busy())) return;
    cancel_timers();
    if (conn_) conn_->close();
    conn_.reset();
}

void my_backend::drop_connection() {
    if (conn_) conn_->close();
    conn_.reset();
}

void my_backend::cancel_timers() {
    deadline_timer_.cancel();
    retry_timer_.cancel();
    renew_timer_.cancel();
    valid_timer_.cancel();
}

} // namespace zklock::detail::mysql
