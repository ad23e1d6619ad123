#include <zklock/redis/redis_fence.hpp>

#include "support/async_support.hpp"
#include "support/blocking_call.hpp"
#include "backends/redis/connection.hpp"

#include <boost/asio/post.hpp>

#include <charconv>
#include <functional>
#include <future>
#include <tuple>
#include <utility>
#include <vector>

#include <pthread.h>
#include <signal.h>

namespace zklock {
namespace asio = boost::asio;

namespace detail {
namespace {

using redis::connection;
using redis::reply;

// Tokens are compared digit by digit as exact decimal integers: Lua numbers
// are doubles (exact only up to 2^53) and Lua's string order follows the
// server's collation locale.
constexpr const char* fence_script = R"lua(-- zklock fenced write
local function canonical(t) return #t <= 19 and string.match(t, '^[1-9][0-9]*$') ~= nil end
local function older(a, b)
  if #a ~= #b then return #a < #b end
  for i = 1, #a do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return false
end
local token = ARGV[1]
if not canonical(token) then
  return redis.error_reply('ERR zklock fence: the token must be a positive decimal integer')
end
local stored = redis.call('GET', KEYS[2])
if stored then
  if not canonical(stored) then return redis.error_reply('ERR zklock fence: the token key holds no token') end
  if older(token, stored) then return {0, stored} end
end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('SET', KEYS[2], token)
return {1, token}
)lua";

constexpr const char* token_suffix = ":fencing-token";

std::optional<std::int64_t> to_int64(std::string_view text) {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
    return v;
}

redis_address fence_address(const std::string& text, const RedisFenceOptions& o) {
    auto refuse = [](const std::string& why) {
        return error(make_error_code(errc::invalid_argument), "zklock::RedisFence: " + why);
    };
    if (o.connect_timeout.count() < 1 || o.command_timeout.count() < 1) throw refuse("timeouts must be at least 1 ms");
    if (o.db < 0) throw refuse("a negative db number");
    if (o.password.empty() && !o.user.empty()) throw refuse("a user without a password");
    std::error_code ec;
    std::string reason;
    auto a = resolve_redis_address(text, o.user, o.password, o.db, ec, &reason);
    if (ec) throw refuse(reason);
    return a;
}


std::error_code check_arguments(std::string_view key, std::int64_t token) {
    if (!valid_fencing_token(token) || key.empty()) return make_error_code(errc::invalid_argument);
    return {};
}

// The script's own error replies are bad input, not a protocol failure.
std::error_code script_error(std::error_code ec, const reply& r) {
    if (r.type == reply::kind::error && r.str.find("zklock fence:") != std::string::npos)
        return make_error_code(errc::invalid_argument);
    return ec;
}

template <class... Args, class Handler>
std::function<void(Args...)> completer(Handler handler, const asio::any_io_executor& io_ex) {
    auto shared = std::make_shared<Handler>(std::move(handler));
    return [shared, io_ex](Args... args) { post_completion(std::move(*shared), io_ex, std::move(args)...); };
}

} // namespace

struct redis_fence_state : std::enable_shared_from_this<redis_fence_state> {
    std::shared_ptr<own_context> own;  // outlives the connection
    asio::any_io_executor executor;
    redis::strand_type strand;
    std::shared_ptr<connection> conn;
    // strand only
    std::string sha;       // of the script, once SCRIPT LOAD answered
    bool loading = false;  // a SCRIPT LOAD is on its way

    redis_fence_state(redis_address address, const RedisFenceOptions& o)
        : own(redis::own_thread_unless(o.executor)),
          executor(own ? asio::any_io_executor(own->ioc.get_executor()) : o.executor),
          strand(asio::make_strand(executor)),
          conn(std::make_shared<connection>(strand, std::move(address), o.connect_timeout, o.command_timeout)) {}

    bool on_thread() const noexcept {
        if (own) return own->ioc.get_executor().running_in_this_thread();
        return strand.running_in_this_thread();
    }

    template <class F> void post(F fn) {
        asio::post(strand, [self = shared_from_this(), fn = std::move(fn)]() mutable { fn(*self); });
    }

    void load(std::function<void(std::error_code)> done) {
        loading = true;
        conn->command({"SCRIPT", "LOAD", fence_script},
                      [self = shared_from_this(), done = std::move(done)](std::error_code ec, reply r) {
                          self->loading = false;
                          if (!ec && r.type != reply::kind::string)
                              ec = std::make_error_code(std::errc::protocol_error);
                          if (!ec) self->sha = r.str;
                          if (done) done(ec);
                      });
    }

    void write(std::string key, std::int64_t token, std::string value,
               std::function<void(std::error_code, fenced_write_result)> done) {
        auto tail = std::make_shared<std::vector<std::string>>(
            std::vector<std::string>{"2", key, key + token_suffix, std::to_string(token), std::move(value)});
        auto finish = [done = std::move(done)](std::error_code ec, const reply& r) {
            if (ec) return done(script_error(ec, r), {});
            if (r.type != reply::kind::array || r.elements.size() != 2 || r.elements[0].type != reply::kind::integer)
                return done(std::make_error_code(std::errc::protocol_error), {});
            const auto stored = to_int64(r.elements[1].str);
            if (!stored) return done(std::make_error_code(std::errc::protocol_error), {});
            done({}, fenced_write_result{r.elements[0].integer == 1, *stored});
        };
        if (sha.empty()) {
            // EVAL works without the SHA (and caches the script); learn the SHA for the next writes.
            if (!loading) load(nullptr);
            return eval(tail, std::move(finish));
        }
        std::vector<std::string> args{"EVALSHA", sha};
        args.insert(args.end(), tail->begin(), tail->end());
        conn->command(
            args, [self = shared_from_this(), tail, finish = std::move(finish)](std::error_code ec, reply r) mutable {
                // The server forgot the script (restart, SCRIPT FLUSH): EVAL runs and caches it again.
                if (ec && r.type == reply::kind::error && r.str.starts_with("NOSCRIPT"))
                    return self->eval(tail, std::move(finish));
                finish(ec, r);
            });
    }

    template <class F> void eval(const std::shared_ptr<std::vector<std::string>>& tail, F finish) {
        std::vector<std::string> args{"EVAL", fence_script};
        args.insert(args.end(), tail->begin(), tail->end());
        conn->command(args, [finish = std::move(finish)](std::error_code ec, reply r) mutable { finish(ec, r); });
    }

    void read(std::string key, std::function<void(std::error_code, std::optional<fenced_value>)> done) {
        conn->command({"MGET", key, key + token_suffix}, [done = std::move(done)](std::error_code ec, reply r) {
            if (ec) return done(ec, std::nullopt);
            if (r.type != reply::kind::array || r.elements.size() != 2)
                return done(std::make_error_code(std::errc::protocol_error), std::nullopt);
            if (r.elements[1].type == reply::kind::nil) return done({}, std::nullopt);
            const auto token = to_int64(r.elements[1].str);
            if (!token) return done(make_error_code(errc::invalid_argument), std::nullopt);
            done({}, fenced_value{*token, r.elements[0].str});
        });
    }
};

namespace {

template <class... R, class Start> std::tuple<std::error_code, R...> wait_for(redis_fence_state& s, Start start) {
    return wait_for_completion<R...>(s.on_thread(), [&](auto done) {
        s.post([done, start = std::move(start)](redis_fence_state& st) mutable { start(st, done); });
    });
}

} // namespace
} // namespace detail

RedisFence::RedisFence(const std::string& address, RedisFenceOptions options)
    : state_(std::make_shared<detail::redis_fence_state>(detail::fence_address(address, options), options)) {}

RedisFence::~RedisFence() {
    try {
        // Graceful: writes already sent still get their replies.
        state_->post([](detail::redis_fence_state& s) { s.conn->close(true); });
    } catch (...) {
    }
    if (state_->own) state_->own->stop_and_join();
}

std::string RedisFence::token_key(std::string_view key) { return std::string(key) + detail::token_suffix; }
std::string_view RedisFence::script() noexcept { return detail::fence_script; }

fenced_write_result RedisFence::write(std::string_view key, std::int64_t token, std::string_view value,
                                      std::error_code& ec) {
    if ((ec = detail::check_arguments(key, token))) return {};
    auto [e, r] = detail::wait_for<fenced_write_result>(*state_, [k = std::string(key), token, v = std::string(value)](
                                                                     detail::redis_fence_state& s, auto done) mutable {
        s.write(std::move(k), token, std::move(v), std::move(done));
    });
    ec = e;
    return r;
}

fenced_write_result RedisFence::write(std::string_view key, std::int64_t token, std::string_view value) {
    std::error_code ec;
    const auto r = write(key, token, value, ec);
    throw_if(ec, "zklock::RedisFence::write");
    return r;
}

std::optional<fenced_value> RedisFence::read(std::string_view key, std::error_code& ec) {
    auto [e, r] = detail::wait_for<std::optional<fenced_value>>(
        *state_, [k = std::string(key)](detail::redis_fence_state& s, auto done) mutable {
            s.read(std::move(k), std::move(done));
        });
    ec = e;
    return r;
}

std::optional<fenced_value> RedisFence::read(std::string_view key) {
    std::error_code ec;
    auto r = read(key, ec);
    throw_if(ec, "zklock::RedisFence::read");
    return r;
}

void RedisFence::load(std::error_code& ec) {
    auto [e] = detail::wait_for<>(*state_, [](detail::redis_fence_state& s, auto done) { s.load(std::move(done)); });
    ec = e;
}

void RedisFence::load() {
    std::error_code ec;
    load(ec);
    throw_if(ec, "zklock::RedisFence::load");
}

void RedisFence::async_write_impl(std::string key, std::int64_t token, std::string value,
                                  asio::any_completion_handler<void(std::error_code, fenced_write_result)> handler) {
    auto done = detail::completer<std::error_code, fenced_write_result>(std::move(handler), state_->executor);
    if (const auto ec = detail::check_arguments(key, token)) return done(ec, {});
    state_->post([key = std::move(key), token, value = std::move(value),
                  done = std::move(done)](detail::redis_fence_state& s) mutable {
        s.write(std::move(key), token, std::move(value), std::move(done));
    });
}

void RedisFence::async_read_impl(
    std::string key, asio::any_completion_handler<void(std::error_code, std::optional<fenced_value>)> handler) {
    auto done = detail::completer<std::error_code, std::optional<fenced_value>>(std::move(handler), state_->executor);
    state_->post([key = std::move(key), done = std::move(done)](detail::redis_fence_state& s) mutable {
        s.read(std::move(key), std::move(done));
    });
}

} // namespace zklock
