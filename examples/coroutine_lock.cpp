// zklock with C++20 coroutines: boost::asio::use_awaitable on an io_context you own.
// Two clients (two Sessions, as two processes would have) take turns on one lock;
// each works for a while but would stop at once if it lost the lock.
//
//   ./example_coroutine_lock                  # starts a throwaway ZooKeeper (needs java + the zookeeper package)
//   ./example_coroutine_lock 127.0.0.1:2181   # or use yours
//
// Note: zklock's completion handlers take a std::error_code (not a
// boost::system::error_code), so `co_await op(use_awaitable)` does not throw on
// failure: it *returns* the std::error_code. Check it.
#include <zklock/mutex.hpp>
#include <zklock/session.hpp>
#include <zklock/testing/zookeeper_server.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <exception>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <variant>

namespace asio = boost::asio;
using namespace asio::experimental::awaitable_operators;  // a || b: whichever finishes first, the other is cancelled
using namespace std::chrono_literals;

namespace {

int holders = 0;  // how many clients think they hold the lock (both run on one thread)

asio::awaitable<void> client(std::string name, zklock::Session& session, std::string path,
                             std::chrono::milliseconds work) {
    // Every zklock operation completes with a std::error_code: co_await returns it.
    if (std::error_code ec = co_await session.async_connect(asio::use_awaitable))
        throw zklock::error(ec, name + ": connect");

    zklock::Mutex lock(session, path);
    std::cout << name << ": waiting for " << path << std::endl;
    if (std::error_code ec = co_await lock.async_lock(asio::use_awaitable))
        throw zklock::error(ec, name + ": lock");
    std::cout << name << ": holds the lock, fencing token " << lock.fencing_token() << std::endl;
    if (++holders > 1) throw std::runtime_error(name + ": two holders at once");

    // The work (a timer here), raced against the loss of the lock: if the session
    // expires or our node is deleted, async_wait_lost completes first and the work
    // is cancelled. Whichever finishes first cancels the other.
    asio::steady_timer the_work(co_await asio::this_coro::executor, work);
    std::variant<std::monostate, std::error_code> first =
        co_await (the_work.async_wait(asio::use_awaitable) || lock.async_wait_lost(asio::use_awaitable));
    --holders;
    if (first.index() == 1) {
        std::cout << name << ": lost the lock (" << std::get<1>(first).message() << "), stopped working" << std::endl;
        co_return;
    }

    // async_unlock completes when the delete has committed (plain unlock() would
    // return at once and let the session finish the delete in the background).
    // The next waiter may be told before we are: its watch fires on the same commit.
    std::cout << name << ": work done, releasing" << std::endl;
    if (std::error_code ec = co_await lock.async_unlock(asio::use_awaitable))
        throw zklock::error(ec, name + ": unlock");
    std::cout << name << ": released" << std::endl;
}

} // namespace

int main(int argc, char** argv) {
    try {
        std::unique_ptr<zklock::testing::ZooKeeperServer> server;
        std::string connect;
        if (argc > 1) {
            connect = argv[1];
        } else {
            server = std::make_unique<zklock::testing::ZooKeeperServer>();
            connect = server->connect_string();
            std::cout << "no connect string given: started a throwaway ZooKeeper at " << connect << std::endl;
        }
        const std::string path = "/examples/coroutine-lock-" + std::to_string(::getpid());

        asio::io_context ioc;  // yours: zklock runs no thread of its own on it
        zklock::SessionOptions options;
        options.connect = connect;
        zklock::Session alice_session(ioc.get_executor(), options);
        zklock::Session bob_session(ioc.get_executor(), options);

        // The sessions keep the io_context busy (they wait on their sockets) until
        // closed: close both once both clients are finished.
        int finished = 0, failed = 0;
        auto on_done = [&](std::exception_ptr e) {
            if (e) {
                try {
                    std::rethrow_exception(e);
                } catch (const std::exception& x) {
                    std::cerr << x.what() << "\n";
                    ++failed;
                }
            }
            if (++finished == 2) {
                alice_session.close();
                bob_session.close();
            }
        };
        asio::co_spawn(ioc, client("alice", alice_session, path, 500ms), on_done);
        asio::co_spawn(ioc, client("bob", bob_session, path, 300ms), on_done);
        ioc.run();  // returns when both clients are done and the sessions closed
        return failed == 0 ? 0 : 1;
    } catch (const std::exception& e) {
        std::cerr << "coroutine_lock: " << e.what() << "\n";
        return 1;
    }
}
