#include "backends/redis/redis_backend.hpp"

#include "backends/redis/scripts.hpp"

namespace zklock::detail::redis {
namespace asio = boost::asio;

namespace {

using result = redlock::master_reply;

/// A script's integer reply: > 0 yes, 0 no; anything else failed.
result classify(std::error_code ec, const reply& r) {
    if (ec) return {result::kind::failed, 0, ec};
    if (r.type == reply::kind::integer) return {r.integer > 0 ? result::kind::yes : result::kind::no, r.integer, {}};
    return {result::kind::failed, 0, std::make_error_code(std::errc::protocol_error)};
}

} // namespace

redis_backend::redis_backend(std::shared_ptr<redis_context> ctx, std::string key)
    : key_lease_backend(ctx, std::move(key), ctx->strand, first_backoff), fence_key_(key_ + ":fence"),
      channel_(key_ + ":released") {}

std::vector<std::string> redis_backend::eval(const char* script, std::string arg1, std::string arg2) const {
    return {"EVAL", script, "2", key_, script == acquire_script || script == raise_script ? fence_key_ : channel_,
            std::move(arg1), std::move(arg2)};
}

void redis_backend::on_all(std::vector<std::string> cmd, std::function<void(std::vector<result>)> done) {
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

void redis_backend::release_everywhere(const std::string& token, std::function<void(std::error_code)> done,
                                       bool publish) {
    on_all(eval(release_script, token, publish ? "1" : "0"), [done = std::move(done)](std::vector<result> results) {
        if (done) done(redlock::after_release(results));
    });
}

} // namespace zklock::detail::redis
