// What the Locks of one MySQL-protocol lock service share: the method, the
// address and options, the strand and thread they run on, and the live locks.
#pragma once

#include "support/async_support.hpp"
#include "support/log_emit.hpp"
#include "backends/mysql/mysql_address.hpp"
#include "backends/mysql/mysql_steps.hpp"

#include <zklock/mysql/mysql_lock_service.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/strand.hpp>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace zklock::detail {

namespace mysql {
class my_backend;
}

struct mysql_context {
    std::shared_ptr<own_context> own;
    boost::asio::any_io_executor executor;
    boost::asio::strand<boost::asio::any_io_executor> strand;
    mysql_steps::method method;
    mysql::mysql_address address;
    MysqlOptions options;
    std::mutex m;
    /// The locks made so far (under m): the service's end closes what they still have open.
    std::vector<std::weak_ptr<mysql::my_backend>> backends;
    /// Set once the service has ended: nothing connects again (strand only).
    bool ended = false;

    mysql_context(mysql_steps::method meth, mysql::mysql_address a, MysqlOptions o, std::shared_ptr<own_context> ow,
                  boost::asio::any_io_executor ex)
        : own(std::move(ow)), executor(std::move(ex)), strand(boost::asio::make_strand(executor)), method(meth),
          address(std::move(a)), options(std::move(o)) {}
    /// The backend's name: "mysql-lease", ...
    const char* backend_name() const noexcept;
    lock_capabilities capabilities() const noexcept;
    /// Hands a record to options.log (source: the backend's name), when it wants it.
    void log(log_level level, const std::string& message) const { emit(options.log, level, backend_name(), message); }
    bool on_thread() const noexcept {
        if (own) return own->ioc.get_executor().running_in_this_thread();
        return strand.running_in_this_thread();
    }
};

} // namespace zklock::detail
