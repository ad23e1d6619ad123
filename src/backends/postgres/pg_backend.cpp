// One Lock of a PostgreSQL lock service: the engine's (sql_lock) database
// part on a libpq connection. Its connection sets up the schema and LISTENs on
// the lock's channel (a release NOTIFYs it); the SQL of each method is a
// lock_method (lock_method.hpp), the decisions over what a statement answered
// are postgres_steps'. A server wait (FOR UPDATE, pg_advisory_lock) is
// cancelled with PostgreSQL's cancel request. Everything runs on the strand.
#include "backends/postgres/lock_method.hpp"
#include "backends/postgres/pg_connection.hpp"
#include "backends/postgres/postgres_context.hpp"
#include "backends/postgres/postgres_steps.hpp"
#include "backends/sql/sql_lock.hpp"
#include "backends/sql/sql_steps.hpp"
#include "support/log_emit.hpp"

#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace zklock::detail::pg {
namespace {

// The SQLSTATEs the lock statements are told apart by.
const std::error_code query_canceled = error_from_sqlstate("57014");
const std::error_code lock_not_available = error_from_sqlstate("55P03");

class pg_backend final : public sql::sql_lock_on<connection> {
public:
    pg_backend(std::shared_ptr<postgres_context> ctx, std::string name)
        : sql_lock_on(ctx, std::move(name), {std::chrono::milliseconds(10), std::chrono::milliseconds(500)}),
          pctx_(std::move(ctx)), channel_("zklock_" + sql_steps::hashed_name(name_)), cancel_timer_(pctx_->strand) {}

private:
    const lock_method& method() const noexcept { return pctx_->method; }
    std::string ttl_interval() const { return std::to_string(ttl_.count()) + " milliseconds"; }
    std::shared_ptr<pg_backend> me() { return std::static_pointer_cast<pg_backend>(self()); }

    // The engine's hooks. A lease's statement never waits on the server (its
    // answer comes soon); a server wait is asked to cancel, and its answer
    // settles the acquire.
    void open_connection(std::function<void(std::error_code)> done) override;
    void send_attempt() override;
    bool interrupt_attempt() override {
        if (!by_ttl()) send_cancel_repeatedly();
        return false;
    }
    void attempt_settled() noexcept override { cancel_timer_.cancel(); }
    void send_renewal(std::function<void(bool, std::uint64_t)> done) override;
    void send_release(std::int64_t token, std::function<void(std::error_code)> done) override;
    void send_rollback(std::function<void(std::error_code)> done) override {
        query({"ROLLBACK", {}, true}, [done = std::move(done)](std::error_code ec, std::vector<result>) { done(ec); });
    }

    std::string setup_sql() const;
    /// A cancel that reaches the server before the query does is ignored, so
    /// it is sent again until the query answers.
    void send_cancel_repeatedly();
    /// Sends the acquire statement (after the version method's read, with what it saw).
    void send_statement(const std::string& observed);
    /// `row_missing`: the version method's read found no row for the lock.
    void attempt_answered(std::error_code ec, const std::vector<result>& results, bool row_missing);
    /// Sends `st` on the connection.
    void query(statement st, connection::result_callback done) {
        conn_->query(std::move(st.sql), std::move(st.params), st.simple, no_deadline, std::move(done));
    }

    std::shared_ptr<postgres_context> pctx_;
    std::string channel_;
    boost::asio::steady_timer cancel_timer_;
};

void pg_backend::open_connection(std::function<void(std::error_code)> done) {
    conn_ = std::make_shared<connection>(pctx_->strand, pctx_);
    auto conn = conn_;
    if (pctx_->options.log.callback)  // a copy of the sink: the context owns the thread whose handlers own conn
        conn->on_notice([sink = pctx_->options.log, source = method().capabilities().backend, name = name_](
                            log_level level, const std::string& message) {
            emit(sink, level, source, "lock " + name + ": " + message);
        });
    conn->connect(pctx_->conninfo, method().application_prefix() + name_, pctx_->options.connect_timeout,
                  [self = me(), conn, done = std::move(done)](std::error_code ec) mutable {
                      // The code's words, then libpq's ("authentication failed: connection to server at ...").
                      const auto& why = conn->connect_error();
                      if (!self->connect_ended(conn, ec, why.empty() ? ec.message() : ec.message() + ": " + why, done))
                          return;
                      conn->on_notify([weak = std::weak_ptr<pg_backend>(self)] {
                          if (auto s = weak.lock()) s->notified();
                      });
                      conn->query(self->setup_sql(), {}, true, no_deadline,
                                  [self, conn, done = std::move(done)](std::error_code ec2, std::vector<result>) {
                                      if (ec2 && conn == self->conn_) self->close_connection();
                                      done(ec2);
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

void pg_backend::send_attempt() {
    in_flight_ = true;
    notified_in_flight_ = false;
    if (!prepared_) {
        if (auto prepare = method().prepare(name_)) {
            query(std::move(*prepare), [self = me(), gen = acq_gen_](std::error_code ec, std::vector<result>) {
                if (!self->callback_ || gen != self->acq_gen_) return self->close_if_idle();
                self->in_flight_ = false;
                self->attempt_settled();
                if (ec && !self->abort_) return self->finish(ec, false);
                if (!ec) self->prepared_ = true;
                self->retry_now();
            });
            return;
        }
    }
    counter_cells::bump(counters_.attempts);
    if (auto read = method().read(name_)) {
        // The version method reads first and sends its UPDATE with what it read.
        query(std::move(*read), [self = me(), gen = acq_gen_](std::error_code ec, std::vector<result> results) {
            if (gen != self->acq_gen_) return self->close_if_idle();
            const auto seen = ec ? std::nullopt : first_value(results);
            if (ec || self->abort_ || !seen || *seen == "held") return self->attempt_answered(ec, {}, !ec && !seen);
            self->send_statement(*seen);
        });
        return;
    }
    send_statement({});
}

void pg_backend::send_statement(const std::string& observed) {
    owner_ = random_owner();
    const std::string ttl = ttl_interval();
    query(method().attempt({name_, owner_, ttl, no_wait_, observed}),
          [self = me(), gen = acq_gen_](std::error_code ec, std::vector<result> results) {
              if (gen != self->acq_gen_) return self->close_if_idle();
              self->attempt_answered(ec, results, false);
          });
    lease_sent_ = std::chrono::steady_clock::now();
}

void pg_backend::attempt_answered(std::error_code ec, const std::vector<result>& results, bool row_missing) {
    in_flight_ = false;
    attempt_settled();
    const std::int64_t token = ec ? 0 : sql_steps::token_of(first_value(results));
    postgres_steps::attempt_result r;
    r.granted = token > 0;
    r.failed = static_cast<bool>(ec);
    r.connection_lost = ec == errc::connection_loss;
    r.canceled = ec == query_canceled;
    r.lock_not_available = ec == lock_not_available;
    r.aborted = abort_.has_value();
    r.no_wait = no_wait_;
    r.row_missing = row_missing;
    follow(postgres_steps::after_attempt(method().kind(), r), ec, token);
}

void pg_backend::send_cancel_repeatedly() {
    if (!in_flight_ || !conn_) return;
    conn_->send_cancel();
    cancel_timer_.expires_after(std::chrono::milliseconds(200));
    cancel_timer_.async_wait([self = me()](boost::system::error_code ec) {
        if (!ec) self->send_cancel_repeatedly();
    });
}

void pg_backend::send_renewal(std::function<void(bool, std::uint64_t)> done) {
    const std::string ttl = ttl_interval();
    auto st = method().renew({name_, owner_, ttl, false, {}, fencing_token()});
    if (!st) return;
    query(std::move(*st), [done = std::move(done)](std::error_code ec, std::vector<result> results) {
        const char* rows = ec || results.empty() ? "0" : PQcmdTuples(results.back().get());
        done(static_cast<bool>(ec), std::strtoull(rows, nullptr, 10));
    });
}

void pg_backend::send_release(std::int64_t token, std::function<void(std::error_code)> done) {
    query(method().release(name_, owner_, channel_, token),
          [done = std::move(done)](std::error_code ec, std::vector<result>) { done(ec); });
}

} // namespace

std::shared_ptr<sql::sql_lock> make_lock(std::shared_ptr<postgres_context> ctx, std::string name) {
    return std::make_shared<pg_backend>(std::move(ctx), std::move(name));
}

} // namespace zklock::detail::pg
