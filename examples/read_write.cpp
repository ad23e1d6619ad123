// A read-write lock across processes: readers share it (std::shared_lock), a
// writer excludes everyone (std::unique_lock). The queue is fair: a reader that
// arrives after a waiting writer waits for that writer, so writers never starve.
//
//   ./example_read_write                  # starts a throwaway ZooKeeper (needs java + the zookeeper package)
//   ./example_read_write 127.0.0.1:2181   # or use yours
//
// The scenario: readers 1-3 read together; the writer arrives and waits for them;
// reader 4 arrives after the writer and waits for the writer to finish.
// Each participant has its own Session and SharedMutex, as separate processes would.
#include <zklock/session.hpp>
#include <zklock/shared_mutex.hpp>
#include <zklock/testing/zookeeper_server.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <iostream>
#include <latch>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace std::chrono_literals;

namespace {

std::mutex print_mutex;
template <class... Args> void say(const Args&... args) {
    std::lock_guard lock(print_mutex);
    (std::cout << ... << args) << std::endl;
}

// In-process bookkeeping that lets the example check what the lock promises.
std::atomic<int> readers_inside{0};
std::atomic<bool> writer_inside{false};
std::atomic<bool> writer_done{false};
std::atomic<bool> ok{true};

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
            say("no connect string given: started a throwaway ZooKeeper at ", connect);
        }
        const std::string path = "/examples/read-write-" + std::to_string(::getpid());
        auto new_session = [&] {
            zklock::SessionOptions so;
            so.connect = connect;
            auto s = std::make_unique<zklock::Session>(so);
            s->connect();
            return s;
        };

        std::latch first_readers_in(3);       // readers 1-3 all hold the shared lock
        std::promise<void> writer_queued_p;   // the writer stands in line
        auto writer_queued = writer_queued_p.get_future().share();
        int most_readers = 0;
        std::mutex most_mutex;

        auto reader = [&](int id, bool first_wave) {
            auto session = new_session();
            zklock::SharedMutex rw(*session, path);
            {
                std::shared_lock lock(rw);  // lock_shared(): blocks while a writer holds or waits ahead of us
                const int now = ++readers_inside;
                if (writer_inside) ok = false;
                {
                    std::lock_guard g(most_mutex);
                    most_readers = std::max(most_readers, now);
                }
                say("reader ", id, ": reading (", now, " reader(s) inside)");
                if (first_wave) {
                    first_readers_in.count_down();
                    first_readers_in.wait();  // all three read at the same time
                    writer_queued.wait();     // keep reading a little after the writer queued
                    std::this_thread::sleep_for(200ms);
                } else {
                    if (!writer_done) ok = false;  // it arrived after the writer: it must come after it
                    std::this_thread::sleep_for(100ms);
                }
                --readers_inside;
                say("reader ", id, ": done");
            }  // unlock_shared()
        };

        std::vector<std::jthread> threads;
        for (int id = 1; id <= 3; ++id) threads.emplace_back(reader, id, true);
        first_readers_in.wait();

        threads.emplace_back([&] {
            auto session = new_session();
            zklock::SharedMutex rw(*session, path);
            // Tell main once our node is in the queue (position > 0: readers are ahead).
            rw.writer().on_queue_position([&, told = false](std::size_t position) mutable {
                if (position > 0 && !std::exchange(told, true)) {
                    say("writer: waiting behind ", position, " reader(s)");
                    writer_queued_p.set_value();
                }
            });
            std::unique_lock lock(rw);  // lock(): waits until everyone ahead has left
            writer_inside = true;
            const int readers = readers_inside;
            if (readers != 0) ok = false;
            say("writer: writing (", readers, " readers inside), fencing token ", rw.writer().fencing_token());
            std::this_thread::sleep_for(200ms);
            writer_inside = false;
            writer_done = true;
            say("writer: done");
        });

        writer_queued.wait();
        // Reader 4 arrives after the writer: it must wait for the writer, even
        // though the lock is only held by readers right now.
        threads.emplace_back(reader, 4, false);
        threads.clear();  // joins

        if (!ok || most_readers < 3) {
            std::cerr << "unexpected: " << (ok ? "readers did not overlap" : "a writer overlapped readers, or reader 4 overtook it") << "\n";
            return 1;
        }
        say("done: readers overlapped (", most_readers, " at once), the writer was alone");
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "read_write: " << e.what() << "\n";
        return 1;
    }
}
