#include "backends/mysql/my_connection.hpp"

#include "backends/mysql/mysql_steps.hpp"

#include <zklock/error.hpp>

#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/post.hpp>

#include <mysql.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

namespace zklock::detail::mysql {
namespace asio = boost::asio;

// What a connection's thread and the strand share (under m, except `mysql`,
// which only the thread touches). The thread holds no user callback and no
// executor of its own: answers go through post(), which close() disables, so
// a thread that outlives its service touches nothing of it.
struct connection_state {
    std::mutex m;
    std::optional<connection::strand_type> strand;  // where answers go; reset by close()
    std::deque<std::function<void()>> jobs;
    bool stop = false;
    bool running = false;  // a statement is in the client library's hands
    bool dead = false;     // the connection broke (or never was)
    int sock = -1;         // the connected socket, for close()'s shutdown
    int wake_fd = -1;      // eventfd: a job was queued, or stop
    MYSQL* mysql = nullptr;

    connection_state() : wake_fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}
    ~connection_state() {
        if (wake_fd >= 0) ::close(wake_fd);
    }
    void wake() noexcept {
        const std::uint64_t one = 1;
        if (wake_fd >= 0) (void)!::write(wake_fd, &one, sizeof one);
    }
    /// Posts `fn` to the strand unless the connection was closed.
    void post(std::function<void()> fn) {
        std::lock_guard lk(m);
        if (strand) asio::post(*strand, std::move(fn));
    }
    void push(std::function<void()> job) {
        {
            std::lock_guard lk(m);
            jobs.push_back(std::move(job));
        }
        wake();
    }
};

namespace {

// A statement in the connection's thread, as work of the strand's execution
// context (so that its run() waits for the answer to be posted): an executor
// that tracks outstanding work. It goes first (members end in reverse order),
// then the owner that keeps the context alive for it.
struct statement_work {
    statement_work(std::shared_ptr<void> o, const connection::strand_type& strand)
        : owner(std::move(o)), tracked(asio::prefer(strand.get_inner_executor(), asio::execution::outstanding_work.tracked)) {}
    std::shared_ptr<void> owner;
    asio::any_io_executor tracked;
};

// mysql_library_init is not thread-safe: once, before any connection.
void library_init() {
    static std::once_flag once;
    std::call_once(once, [] { mysql_library_init(0, nullptr, nullptr); });
}

bool connection_error(unsigned number) { return number >= 2000 && number < 3000; }

// A blocking connect of `a`; nullptr and the error otherwise. The socket is
// made close-on-exec at once.
MYSQL* open_mysql(const mysql_address& a, std::chrono::milliseconds timeout, unsigned& number, std::string& message) {
    library_init();
    MYSQL* m = mysql_init(nullptr);
    if (!m) {
        number = 2008;  // out of memory
        message = "mysql_init failed";
        return nullptr;
    }
    const unsigned seconds = static_cast<unsigned>(std::max<long long>(1, (timeout.count() + 999) / 1000));
    mysql_optionsv(m, MYSQL_OPT_CONNECT_TIMEOUT, &seconds);
    const unsigned protocol = a.socket.empty() ? MYSQL_PROTOCOL_TCP : MYSQL_PROTOCOL_SOCKET;
    mysql_optionsv(m, MYSQL_OPT_PROTOCOL, &protocol);
    mysql_optionsv(m, MYSQL_READ_DEFAULT_FILE, nullptr);  // no option files: nothing but the address
    if (a.tls != tls_mode::disabled) {
        // Connector/C checks the chain whenever a CA is given, the host name
        // with VERIFY_SERVER_CERT; ENFORCE refuses a server without TLS.
        const my_bool on = 1;
        const my_bool verify_host = a.tls == tls_mode::verify_identity;
        mysql_optionsv(m, MYSQL_OPT_SSL_ENFORCE, &on);
        mysql_optionsv(m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &verify_host);
        if (!a.ssl_ca.empty()) mysql_optionsv(m, MYSQL_OPT_SSL_CA, a.ssl_ca.c_str());
        if (!a.ssl_cert.empty()) mysql_optionsv(m, MYSQL_OPT_SSL_CERT, a.ssl_cert.c_str());
        if (!a.ssl_key.empty()) mysql_optionsv(m, MYSQL_OPT_SSL_KEY, a.ssl_key.c_str());
    }
    if (!mysql_real_connect(m, a.socket.empty() ? a.host.c_str() : "localhost", a.user.empty() ? nullptr : a.user.c_str(),
                            a.password.empty() ? nullptr : a.password.c_str(),
                            a.database.empty() ? nullptr : a.database.c_str(), a.port,
                            a.socket.empty() ? nullptr : a.socket.c_str(), CLIENT_MULTI_STATEMENTS | CLIENT_FOUND_ROWS)) {
        number = mysql_errno(m);
        message = mysql_error(m);
        // MariaDB refuses a connection without TLS under
        // require_secure_transport=ON as it refuses a password.
        if (number == 1045 && a.tls == tls_mode::disabled)
            message += " (a server with require_secure_transport=ON refuses a connection without TLS so too: see "
                       "ssl_mode)";
        mysql_close(m);
        return nullptr;
    }
    // Connector/C opens its TCP sockets with SOCK_CLOEXEC, a Unix socket
    // without: close-on-exec from here on (a fork in another thread during
    // the connect could still inherit it).
    const int fd = static_cast<int>(mysql_get_socket(m));
    if (fd >= 0) ::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) | FD_CLOEXEC);
    return m;
}

// Runs `sql` to its end: every result, or the first error.
void run(MYSQL* m, const std::string& sql, std::vector<result>& out, unsigned& number, std::string& message) {
    if (mysql_real_query(m, sql.data(), sql.size()) != 0) {
        number = mysql_errno(m);
        message = mysql_error(m);
        return;
    }
    while (true) {
        result r;
        if (MYSQL_RES* res = mysql_store_result(m)) {
            const unsigned n = mysql_num_fields(res);
            while (MYSQL_ROW row = mysql_fetch_row(res)) {
                const unsigned long* lengths = mysql_fetch_lengths(res);
                std::vector<std::optional<std::string>> values;
                for (unsigned i = 0; i < n; ++i)
                    values.push_back(row[i] ? std::optional<std::string>(std::string(row[i], lengths[i])) : std::nullopt);
                r.rows.push_back(std::move(values));
            }
            mysql_free_result(res);
        } else if (mysql_field_count(m) != 0) {
            number = mysql_errno(m);
            message = mysql_error(m);
            return;
        } else {
            r.affected = mysql_affected_rows(m);
        }
        out.push_back(std::move(r));
        const int next = mysql_next_result(m);
        if (next < 0) return;
        if (next > 0) {
            number = mysql_errno(m);
            message = mysql_error(m);
            return;
        }
    }
}

// `KILL id` (the connection, not only its statement) over a connection of
// its own, on a thread of its own.
void kill_on_server(const mysql_address& a, unsigned long id) {
    std::thread([a, id] {
        mysql_thread_init();
        unsigned number = 0;
        std::string message;
        if (MYSQL* m = open_mysql(a, std::chrono::seconds(5), number, message)) {
            const std::string sql = "KILL " + std::to_string(id);
            (void)mysql_real_query(m, sql.data(), sql.size());
            mysql_close(m);
        }
        mysql_thread_end();
    }).detach();
}

// The connection's thread: jobs in order; while idle and connected, a watch
// on the socket (readable or hung up while no statement runs: the server
// ended the connection).
void worker(std::shared_ptr<connection_state> st, const std::function<void()>& on_dead) {
    mysql_thread_init();
    bool reported = false;
    while (true) {
        std::function<void()> job;
        int sock = -1;
        {
            std::lock_guard lk(st->m);
            if (st->stop) break;
            if (!st->jobs.empty()) {
                job = std::move(st->jobs.front());
                st->jobs.pop_front();
            } else if (!st->dead) {
                sock = st->sock;
            }
        }
        if (job) {
            job();
            continue;
        }
        pollfd fds[2] = {{st->wake_fd, POLLIN, 0}, {sock, POLLIN, 0}};
        const int r = ::poll(fds, sock >= 0 ? 2 : 1, -1);
        if (r < 0 && errno != EINTR) break;
        if (fds[0].revents) {
            std::uint64_t n = 0;
            (void)!::read(st->wake_fd, &n, sizeof n);
        }
        if (sock >= 0 && fds[1].revents && !reported) {
            {
                std::lock_guard lk(st->m);
                if (!st->jobs.empty() || st->stop) continue;  // a statement's answer is no hang-up
                st->dead = true;
            }
            reported = true;
            on_dead();
        }
    }
    {
        std::lock_guard lk(st->m);
        st->sock = -1;
    }
    if (st->mysql) mysql_close(st->mysql);
    st->mysql = nullptr;
    mysql_thread_end();
}

} // namespace

std::optional<std::string> last_value(const std::vector<result>& results, std::size_t column) {
    if (results.empty()) return std::nullopt;
    const auto& r = results.back();
    if (r.rows.empty() || r.rows.front().size() <= column) return std::nullopt;
    return r.rows.front()[column];
}

connection::connection(strand_type strand, std::shared_ptr<void> owner)
    : strand_(std::move(strand)), owner_(std::move(owner)), timer_(strand_) {}

connection::~connection() { close(); }

void connection::post_answer(std::function<void()> fn) { asio::post(strand_, std::move(fn)); }

void connection::connect(const mysql_address& address, std::chrono::milliseconds timeout,
                         std::function<void(std::error_code, std::string)> done) {
    address_ = address;
    endpoint_ = address.endpoint();
    connect_done_ = std::move(done);
    state_ = std::make_shared<connection_state>();
    state_->strand = strand_;
    auto st = state_;
    std::weak_ptr<connection> weak = shared_from_this();
    const auto gen = gen_;
    // The thread reports a hang-up seen while idle.
    auto on_dead = [st, weak, gen] {
        st->post([weak, gen] {
            auto self = weak.lock();
            if (!self || gen != self->gen_ || !self->connected_) return;
            self->connected_ = false;
            if (auto fn = std::exchange(self->on_broken_, nullptr)) fn();
        });
    };
    st->push([st, address, timeout, weak, gen] {
        unsigned number = 0;
        std::string message;
        MYSQL* m = open_mysql(address, timeout, number, message);
        unsigned long id = 0;
        {
            std::lock_guard lk(st->m);
            st->mysql = m;
            if (m) {
                st->sock = static_cast<int>(mysql_get_socket(m));
                id = mysql_thread_id(m);
            } else {
                st->dead = true;
            }
        }
        st->post([weak, gen, number, message = std::move(message), id] {
            auto self = weak.lock();
            if (!self || gen != self->gen_ || !self->connect_done_) return;
            self->timer_.cancel();
            auto done = std::exchange(self->connect_done_, nullptr);
            if (number != 0) {
                self->close();
                return done(mysql_steps::error_from_connect(number, message), message);
            }
            self->connected_ = true;
            self->server_id_ = id;
            done({}, {});
        });
    });
    std::thread([st, on_dead = std::move(on_dead)] { worker(st, on_dead); }).detach();
    timer_.expires_after(timeout);
    timer_.async_wait([weak, gen](boost::system::error_code ec) {
        auto self = weak.lock();
        if (ec || !self || gen != self->gen_ || !self->connect_done_) return;
        auto done = std::exchange(self->connect_done_, nullptr);
        self->close();
        done(make_error_code(errc::timeout), "no answer within the connect timeout");
    });
}

void connection::query(std::string sql, result_callback done) {
    if (!connected_ || !state_) {
        return post_answer([done = std::move(done)] { done(make_error_code(errc::connection_loss), {}, {}); });
    }
    ++active_;
    pending_.push_back(std::move(done));
    auto st = state_;
    std::weak_ptr<connection> weak = shared_from_this();
    auto work = std::make_shared<statement_work>(owner_, strand_);
    st->push([st, sql = std::move(sql), weak, gen = gen_, work = std::move(work)]() mutable {
        std::vector<result> results;
        unsigned number = 0;
        std::string message;
        bool dead = false;
        {
            std::lock_guard lk(st->m);
            dead = st->dead || !st->mysql;
            st->running = !dead;
        }
        if (dead) {
            number = 2006;  // server gone
        } else {
            run(st->mysql, sql, results, number, message);
        }
        {
            std::lock_guard lk(st->m);
            st->running = false;
            if (connection_error(number)) st->dead = true;
        }
        st->post([weak, gen, number, results = std::move(results), message = std::move(message)]() mutable {
            auto self = weak.lock();
            if (!self || gen != self->gen_ || self->pending_.empty()) return;
            if (self->active_ > 0) --self->active_;
            auto done = std::move(self->pending_.front());
            self->pending_.pop_front();
            const bool broke = connection_error(number) && self->connected_;
            if (broke) self->connected_ = false;
            done(number ? mysql_steps::error_from_mysql(number) : std::error_code{}, std::move(results),
                 std::move(message));
            if (broke && self->gen_ == gen)
                if (auto fn = std::exchange(self->on_broken_, nullptr)) fn();
        });
    });
}

void connection::close() noexcept {
    ++gen_;
    connected_ = false;
    connect_done_ = nullptr;
    on_broken_ = nullptr;
    try {
        timer_.cancel();
    } catch (...) {
    }
    if (!state_) return;
    pending_.clear();
    bool was_running = false;
    {
        std::lock_guard lk(state_->m);
        state_->strand.reset();
        state_->stop = true;
        state_->jobs.clear();
        was_running = state_->running;
        if (state_->sock >= 0) ::shutdown(state_->sock, SHUT_RDWR);
    }
    state_->wake();
    // A statement that waited on the server (GET_LOCK, FOR UPDATE) would go on
    // waiting there after our side closed: end the server's session too.
    if ((was_running || active_ > 0) && server_id_ != 0) {
        try {
            kill_on_server(address_, server_id_);
        } catch (...) {
        }
    }
    active_ = 0;
    state_.reset();
}

} // namespace zklock::detail::mysql
