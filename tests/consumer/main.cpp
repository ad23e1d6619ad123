// Links against an installed zklock and uses each component it was built with
// (ZKLOCK_CONSUMER_<COMPONENT>) in a way that needs no server.
#include <zklock/error.hpp>
#include <zklock/local/flock_lock_service.hpp>
#include <zklock/version.hpp>
#ifdef ZKLOCK_CONSUMER_TESTING
#include <zklock/testing/process.hpp>
#endif
#ifdef ZKLOCK_CONSUMER_TESTING_BACKENDS
#include <zklock/testing/redis_server.hpp>
#endif
#ifdef ZKLOCK_CONSUMER_REDIS
#include <zklock/redis/redis_lock_service.hpp>
#endif
#ifdef ZKLOCK_CONSUMER_POSTGRES
#include <zklock/postgres/postgres_fence.hpp>
#endif
#ifdef ZKLOCK_CONSUMER_MEMCACHED
#include <zklock/memcached/memcached_lock_service.hpp>
#endif
#ifdef ZKLOCK_CONSUMER_MYSQL
#include <zklock/mysql/mysql_lock_service.hpp>
#endif
#ifdef ZKLOCK_CONSUMER_BACKENDS
#include <zklock/backends.hpp>
#endif

#include <boost/asio/io_context.hpp>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <optional>
#include <string>

namespace {

bool check(bool ok, const std::string& what) {
    std::cout << (ok ? "ok: " : "FAILED: ") << what << '\n';
    return ok;
}

// Takes and releases a lock through the Lock interface (a file under /tmp).
bool take_and_release(zklock::LockService& service) {
    zklock::Lock lock = service.make_lock("zklock-consumer");
    {
        std::unique_lock hold(lock);
        if (!lock.is_held()) return false;
    }
    return !lock.is_held();
}

} // namespace

int main() {
    bool ok = true;
    {
        // A name Asio deprecates: zklock's own build refuses it
        // (BOOST_ASIO_NO_DEPRECATED), but that is no rule for its users' code.
        boost::asio::io_context io;
        boost::asio::io_context::work keep_running(io);
        ok &= check(!io.stopped(), "a consumer's code may use Asio's deprecated io_context::work");
    }
    const std::string message = zklock::make_error_code(zklock::errc::invalid_path).message();
    ok &= check(!message.empty(), "zklock::errc::invalid_path: " + message);
    ok &= check(std::string(ZKLOCK_VERSION_STRING) == std::to_string(ZKLOCK_VERSION_MAJOR) + "." +
                                                          std::to_string(ZKLOCK_VERSION_MINOR) + "." +
                                                          std::to_string(ZKLOCK_VERSION_PATCH),
                "zklock/version.hpp: " ZKLOCK_VERSION_STRING);
    try {
        throw zklock::error(zklock::make_error_code(zklock::errc::invalid_path));
    } catch (const zklock::error& e) {
        ok &= check(e.code() == zklock::errc::invalid_path, "zklock::error caught");
    }
    {
        zklock::FlockLockService flock(std::filesystem::temp_directory_path().string());
        ok &= check(take_and_release(flock), "FlockLockService: a lock taken and released");
    }
#ifdef ZKLOCK_CONSUMER_TESTING
    ok &= check(zklock::testing::free_loopback_port() != 0, "zklock::testing::free_loopback_port()");
#endif
#ifdef ZKLOCK_CONSUMER_TESTING_BACKENDS
    ok &= check(zklock::testing::resp_reply_length("+PONG\r\n") == std::optional<std::size_t>(7),
                "zklock::testing::resp_reply_length()");
#endif
#ifdef ZKLOCK_CONSUMER_REDIS
    ok &= check(zklock::RedisLockService::key_for("p", "n").find('n') != std::string::npos,
                "zklock::RedisLockService::key_for: " + zklock::RedisLockService::key_for("p", "n"));
#endif
#ifdef ZKLOCK_CONSUMER_POSTGRES
    ok &= check(!zklock::PostgresFence::install_sql().empty(), "zklock::PostgresFence::install_sql()");
#endif
#ifdef ZKLOCK_CONSUMER_MEMCACHED
    {
        zklock::MemcachedLockService memcached("127.0.0.1:1");  // connects at the first acquire: none here
        ok &= check(memcached.capabilities().backend == "memcached" && !memcached.capabilities().fencing_tokens,
                    "zklock::MemcachedLockService: backend memcached, no fencing tokens");
    }
#endif
#ifdef ZKLOCK_CONSUMER_MYSQL
    {
        // Connects at the first acquire: made and dropped without a server.
        zklock::MysqlAdvisoryLockService mysql("mysql://127.0.0.1:1/zklock");
        ok &= check(mysql.capabilities().backend == "mysql-advisory", "zklock::MysqlAdvisoryLockService");
    }
#endif
#ifdef ZKLOCK_CONSUMER_BACKENDS
#ifdef ZKLOCK_CONSUMER_ONLY_FLOCK  // a zklock built without its Redis and PostgreSQL backends
    ok &= check(!zklock::lock_backend_available("redis") && !zklock::lock_backend_available("postgres-advisory"),
                "zklock::lock_backend_available: neither redis nor postgres-advisory");
#else
    ok &= check(zklock::lock_backend_available("redis") && zklock::lock_backend_available("postgres-advisory"),
                "zklock::lock_backend_available: redis and postgres-advisory");
#endif
    zklock::BackendOptions options;
    options.flock_directory = std::filesystem::temp_directory_path().string();
    auto service = zklock::open_lock_service("flock", options);
    ok &= check(take_and_release(*service), "open_lock_service(\"flock\"): a lock taken and released");
#endif
    return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
