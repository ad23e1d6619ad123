#include <zklock/postgres/postgres_fence.hpp>

#include "support/async_support.hpp"
#include "support/blocking_call.hpp"
#include "backends/postgres/pg_connection.hpp"
#include "zklock_fence_sql.hpp"

#include <boost/asio/post.hpp>

#include <charconv>
#include <functional>
#include <future>
#include <utility>
#include <vector>

namespace zklock {
namespace asio = boost::asio;

namespace detail {
namespace {

// Serializes concurrent installs (two-int advisory key space: the first int is
// the one the lock services' schema setup uses, the second picks the fence).
constexpr const char* install_lock = "SELECT pg_advisory_xact_lock(2053925995, 1);\n";
constexpr const char* installed_check = "SELECT to_regprocedure('zklock_fenced_write(text,bigint,bytea)') IS NOT NULL";
constexpr const char* write_sql = "SELECT applied, stored_token FROM zklock_fenced_write($1, $2::bigint, $3::bytea)";
constexpr const char* read_sql = "SELECT fencing_token, value FROM zklock_fenced WHERE resource = $1";

// A bytea parameter in text format: \x and two hex digits a byte.
std::string bytea_hex(std::string_view bytes) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out = "\\x";
    out.reserve(2 + bytes.size() * 2);
    for (const char c : bytes) {
        const auto u = static_cast<unsigned char>(c);
        out += digits[u >> 4];
        out += digits[u & 0xf];
    }
    return out;
}

std::optional<std::string> from_bytea_hex(std::string_view text) {
    if (!text.starts_with("\\x") || text.size() % 2 != 0) return std::nullopt;
    auto nibble = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    std::string out;
    out.reserve(text.size() / 2 - 1);
    for (std::size_t i = 2; i < text.size(); i += 2) {
        const int hi = nibble(text[i]), lo = nibble(text[i + 1]);
        if (hi < 0 || lo < 0) return std::nullopt;
        out += static_cast<char>(hi << 4 | lo);
    }
    return out;
}

std::optional<std::int64_t> to_int64(const std::optional<std::string>& text) {
    if (!text) return std::nullopt;
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
    if (ec != std::errc{} || end != text->data() + text->size()) return std::nullopt;
    return v;
}

std::error_code check_arguments(std::string_view resource, std::int64_t token) {
    if (!valid_fencing_token(token) || resource.empty() || resource.find('\0') != std::string_view::npos)
        return make_error_code(errc::invalid_argument);
    return {};
}

const std::error_code bad_reply = std::make_error_code(std::errc::protocol_error);

// Moves a completion handler into a copyable callback that completes it on its
// associated executor (never inline on the strand).
template <class... Args, class Handler>
std::function<void(Args...)> completer(Handler handler, const asio::any_io_executor& io_ex) {
    auto shared = std::make_shared<Handler>(std::move(handler));
    return [shared, io_ex](Args... args) { post_completion(std::move(*shared), io_ex, std::move(args)...); };
}

} // namespace

struct postgres_fence_state : std::enable_shared_from_this<postgres_fence_state> {
    using results = std::vector<pg::result>;
    using query_callback = std::function<void(std::error_code, results)>;

    std::shared_ptr<own_context> own;
    asio::any_io_executor executor;
    asio::strand<asio::any_io_executor> strand;
    std::string conninfo;
    PostgresFenceOptions options;
    // strand only
    std::shared_ptr<pg::connection> conn;
    std::vector<std::function<void(std::error_code)>> waiting;  // for the connection being opened
    bool closed = false;

    postgres_fence_state(std::string ci, PostgresFenceOptions o, std::shared_ptr<own_context> ow,
                         asio::any_io_executor ex)
        : own(std::move(ow)), executor(std::move(ex)), strand(asio::make_strand(executor)), conninfo(std::move(ci)),
          options(std::move(o)) {}

    bool on_thread() const noexcept {
        if (own) return own->ioc.get_executor().running_in_this_thread();
        return strand.running_in_this_thread();
    }

    /// Posts `fn` to the strand (from any thread).
    template <class F> void post(F fn) {
        asio::post(strand, [self = shared_from_this(), fn = std::move(fn)]() mutable { fn(*self); });
    }

    void shutdown() {
        closed = true;
        if (conn) conn->abort(make_error_code(errc::session_closed));
        conn.reset();
        finish_waiting(make_error_code(errc::session_closed));
    }

    void finish_waiting(std::error_code ec) {
        auto w = std::move(waiting);
        waiting.clear();
        for (auto& f : w) f(ec);
    }

    /// Runs `next` once there is a connection (with the fence installed when
    /// options.install), or with the reason there is none.
    void with_connection(std::function<void(std::error_code)> next) {
        if (closed) return next(make_error_code(errc::session_closed));
        if (conn && conn->connected()) return next({});
        waiting.push_back(std::move(next));
        if (waiting.size() > 1) return;  // already opening
        auto c = std::make_shared<pg::connection>(strand);
        conn = c;
        c->connect(conninfo, "zklock-fence", options.connect_timeout,
                   [self = shared_from_this(), c](std::error_code ec) { self->opened(c, ec); });
    }

    // Connected (or not): check that the fence is installed, install it if allowed.
    void opened(const std::shared_ptr<pg::connection>& c, std::error_code ec) {
        if (c != conn) return;  // shut down meanwhile
        if (ec) return connection_failed(ec);
        if (!options.install) return finish_waiting({});
        c->query(installed_check, {}, true, options.command_timeout,
                 [self = shared_from_this(), c](std::error_code ec2, results r) {
                     if (c != self->conn) return;
                     if (ec2) return self->connection_failed(ec2);
                     if (pg::first_value(r) == "t") return self->finish_waiting({});
                     c->query(std::string(install_lock) + postgres_fence_sql, {}, true, self->options.command_timeout,
                              [self, c](std::error_code ec3, results) {
                                  if (c != self->conn) return;
                                  if (ec3) return self->connection_failed(ec3);
                                  self->finish_waiting({});
                              });
                 });
    }

    void connection_failed(std::error_code ec) {
        if (conn) conn->close();
        conn.reset();
        finish_waiting(ec);
    }

    /// One statement on the connection (opened when needed).
    void run(std::string sql, std::vector<std::string> params, bool simple, query_callback done) {
        with_connection([self = shared_from_this(), sql = std::move(sql), params = std::move(params), simple,
                         done = std::move(done)](std::error_code ec) mutable {
            if (ec) return done(ec, {});
            auto c = self->conn;
            if (!c) return done(make_error_code(errc::connection_loss), {});
            c->query(std::move(sql), std::move(params), simple, self->options.command_timeout,
                     [self, c, done = std::move(done)](std::error_code ec2, results r) {
                         // A broken or timed-out connection is opened afresh next time.
                         if (ec2 && !c->connected() && c == self->conn) self->conn.reset();
                         done(ec2, std::move(r));
                     });
        });
    }

    void write(std::string resource, std::int64_t token, std::string value,
               std::function<void(std::error_code, fenced_write_result)> done) {
        run(write_sql, {std::move(resource), std::to_string(token), bytea_hex(value)}, false,
            [done = std::move(done)](std::error_code ec, results r) {
                if (ec) return done(ec, {});
                const auto applied = pg::first_value(r, 0);
                const auto stored = to_int64(pg::first_value(r, 1));
                if (!applied || !stored) return done(bad_reply, {});
                done({}, fenced_write_result{*applied == "t", *stored});
            });
    }

    void read(std::string resource, std::function<void(std::error_code, std::optional<fenced_value>)> done) {
        run(read_sql, {std::move(resource)}, false, [done = std::move(done)](std::error_code ec, results r) {
            if (ec) return done(ec, std::nullopt);
            if (r.empty() || PQntuples(r.back().get()) == 0) return done({}, std::nullopt);
            const auto token = to_int64(pg::first_value(r, 0));
            const auto raw = pg::first_value(r, 1);  // NULL when written so from SQL
            const auto value = raw ? from_bytea_hex(*raw) : std::optional<std::string>(std::string());
            if (!token || !value) return done(bad_reply, std::nullopt);
            done({}, fenced_value{*token, *value});
        });
    }

    void install(std::function<void(std::error_code)> done) {
        run(std::string(install_lock) + postgres_fence_sql, {}, true,
            [done = std::move(done)](std::error_code ec, results) { done(ec); });
    }
};

namespace {

// Runs `start(callback)` on the strand and waits for the callback's values.
template <class... R, class Start> std::tuple<std::error_code, R...> wait_for(postgres_fence_state& s, Start start) {
    return wait_for_completion<R...>(s.on_thread(), [&](auto done) {
        s.post([done, start = std::move(start)](postgres_fence_state& st) mutable { start(st, done); });
    });
}

} // namespace
} // namespace detail

PostgresFence::PostgresFence(std::string conninfo, PostgresFenceOptions options) {
    if (options.connect_timeout.count() < 1 || options.command_timeout.count() < 1)
        throw error(make_error_code(errc::invalid_argument),
                    "zklock::PostgresFenceOptions: timeouts must be at least 1 ms");
    std::shared_ptr<detail::own_context> own;
    auto executor = options.executor;
    if (!executor) {
        own = detail::own_context::start();
        executor = own->ioc.get_executor();
    }
    state_ = std::make_shared<detail::postgres_fence_state>(std::move(conninfo), std::move(options), std::move(own),
                                                            std::move(executor));
}

PostgresFence::~PostgresFence() {
    try {
        state_->post([](detail::postgres_fence_state& s) { s.shutdown(); });
    } catch (...) {
    }
    if (state_->own) state_->own->stop_and_join();
}

std::string_view PostgresFence::install_sql() noexcept { return detail::postgres_fence_sql; }

fenced_write_result PostgresFence::write(std::string_view resource, std::int64_t token, std::string_view value,
                                         std::error_code& ec) {
    if ((ec = detail::check_arguments(resource, token))) return {};
    auto [e, r] =
        detail::wait_for<fenced_write_result>(*state_, [res = std::string(resource), token, val = std::string(value)](
                                                           detail::postgres_fence_state& s, auto done) mutable {
            s.write(std::move(res), token, std::move(val), std::move(done));
        });
    ec = e;
    return r;
}

fenced_write_result PostgresFence::write(std::string_view resource, std::int64_t token, std::string_view value) {
    std::error_code ec;
    const auto r = write(resource, token, value, ec);
    throw_if(ec, ec == errc::no_node ? "zklock::PostgresFence::write: zklock_fenced_write() is not installed "
                                       "(PostgresFence::install() or zklock_fence.sql)"
                                     : "zklock::PostgresFence::write");
    return r;
}

std::optional<fenced_value> PostgresFence::read(std::string_view resource, std::error_code& ec) {
    if (resource.find('\0') != std::string_view::npos) {
        ec = make_error_code(errc::invalid_argument);
        return std::nullopt;
    }
    auto [e, r] = detail::wait_for<std::optional<fenced_value>>(
        *state_, [res = std::string(resource)](detail::postgres_fence_state& s, auto done) mutable {
            s.read(std::move(res), std::move(done));
        });
    ec = e;
    return r;
}

std::optional<fenced_value> PostgresFence::read(std::string_view resource) {
    std::error_code ec;
    auto r = read(resource, ec);
    throw_if(ec, "zklock::PostgresFence::read");
    return r;
}

void PostgresFence::install(std::error_code& ec) {
    auto [e] =
        detail::wait_for<>(*state_, [](detail::postgres_fence_state& s, auto done) { s.install(std::move(done)); });
    ec = e;
}

void PostgresFence::install() {
    std::error_code ec;
    install(ec);
    throw_if(ec, "zklock::PostgresFence::install");
}

void PostgresFence::async_write_impl(std::string resource, std::int64_t token, std::string value,
                                     asio::any_completion_handler<void(std::error_code, fenced_write_result)> handler) {
    auto done = detail::completer<std::error_code, fenced_write_result>(std::move(handler), state_->executor);
    if (const auto ec = detail::check_arguments(resource, token)) return done(ec, {});
    state_->post([resource = std::move(resource), token, value = std::move(value),
                  done = std::move(done)](detail::postgres_fence_state& s) mutable {
        s.write(std::move(resource), token, std::move(value), std::move(done));
    });
}

void PostgresFence::async_read_impl(
    std::string resource, asio::any_completion_handler<void(std::error_code, std::optional<fenced_value>)> handler) {
    auto done = detail::completer<std::error_code, std::optional<fenced_value>>(std::move(handler), state_->executor);
    state_->post([resource = std::move(resource), done = std::move(done)](detail::postgres_fence_state& s) mutable {
        s.read(std::move(resource), std::move(done));
    });
}

void PostgresFence::async_install_impl(asio::any_completion_handler<void(std::error_code)> handler) {
    auto done = detail::completer<std::error_code>(std::move(handler), state_->executor);
    state_->post([done = std::move(done)](detail::postgres_fence_state& s) mutable { s.install(std::move(done)); });
}

} // namespace zklock
