// One Lock of a MySQL-protocol lock service: the engine's (sql_lock) database
// part on a MariaDB Connector/C connection. Its connection sets the session up
// and creates the lock's table when missing; the SQL is mysql_statements', the
// decisions over what it answered are mysql_steps'. MySQL has no notification
// (waiters poll) and no cancel request. Everything runs on the strand.
#include "backends/mysql/my_connection.hpp"
#include "backends/mysql/mysql_context.hpp"
#include "backends/mysql/mysql_statements.hpp"
#include "backends/mysql/mysql_steps.hpp"
#include "backends/sql/sql_lock.hpp"
#include "backends/sql/sql_steps.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace zklock::detail::mysql {
namespace {

using mysql_steps::error_from_mysql;

class my_backend final : public sql::sql_lock_on<connection> {
public:
    my_backend(std::shared_ptr<mysql_context> ctx, std::string name)
        : sql_lock_on(ctx, std::move(name), {std::chrono::milliseconds(2), std::chrono::milliseconds(50)}),
          mctx_(std::move(ctx)) {}

private:
    mysql_sql::lock_args args() const { return {name_, owner_, ttl_, no_wait_, version_}; }
    std::shared_ptr<my_backend> me() { return std::static_pointer_cast<my_backend>(self()); }

    // The engine's hooks.
    void open_connection(std::function<void(std::error_code)> done) override;
    void send_attempt() override;
    /// A statement that may be waiting on the server (FOR UPDATE, GET_LOCK), or
    /// may have been granted there a moment ago, is ended with its connection.
    /// (A KILL QUERY could not be aimed: one that arrives late interrupts
    /// whatever statement the connection runs next.) A lease's or version's
    /// statement answers soon: its answer settles the abort.
    bool interrupt_attempt() override { return mysql_steps::waits_on_server(kind()); }
    void send_renewal(std::function<void(bool, std::uint64_t)> done) override;
    void send_release(std::int64_t token, std::function<void(std::error_code)> done) override;
    void send_rollback(std::function<void(std::error_code)> done) override {
        conn_->query(mysql_sql::rollback,
                     [done = std::move(done)](std::error_code ec, std::vector<result>, std::string) { done(ec); });
    }

    /// The three setup steps of mysql_statements.hpp: session, create (only
    /// when something is missing), verify.
    void setup(std::shared_ptr<connection> conn, std::function<void(std::error_code)> done);
    /// row, version: makes the lock's row first.
    void prepare_row();
    /// version: takes the row at the version read.
    void take_version(std::int64_t read);
    void attempt_answered(std::error_code ec, const std::vector<result>& results, sql_steps::attempt_result r);

    std::shared_ptr<mysql_context> mctx_;
    std::int64_t version_ = 0;  // version: the version read, then the one held
};

void my_backend::open_connection(std::function<void(std::error_code)> done) {
    conn_ = std::make_shared<connection>(mctx_->strand, mctx_);
    auto conn = conn_;
    conn->connect(mctx_->address, mctx_->options.connect_timeout,
                  [self = me(), conn, done = std::move(done)](std::error_code ec, std::string message) mutable {
                      if (self->connect_ended(conn, ec, message, done)) self->setup(conn, std::move(done));
                  });
}

void my_backend::setup(std::shared_ptr<connection> conn, std::function<void(std::error_code)> done) {
    auto fail = [self = me(), conn, done](std::error_code ec, std::string msg) {
        if (ec == errc::invalid_argument || ec == errc::no_node) msg = "the lock table has the wrong shape: " + msg;
        self->note_failure(msg);
        self->context().log(log_level::warn, "lock " + self->name_ + ": " + msg);
        if (conn == self->conn_) self->close_connection();
        done(ec);
    };
    auto verify = [self = me(), conn, done, fail]() {
        conn->query(mysql_sql::verify(self->kind()),
                    [done, fail](std::error_code ec, std::vector<result> results, std::string msg) {
                        if (!ec && last_value(results) != std::optional<std::string>(mysql_sql::verify_ok))
                            return fail(make_error_code(errc::invalid_argument),
                                        "the lock table's name column is not a unique key of its own");
                        if (ec) return fail(ec, msg);
                        done({});
                    });
    };
    conn->query(mysql_sql::session(kind()), [self = me(), conn, fail, verify](std::error_code ec,
                                                                               std::vector<result> results, std::string msg) {
        if (ec) return fail(ec, msg);
        if (last_value(results) == std::optional<std::string>(mysql_sql::objects_needed(self->kind()))) return verify();
        conn->query(mysql_sql::create(self->kind()),
                    [fail, verify](std::error_code ec2, std::vector<result>, std::string msg2) {
                        if (ec2) return fail(ec2, msg2);
                        verify();
                    });
    });
}

void my_backend::send_attempt() {
    const auto m = kind();
    if (!prepared_ && (m == sql_steps::method::row || m == sql_steps::method::version)) return prepare_row();
    owner_ = random_owner();
    in_flight_ = true;
    conn_->query(mysql_sql::attempt(m, args()),
                 [self = me(), gen = acq_gen_](std::error_code ec, std::vector<result> results, std::string message) {
                     if (gen != self->acq_gen_) return self->close_if_idle();
                     self->in_flight_ = false;
                     if (ec) self->note_failure(message);
                     sql_steps::attempt_result r;
                     if (!ec && self->kind() == sql_steps::method::version) {
                         const auto& rows = results.empty() ? std::vector<std::vector<std::optional<std::string>>>{}
                                                            : results.back().rows;
                         std::optional<std::string_view> v, free;
                         if (!rows.empty() && rows.front().size() >= 2) {
                             if (rows.front()[0]) v = *rows.front()[0];
                             if (rows.front()[1]) free = *rows.front()[1];
                         }
                         const auto read = mysql_steps::read_version(v, free);
                         if (read.row_found && read.free && !self->abort_) return self->take_version(read.version);
                         r.row_missing = !read.row_found;
                         return self->attempt_answered(ec, {}, r);  // the read holds no token
                     }
                     self->attempt_answered(ec, results, r);
                 });
    lease_sent_ = std::chrono::steady_clock::now();
    counter_cells::bump(counters_.attempts);
}

// row: a consistent read first, so that a try_lock never waits on the holder's
// record lock (an INSERT IGNORE of an existing row would); version: the row
// is never locked for long, INSERT IGNORE at once.
void my_backend::prepare_row() {
    in_flight_ = true;
    auto inserted = [self = me(), gen = acq_gen_](std::error_code ec, std::vector<result>, std::string message) {
        if (!self->callback_ || gen != self->acq_gen_) return self->close_if_idle();
        self->in_flight_ = false;
        if (ec && !self->abort_) {
            self->note_failure(message);
            return self->finish(ec, false);
        }
        if (!ec) self->prepared_ = true;
        self->retry_now();
    };
    if (kind() == sql_steps::method::version) return conn_->query(mysql_sql::insert_row(kind(), name_), inserted);
    conn_->query(mysql_sql::row_exists(kind(), name_),
                 [self = me(), gen = acq_gen_, inserted](std::error_code ec, std::vector<result> results,
                                                        std::string message) mutable {
                     if (!ec && last_value(results) == std::optional<std::string>("0") && self->conn_ &&
                         gen == self->acq_gen_)
                         return self->conn_->query(mysql_sql::insert_row(self->kind(), self->name_), inserted);
                     if (ec || gen != self->acq_gen_) return inserted(ec, std::move(results), std::move(message));
                     inserted({}, {}, {});  // the row exists
                 });
}

void my_backend::take_version(std::int64_t read) {
    version_ = read;
    in_flight_ = true;
    lease_sent_ = std::chrono::steady_clock::now();
    conn_->query(mysql_sql::version_take(args()), [self = me(), gen = acq_gen_, read](
                                                      std::error_code ec, std::vector<result> results, std::string message) {
        if (gen != self->acq_gen_) return self->close_if_idle();
        self->in_flight_ = false;
        if (ec) self->note_failure(message);
        std::vector<result> token;
        if (!ec && !results.empty() && results.back().affected == 1) {
            result r;
            r.rows.push_back({std::to_string(read + 1)});
            token.push_back(std::move(r));
            self->version_ = read + 1;
        }
        self->attempt_answered(ec, token, {});
    });
}

void my_backend::attempt_answered(std::error_code ec, const std::vector<result>& results, sql_steps::attempt_result r) {
    const std::int64_t token = ec ? 0 : sql_steps::token_of(last_value(results));
    r.granted = token > 0;
    r.failed = static_cast<bool>(ec);
    r.connection_lost = ec == errc::connection_loss;
    r.canceled = ec == error_from_mysql(mysql_steps::er_query_interrupted);
    r.busy = ec == error_from_mysql(mysql_steps::er_dup_entry);
    r.deadlock = ec == error_from_mysql(mysql_steps::er_lock_deadlock);
    r.lock_not_available =
        ec == error_from_mysql(mysql_steps::er_lock_wait_timeout) || ec == error_from_mysql(mysql_steps::er_lock_nowait);
    r.aborted = abort_.has_value();
    r.no_wait = no_wait_;
    follow(mysql_steps::after_attempt(kind(), r), ec, token);
}

void my_backend::send_renewal(std::function<void(bool, std::uint64_t)> done) {
    conn_->query(mysql_sql::renew(kind(), args()),
                 [done = std::move(done)](std::error_code ec, std::vector<result> results, std::string) {
                     done(static_cast<bool>(ec), ec || results.empty() ? 0 : results.back().affected);
                 });
}

void my_backend::send_release(std::int64_t, std::function<void(std::error_code)> done) {
    conn_->query(mysql_sql::release(kind(), args()),
                 [done = std::move(done)](std::error_code ec, std::vector<result>, std::string) { done(ec); });
}

} // namespace

std::shared_ptr<sql::sql_lock> make_lock(std::shared_ptr<mysql_context> ctx, std::string name) {
    return std::make_shared<my_backend>(std::move(ctx), std::move(name));
}

} // namespace zklock::detail::mysql
