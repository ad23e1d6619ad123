#include "backends/redis/redis_context.hpp"

#include "support/log_emit.hpp"

#include "backends/redis/redlock.hpp"

#include <boost/asio/strand.hpp>


namespace zklock::detail {
namespace asio = boost::asio;
using std::chrono::milliseconds;
using redis::connection;
using redis::master;
using redis::subscriber;

namespace {

/// One master's address: parsed, with the options' credentials and db where
/// the address names none.
redis_address master_address(const std::string& text, const RedisOptions& opts) {
    std::error_code ec;
    std::string reason;
    auto a = resolve_redis_address(text, opts.user, opts.password, opts.db, ec, &reason);
    if (ec) throw error(ec, "zklock::RedisLockService: " + reason);
    return a;
}

} // namespace

std::vector<redis_address> redis_context::validate(const std::vector<std::string>& host_ports, const RedisOptions& opts) {
    if (host_ports.empty())
        throw error(make_error_code(errc::invalid_argument), "zklock::RedlockService: no Redis master given");
    if (opts.ttl < milliseconds(10))
        throw error(make_error_code(errc::invalid_argument), "zklock::RedisLockService: ttl under 10 ms");
    if (opts.db < 0)
        throw error(make_error_code(errc::invalid_argument), "zklock::RedisLockService: a negative db number");
    if (opts.password.empty() && !opts.user.empty())
        throw error(make_error_code(errc::invalid_argument), "zklock::RedisLockService: a user without a password");
    std::vector<redis_address> out;
    for (const auto& hp : host_ports) out.push_back(master_address(hp, opts));
    return out;
}

redis_context::redis_context(const std::vector<std::string>& host_ports, RedisOptions opts, std::string_view name)
    : addresses(validate(host_ports, opts)), own(redis::own_thread_unless(opts.executor)),
      executor(own ? asio::any_io_executor(own->ioc.get_executor()) : opts.executor),
      strand(asio::make_strand(executor)), options(std::move(opts)), backend(name) {
    // A copy of the sink: a connection may outlive the context in a handler
    // still queued on the user's executor.
    auto log_to_sink = [sink = options.log, name = backend](log_level level, const std::string& message) {
        emit(sink, level, name, message);
    };
    for (const auto& address : addresses) {
        master m;
        m.commands = std::make_shared<connection>(strand, address, options.connect_timeout, options.command_timeout);
        auto wakeups = std::make_shared<connection>(strand, address, options.connect_timeout, options.command_timeout);
        if (options.log.callback) {
            m.commands->set_log(log_to_sink, "commands");
            wakeups->set_log(log_to_sink, "subscriber");
        }
        m.wakeups = std::make_shared<subscriber>(strand, std::move(wakeups));
        m.wakeups->start();
        masters.push_back(std::move(m));
    }
    quorum = redlock::quorum(masters.size());
    drift = redlock::drift(options.ttl);
}

void redis_context::log(log_level level, const std::string& message) const {
    emit(options.log, level, backend, message);
}

void redis_context::close(bool graceful) {
    if (graceful) end_live_locks();  // the service ends: its locks release (and report errc::session_closed) first
    closed = true;
    for (auto& m : masters) {
        m.commands->close(graceful);
        m.wakeups->close();
    }
}

} // namespace zklock::detail
