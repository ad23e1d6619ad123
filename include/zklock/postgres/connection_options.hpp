// zklock::PostgresConnectionOptions: how zklock's PostgreSQL clients (the
// lock services and PostgresFence) run their connections.
#pragma once

#include <boost/asio/any_io_executor.hpp>

#include <chrono>

namespace zklock {

/// How a PostgreSQL client of zklock's runs its connections.
struct PostgresConnectionOptions {
    /// Where the I/O runs. Default: none, the client runs its own io_context
    /// on one thread (the blocking calls then refuse to run there).
    boost::asio::any_io_executor executor{};
    /// How long opening one connection (TCP, startup, schema check) may take.
    /// Default 10 s; a connect that takes longer fails with errc::timeout.
    std::chrono::milliseconds connect_timeout{10000};
};

} // namespace zklock
