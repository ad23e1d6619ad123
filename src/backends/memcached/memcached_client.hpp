// One libmemcached handle to one server: the four commands of the lock recipe
// (add, gets, cas, delete), each blocking, each reduced to a
// memcached::answer and an error code. Used only on the service's own thread.
// After a failure the handle is dropped and the next command connects afresh
// (libmemcached would otherwise refuse a failed server for a while).
// libmemcached opens its sockets with SOCK_CLOEXEC (the CloseOnExec test checks it).
#pragma once

#include "backends/memcached/memcached_steps.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <system_error>

struct memcached_st;

namespace zklock::detail::memcached {

/// A command's outcome: what it answered and, when it failed, why.
struct outcome {
    answer a = answer::failed;
    std::error_code error;   ///< set when a == answer::failed
    std::string value;       ///< gets: the value
    std::uint64_t cas = 0;   ///< gets: the CAS unique
};

class client {
public:
    client(address where, std::chrono::milliseconds connect_timeout, std::chrono::milliseconds command_timeout);
    ~client();
    client(const client&) = delete;
    client& operator=(const client&) = delete;

    outcome add(const std::string& key, const std::string& value, std::uint32_t ttl_s);
    outcome gets(const std::string& key);
    outcome cas(const std::string& key, const std::string& value, std::uint32_t ttl_s, std::uint64_t unique);
    outcome del(const std::string& key);
    /// Drops the connection (the next command connects again).
    void close() noexcept;
    /// "host:port", as the log names the server.
    std::string endpoint() const;

private:
    memcached_st* handle();
    outcome finish(int rc);

    address where_;
    std::chrono::milliseconds connect_timeout_, command_timeout_;
    memcached_st* mc_ = nullptr;
};

} // namespace zklock::detail::memcached
