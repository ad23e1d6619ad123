#include "backends/postgres/pg_connection.hpp"

#include "support/endpoint_text.hpp"
#include "support/secrets.hpp"

#include <thread>

#include <zklock/error.hpp>

#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>

#include <string_view>
#include <utility>

namespace zklock::detail::pg {
namespace asio = boost::asio;

namespace {

// An SQLSTATE (5 characters of [0-9A-Z]) packed base 36 into the code's value.
class sqlstate_category_impl : public std::error_category {
public:
    const char* name() const noexcept override { return "zklock.postgres.sqlstate"; }
    std::string message(int value) const override {
        std::string state(5, '0');
        for (int i = 4; i >= 0; --i) {
            const int d = value % 36;
            value /= 36;
            state[static_cast<std::size_t>(i)] = static_cast<char>(d < 10 ? '0' + d : 'A' + d - 10);
        }
        return "PostgreSQL error, SQLSTATE " + state;
    }
};

const std::error_category& sqlstate_category() noexcept {
    static const sqlstate_category_impl c;
    return c;
}

// Why a connect failed: the server asked for a password nobody gave (no_auth),
// refused the one given (auth_failed), TLS failed (libpq's words name which
// check), or it is unreachable.
errc connect_failure(PGconn* conn) {
    if (PQconnectionNeedsPassword(conn)) return errc::no_auth;
    const std::string_view message = PQerrorMessage(conn);
    const auto says = [&](std::string_view words) { return message.find(words) != std::string_view::npos; };
    if (says("password authentication failed") || says("authentication failed for user")) return errc::auth_failed;
    if (says("does not match host name")) return errc::tls_wrong_host;
    if (says("certificate has expired") || says("certificate is not yet valid")) return errc::tls_certificate_expired;
    if (says("certificate verify failed")) return errc::tls_untrusted_server;
    if (says("server does not support SSL") || says("SSL error") || says("SSL SYSCALL error") ||
        says("could not load") || says("root certificate file"))
        return errc::tls_handshake_failed;
    // pg_hba.conf has hostssl lines only (or none for this connection
    // without TLS): "no pg_hba.conf entry for host ..., no encryption".
    if (says("no pg_hba.conf entry") && says("no encryption")) return errc::tls_required;
    return errc::connection_loss;
}

// libpq's message, on one line: one "connection to server ... failed: ..."
// per address tried, each ending in a line break.
std::string one_line(std::string_view message) {
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.remove_suffix(1);
    std::string out;
    for (const char c : message) out += c == '\n' ? std::string("; ") : std::string(1, c);
    return redact_secrets(out);
}

} // namespace

std::error_code error_from_sqlstate(const char* sqlstate) {
    if (!sqlstate || std::string_view(sqlstate).size() != 5) return make_error_code(errc::system_error);
    const std::string_view s(sqlstate);
    if (s == "42501") return make_error_code(errc::no_auth);
    if (s == "42883" || s == "42P01") return make_error_code(errc::no_node);
    if (s == "22023") return make_error_code(errc::invalid_argument);
    if (s == "57P01" || s == "57P02" || s == "57P03" || s.starts_with("08"))
        return make_error_code(errc::connection_loss);
    int v = 0;
    for (const char c : s) v = v * 36 + (c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'Z' ? c - 'A' + 10 : 0);
    return {v, sqlstate_category()};
}

std::optional<std::string> first_value(const std::vector<result>& results, int column) {
    if (results.empty()) return std::nullopt;
    PGresult* r = results.back().get();
    if (PQntuples(r) < 1 || PQnfields(r) <= column || PQgetisnull(r, 0, column)) return std::nullopt;
    return std::string(PQgetvalue(r, 0, column), static_cast<std::size_t>(PQgetlength(r, 0, column)));
}

connection::connection(strand_type strand, std::shared_ptr<const void> keep_alive)
    : sd_(strand), timer_(strand), keep_alive_(std::move(keep_alive)) {}

connection::~connection() { close(); }

void connection::connect(const std::string& conninfo, const std::string& app_name, std::chrono::milliseconds timeout,
                         std::function<void(std::error_code)> done) {
    connect_done_ = std::move(done);
    // expand_dbname: `conninfo` may be a whole connection string or URI; the
    // application name goes after it, so the conninfo's own wins.
    const char* keys[] = {"application_name", "dbname", nullptr};
    const char* values[] = {app_name.c_str(), conninfo.c_str(), nullptr};
    conn_ = PQconnectStartParams(keys, values, 1);
    if (!conn_ || PQstatus(conn_) == CONNECTION_BAD) {
        // Refused before any I/O: the connection string cannot be read, or
        // holds a bad value ("invalid sslmode value: ...").
        const auto why = conn_ ? errc::invalid_argument : errc::connection_loss;
        return asio::post(sd_.get_executor(), [self = shared_from_this(), why] { self->fail_connect(make_error_code(why)); });
    }
    note_endpoint();
    // libpq prints notices on stderr by default: they go to the log, or nowhere.
    PQsetNoticeReceiver(
        conn_,
        [](void* arg, const PGresult* r) {
            auto* self = static_cast<connection*>(arg);
            if (!self->on_notice_ || !r) return;
            const char* severity = PQresultErrorField(r, PG_DIAG_SEVERITY_NONLOCALIZED);
            const char* text = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
            const bool warning = severity && std::string_view(severity) == "WARNING";
            self->on_notice_(warning ? log_level::warn : log_level::info,
                             std::string("server ") + (warning ? "warning" : "notice") + ": " + (text ? text : ""));
        },
        this);
    timer_.expires_after(timeout);
    timer_.async_wait([self = shared_from_this(), gen = gen_](boost::system::error_code ec) {
        if (!ec && gen == self->gen_ && self->connect_done_) self->fail_connect(make_error_code(errc::timeout));
    });
    connect_step(PGRES_POLLING_WRITING);
}

std::string connection::endpoint() const { return endpoint_.empty() ? "the server" : endpoint_; }

void connection::note_endpoint() {
    const char* host = conn_ ? PQhost(conn_) : nullptr;
    if (!host || !*host) return;
    const char* port = PQport(conn_);
    endpoint_ = endpoint_text(host, port && *port ? port : "5432");
}

void connection::query(std::string sql, std::vector<std::string> params, bool simple, std::chrono::milliseconds timeout,
                       result_callback done) {
    if (!connected_) {
        return asio::post(sd_.get_executor(),
                          [done = std::move(done)] { done(make_error_code(errc::connection_loss), {}); });
    }
    queue_.push_back({std::move(sql), std::move(params), simple, timeout, std::move(done)});
    if (!active_) send_next();
}

void connection::send_cancel() {
    if (!conn_) return;
    PGcancel* cancel = PQgetCancel(conn_);
    if (!cancel) return;
    // Until PQcancel returns, the server may not have acted on the request yet:
    // a statement sent meanwhile could be the one it cancels. send_next()
    // holds the queue until every request has been handled. The thread keeps
    // the loop alive (tracked work, and the owner's keep-alive for a loop the
    // owner runs) but not the connection.
    ++cancels_in_flight_;
    auto strand = asio::prefer(sd_.get_executor(), asio::execution::outstanding_work.tracked);
    std::thread([cancel, weak = weak_from_this(), strand = std::move(strand), keep = keep_alive_] {
        char err[256];
        PQcancel(cancel, err, sizeof err);
        PQfreeCancel(cancel);
        asio::post(strand, [weak] {
            if (auto self = weak.lock()) {
                --self->cancels_in_flight_;
                self->send_next();
            }
        });
    }).detach();
}

void connection::close() noexcept {
    connected_ = false;
    connect_done_ = nullptr;
    queue_.clear();
    active_.reset();
    on_notify_ = nullptr;
    on_broken_ = nullptr;
    release_fd();
    if (conn_) PQfinish(conn_);
    conn_ = nullptr;
}

void connection::release_fd() noexcept {
    ++gen_;
    timer_.cancel();
    if (sd_.is_open()) {
        boost::system::error_code ignored;
        sd_.cancel(ignored);
        (void)sd_.release();  // never close: libpq owns the socket
    }
    reading_ = writing_ = false;
}

void connection::fail_connect(std::error_code ec) {
    auto done = std::exchange(connect_done_, nullptr);
    connect_error_ = conn_ && ec != errc::timeout ? one_line(PQerrorMessage(conn_)) : std::string();
    close();
    if (done) done(ec);
}

void connection::connect_step(PostgresPollingStatusType status) {
    if (status == PGRES_POLLING_FAILED) return fail_connect(make_error_code(connect_failure(conn_)));
    if (status == PGRES_POLLING_OK) {
        release_fd();  // drops the connect timer too
        if (PQsetnonblocking(conn_, 1) != 0) return fail_connect(make_error_code(errc::connection_loss));
        sd_.assign(PQsocket(conn_));
        connected_ = true;
        note_endpoint();  // the host that answered, of several
        arm_read();
        if (auto done = std::exchange(connect_done_, nullptr)) done({});
        return;
    }
    // The socket can change during connect (another address, SSL retry): bind afresh each step.
    if (sd_.is_open()) {
        boost::system::error_code ignored;
        sd_.cancel(ignored);
        (void)sd_.release();
    }
    sd_.assign(PQsocket(conn_));
    const auto w = status == PGRES_POLLING_READING ? asio::posix::stream_descriptor::wait_read
                                                   : asio::posix::stream_descriptor::wait_write;
    sd_.async_wait(w, [self = shared_from_this(), gen = gen_](boost::system::error_code ec) {
        if (ec || gen != self->gen_ || !self->conn_ || !self->connect_done_) return;
        self->connect_step(PQconnectPoll(self->conn_));
    });
}

void connection::send_next() {
    if (active_ || queue_.empty() || !connected_ || cancels_in_flight_ > 0) return;
    active_ = std::move(queue_.front());
    queue_.pop_front();
    int ok = 0;
    if (active_->simple) {
        ok = PQsendQuery(conn_, active_->sql.c_str());
    } else {
        std::vector<const char*> values;
        std::vector<int> lengths;
        for (const auto& p : active_->params) {
            values.push_back(p.c_str());
            lengths.push_back(static_cast<int>(p.size()));
        }
        ok = PQsendQueryParams(conn_, active_->sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(),
                               lengths.data(), nullptr, 0);
    }
    if (!ok) return broken(make_error_code(errc::connection_loss));
    ++sent_;
    if (active_->timeout != no_deadline) {
        timer_.expires_after(active_->timeout);
        timer_.async_wait([self = shared_from_this(), gen = gen_, n = sent_](boost::system::error_code ec) {
            if (ec || gen != self->gen_ || !self->active_ || n != self->sent_) return;
            self->broken(make_error_code(errc::timeout));
        });
    }
    flush();
}

void connection::flush() {
    const int r = PQflush(conn_);
    if (r < 0) return broken(make_error_code(errc::connection_loss));
    if (r == 1 && !writing_) {
        writing_ = true;
        sd_.async_wait(asio::posix::stream_descriptor::wait_write,
                       [self = shared_from_this(), gen = gen_](boost::system::error_code ec) {
                           if (ec || gen != self->gen_) return;
                           self->writing_ = false;
                           self->flush();
                       });
    }
}

void connection::arm_read() {
    if (reading_ || !connected_) return;
    reading_ = true;
    sd_.async_wait(asio::posix::stream_descriptor::wait_read,
                   [self = shared_from_this(), gen = gen_](boost::system::error_code ec) {
                       if (ec || gen != self->gen_) return;
                       self->reading_ = false;
                       self->on_readable();
                   });
}

void connection::on_readable() {
    if (!PQconsumeInput(conn_) || PQstatus(conn_) == CONNECTION_BAD)
        return broken(make_error_code(errc::connection_loss));
    bool notified = false;
    while (PGnotify* n = PQnotifies(conn_)) {
        notified = true;
        PQfreemem(n);
    }
    const auto gen = gen_;
    auto keep = shared_from_this();
    while (active_ && !PQisBusy(conn_)) {
        if (PGresult* r = PQgetResult(conn_)) {
            active_->results.emplace_back(r);
            continue;
        }
        auto done = std::move(*active_);
        active_.reset();
        timer_.cancel();
        std::error_code ec;
        for (const auto& r : done.results) {
            if (PQresultStatus(r.get()) == PGRES_FATAL_ERROR) {
                ec = error_from_sqlstate(PQresultErrorField(r.get(), PG_DIAG_SQLSTATE));
                break;
            }
        }
        send_next();
        done.done(ec, std::move(done.results));
        if (gen != gen_) return;  // closed by the callback
    }
    if (notified && on_notify_) on_notify_();
    if (gen != gen_) return;
    arm_read();
}

void connection::broken(std::error_code why) {
    auto active = std::move(active_);
    auto queue = std::move(queue_);
    auto on_broken = std::move(on_broken_);
    close();
    if (active) active->done(why, {});
    for (auto& q : queue) q.done(make_error_code(errc::connection_loss), {});
    if (on_broken) on_broken();
}

} // namespace zklock::detail::pg
