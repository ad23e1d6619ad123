// The smallest useful program: take a lock, do the work, release it.
//   zklock server &                       # or any ZooKeeper
//   ./example_basic_lock 127.0.0.1:2181 /locks/orders-42
#include <zklock/zklock.hpp>

#include <iostream>
#include <mutex>

int main(int argc, char** argv) {
    zklock::SessionOptions options;
    options.connect = argc > 1 ? argv[1] : "127.0.0.1:2181";
    options.session_timeout = std::chrono::seconds(10);
    const std::string path = argc > 2 ? argv[2] : "/locks/orders-42";

    try {
        zklock::Session session(options);  // runs its own I/O thread
        session.connect();                 // throws zklock::error after options.connect_timeout

        zklock::Mutex lock(session, path);
        lock.on_lost([](std::error_code why) { std::cerr << "lock lost: " << why.message() << "\n"; });

        std::unique_lock guard(lock);  // blocks until we are first in line
        std::cout << "holding " << lock.node_path() << " with fencing token " << lock.fencing_token() << "\n";
        // ... the work; pass lock.fencing_token() to the resource so it can refuse stale writers ...
    } catch (const zklock::error& e) {
        std::cerr << "zklock: " << e.what() << "\n";
        return 1;
    }
}
