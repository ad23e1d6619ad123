// Ten workers share three slots (say, three licences of an external service):
// a Semaphore with 3 permits. Slots are granted in arrival order, and each
// waiter is told its place in line (QueueLock::on_queue_position) when it
// queues and each time it re-reads the queue, so it can show a progress message
// instead of hanging silently. (A waiter watches one node ahead of it, not the
// whole queue, so it learns of moves only when that node goes: no herd.)
//
//   ./example_fifo_workers                  # starts a throwaway ZooKeeper (needs java + the zookeeper package)
//   ./example_fifo_workers 127.0.0.1:2181   # or use yours
//
// Each worker has its own Session, as separate processes would. Arrival order
// is what the slots follow: no worker gets its slot after a later worker has
// already finished with one. (Two workers granted by one release return from
// lock() in either order: their threads, not the queue, decide which prints
// first.)
#include <zklock/semaphore.hpp>
#include <zklock/session.hpp>
#include <zklock/testing/zookeeper_server.hpp>

#include <chrono>
#include <future>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace std::chrono_literals;

namespace {

std::mutex print_mutex;
const auto started = std::chrono::steady_clock::now();
template <class... Args> void say(const Args&... args) {
    std::lock_guard lock(print_mutex);
    std::cout << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count() << " ms  ";
    (std::cout << ... << args) << std::endl;
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
            say("no connect string given: started a throwaway ZooKeeper at ", connect);
        }
        const std::string path = "/examples/fifo-workers-" + std::to_string(::getpid());
        constexpr std::size_t permits = 3;
        constexpr int workers = 10;

        std::mutex order_mutex;
        int events = 0;                                 // grants and releases, counted in order
        std::vector<int> got(workers + 1, 0), freed(workers + 1, 0);  // each worker's events
        int inside = 0, most_inside = 0;

        std::vector<std::jthread> threads;
        for (int w = 1; w <= workers; ++w) {
            // The next worker starts only once this one stands in line, so that the
            // arrival order (and thus the service order) is 1, 2, ..., 10.
            auto queued = std::make_shared<std::promise<void>>();
            auto in_line = queued->get_future();
            threads.emplace_back([&, w, queued] {
                try {
                    zklock::SessionOptions so;
                    so.connect = connect;
                    zklock::Session session(so);
                    session.connect();

                    zklock::Semaphore slots(session, path, permits);
                    zklock::QueueLock slot = slots.permit();
                    // Runs on the session's thread: keep it short, never block in it.
                    // Positions are 0-based; below `permits` means a slot is ours.
                    slot.on_queue_position([w, queued, slots = permits, first = true](std::size_t position) mutable {
                        if (position >= slots)
                            say("worker ", w, ": waiting, number ", position - slots + 1, " in line");
                        if (std::exchange(first, false)) queued->set_value();
                    });

                    std::unique_lock held(slot);  // blocks until one of the 3 slots is ours
                    {
                        std::lock_guard lock(order_mutex);
                        got[w] = ++events;
                        most_inside = std::max(most_inside, ++inside);
                    }
                    say("worker ", w, ": got a slot (fencing token ", slot.fencing_token(), ")");
                    // The work; its length varies, so slots free up out of order.
                    std::this_thread::sleep_for(100ms * (1 + (w * 7) % 4));
                    {
                        std::lock_guard lock(order_mutex);
                        --inside;
                        freed[w] = ++events;
                    }
                    say("worker ", w, ": done, frees its slot");
                    held.unlock();  // (leaving the scope would release it too)
                } catch (const std::exception& e) {
                    say("worker ", w, ": ", e.what());
                }
            });
            if (in_line.wait_for(10s) != std::future_status::ready) throw std::runtime_error("a worker could not queue");
        }
        for (auto& t : threads) t.join();

        // Overtaken: an earlier worker got its slot (or none) only after a later
        // one had finished its turn.
        bool fifo = true;
        for (int i = 1; i <= workers; ++i)
            for (int j = i + 1; j <= workers; ++j)
                if (got[i] == 0 || (freed[j] != 0 && got[i] > freed[j])) fifo = false;
        if (!fifo || most_inside > static_cast<int>(permits)) {
            std::cerr << "unexpected: " << (fifo ? "more holders than permits" : "not served in arrival order") << "\n";
            return 1;
        }
        say("done: ", workers, " workers served in arrival order, at most ", most_inside, " at a time");
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "fifo_workers: " << e.what() << "\n";
        return 1;
    }
}
