// What the Locks of one PostgreSQL lock service share: the method, the
// connection string and options, the strand and thread they run on, and the
// live locks (for the test-only crash).
#pragma once

#include "support/async_support.hpp"
#include "support/log_emit.hpp"
#include "backends/postgres/lock_method.hpp"

#include <zklock/postgres/postgres_lock_service.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/strand.hpp>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace zklock::detail {

namespace pg {
class pg_backend;
}

struct postgres_context {
    std::shared_ptr<own_context> own;
    boost::asio::any_io_executor executor;
    boost::asio::strand<boost::asio::any_io_executor> strand;
    const pg::lock_method& method;
    std::string conninfo;
    PostgresOptions options;
    std::mutex m;
    /// The locks made so far (under m): the service's end closes what they
    /// still have open.
    std::vector<std::weak_ptr<pg::pg_backend>> backends;
    /// Set once the service has ended: nothing connects again (strand only).
    bool ended = false;

    postgres_context(const pg::lock_method& meth, std::string ci, PostgresOptions o, std::shared_ptr<own_context> ow,
                     boost::asio::any_io_executor ex)
        : own(std::move(ow)), executor(std::move(ex)), strand(boost::asio::make_strand(executor)), method(meth),
          conninfo(std::move(ci)), options(std::move(o)) {}
    /// Hands a record to options.log (source: the backend's name), when it wants it.
    void log(log_level level, const std::string& message) const {
        emit(options.log, level, method.capabilities().backend, message);
    }
    bool on_thread() const noexcept {
        if (own) return own->ioc.get_executor().running_in_this_thread();
        return strand.running_in_this_thread();
    }
};

} // namespace zklock::detail
