// zklock::RedisConnectionOptions: how zklock's Redis clients (the lock
// services and RedisFence) connect to a server.
#pragma once

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <string>

namespace zklock {

/// How a Redis client of zklock's connects to its servers.
struct RedisConnectionOptions {
    /// How long a connect may take. Default 2 s.
    std::chrono::milliseconds connect_timeout{2000};
    /// A command with no reply within this drops its connection (the command
    /// fails with errc::connection_loss). Default 1 s.
    std::chrono::milliseconds command_timeout{1000};
    /// The ACL user (Redis 6+) of servers whose address carries no credentials;
    /// needs `password`. Default empty: AUTH with the password alone.
    std::string user;
    /// The password of servers whose address carries no credentials (requirepass,
    /// or the ACL user's). Default empty: no AUTH.
    std::string password;
    /// The database of servers whose address names none: SELECT db when not 0. Default 0.
    int db = 0;
    /// Where the connections run; empty (default): the client's own thread.
    boost::asio::any_io_executor executor;
};

} // namespace zklock
