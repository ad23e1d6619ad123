// async_lock with a completion handler and a deadline, on the caller's io_context.
#include <zklock/zklock.hpp>

#include <boost/asio/io_context.hpp>

#include <iostream>

int main(int argc, char** argv) {
    boost::asio::io_context ioc;
    zklock::SessionOptions options;
    options.connect = argc > 1 ? argv[1] : "127.0.0.1:2181";
    zklock::Session session(ioc.get_executor(), options);
    zklock::Mutex lock(session, argc > 2 ? argv[2] : "/locks/report");

    int status = 1;
    session.async_connect([&](std::error_code ec) {
        if (ec) {
            std::cerr << "connect: " << ec.message() << "\n";
            return ioc.stop();
        }
        lock.async_try_lock_for(std::chrono::seconds(5), [&](std::error_code ec, bool acquired) {
            if (ec) std::cerr << "lock: " << ec.message() << "\n";
            else if (!acquired) std::cerr << "someone else holds it\n";
            else {
                std::cout << "acquired, fencing token " << lock.fencing_token() << "\n";
                status = 0;
            }
            lock.async_unlock([&](std::error_code) { ioc.stop(); });
        });
    });
    ioc.run();
    return status;
}
