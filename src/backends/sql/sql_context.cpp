#include "backends/sql/sql_context.hpp"

#include "backends/sql/sql_lock.hpp"
#include "support/log_emit.hpp"

#include <zklock/error.hpp>

#include <boost/asio/post.hpp>

#include <algorithm>

namespace zklock::detail::sql {
namespace asio = boost::asio;
namespace {

boost::asio::any_io_executor executor_of(const lease_settings& s, std::shared_ptr<own_context>& own) {
    if (s.executor) return s.executor;
    own = own_context::start();
    return own->ioc.get_executor();
}

const lease_settings& checked(const lease_settings& s, const char* options_type) {
    if (s.lease_ttl.count() <= 0)
        throw error(make_error_code(errc::invalid_argument),
                    std::string("zklock::") + options_type + ": lease_ttl must be positive");
    if (s.renew_interval.count() < 0 || s.renew_interval >= s.lease_ttl)
        throw error(make_error_code(errc::invalid_argument),
                    std::string("zklock::") + options_type + ": renew_interval must be shorter than lease_ttl");
    return s;
}

} // namespace

lock_capabilities sql_capabilities(const char* backend, sql_steps::method m, bool fair_fifo, bool notified,
                                   const char* limits) noexcept {
    const bool by_ttl = sql_steps::lives_by_ttl(m);
    lock_capabilities c;
    c.backend = backend;
    c.reports_loss = true;
    c.fencing_monotonic_across_failover = true;  // a sequence or a row's version, as durable as the database
    c.fair_fifo = fair_fifo;
    c.dead_holder = by_ttl ? dead_holder_release::ttl_expiry : dead_holder_release::connection_end;
    c.server_wakes_waiters = notified;
    c.wakes_one_waiter = !by_ttl;
    c.limits = limits;
    return c;
}

sql_context::sql_context(sql_steps::method k, lock_capabilities caps, const lease_settings& s, const char* options_type)
    : executor(executor_of(checked(s, options_type), own)), strand(asio::make_strand(executor)), kind(k),
      capabilities(caps), lease_ttl(s.lease_ttl),
      renew_every(s.renew_interval.count() > 0 ? s.renew_interval : s.lease_ttl / 3), log_to(s.log) {}

void sql_context::log(log_level level, const std::string& message) const {
    emit(log_to, level, capabilities.backend, message);
}

bool sql_context::on_thread() const noexcept {
    if (own) return own->ioc.get_executor().running_in_this_thread();
    return strand.running_in_this_thread();
}

void sql_context::track(const std::shared_ptr<sql_lock>& lock) {
    std::lock_guard lk(m);
    locks.erase(std::remove_if(locks.begin(), locks.end(), [](const auto& w) { return w.expired(); }), locks.end());
    locks.push_back(lock);
}

void sql_context::end_service(const std::shared_ptr<sql_context>& ctx) {
    if (!ctx->own) return;
    ctx->own->stop_and_join(std::chrono::seconds(5), [ctx] {
        asio::post(ctx->strand, [ctx] {
            ctx->ended = true;
            std::vector<std::shared_ptr<sql_lock>> live;
            {
                std::lock_guard lk(ctx->m);
                for (const auto& w : ctx->locks)
                    if (auto l = w.lock()) live.push_back(std::move(l));
            }
            for (const auto& l : live) l->end_of_service();
        });
    });
}

} // namespace zklock::detail::sql
