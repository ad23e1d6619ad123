// The README's first program, whole: connect to ZooKeeper, take a lock, release it.
// CMakeLists.txt beside it builds it against an installed zklock; zklock's own
// build compiles it too (example_readme_first_lock), and a test runs it against
// a throwaway server and against a closed port (where it must print the error
// and exit 1, not abort). README.md shows the text between the readme markers.
// [readme:program]
#include <zklock/zklock.hpp>

#include <cstdlib>
#include <iostream>

int main() try {
    zklock::SessionOptions options;
    const char* hosts = std::getenv("ZKLOCK_CONNECT");  // as for the zklock tool
    options.connect = hosts != nullptr ? hosts : "127.0.0.1:2181";

    zklock::Session session(options);  // one ZooKeeper session, with its own I/O thread
    session.connect();                 // throws zklock::error when no server answers

    zklock::Mutex lock(session, "/locks/x");
    lock.lock();                       // waits its turn in /locks/x's queue
    std::cout << "holding /locks/x, fencing token " << lock.fencing_token() << "\n";
    lock.unlock();                     // the next in line holds it now
    return 0;
} catch (const zklock::error& e) {     // no server, a refused ACL, a lost session, ...
    std::cerr << "first_lock: " << e.what() << "\n";
    return 1;
}
// [/readme:program]
