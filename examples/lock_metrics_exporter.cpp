// Lock metrics for Prometheus: every Mutex reports its events (Mutex::on_event)
// to one zklock::lock_metrics, and a small HTTP endpoint serves them in the
// Prometheus text format at /metrics. Three workers take one lock in turn; the
// example then scrapes its own endpoint, prints what a Prometheus server would
// read, and checks that it counted every grant.
//
//   ./example_lock_metrics_exporter                  # starts a throwaway ZooKeeper
//   ./example_lock_metrics_exporter 127.0.0.1:2181   # or use yours
#include <zklock/lock_events.hpp>
#include <zklock/mutex.hpp>
#include <zklock/session.hpp>
#include <zklock/testing/zookeeper_server.hpp>

#include <boost/asio/buffer.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>

#include <atomic>
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace std::chrono_literals;
using boost::asio::ip::tcp;

namespace {

/// Serves `metrics` at http://127.0.0.1:PORT/metrics, one request per connection,
/// on a thread of its own, until stop().
class metrics_endpoint {
public:
    explicit metrics_endpoint(const zklock::lock_metrics& metrics)
        : metrics_(metrics), acceptor_(io_, tcp::endpoint(boost::asio::ip::address_v4::loopback(), 0)),
          thread_([this] { serve(); }) {}
    ~metrics_endpoint() { stop(); }

    unsigned short port() const { return acceptor_.local_endpoint().port(); }
    void stop() {
        if (!thread_.joinable()) return;
        stopping_ = true;
        // A blocking accept() does not return when the acceptor is closed from
        // another thread: one last connection wakes it, and it sees stopping_.
        boost::system::error_code ignored;
        tcp::socket wake(io_);
        wake.connect(tcp::endpoint(boost::asio::ip::address_v4::loopback(), port()), ignored);
        thread_.join();
    }

private:
    void serve() {
        for (;;) {
            boost::system::error_code ec;
            tcp::socket socket(io_);
            acceptor_.accept(socket, ec);
            if (ec || stopping_) return;
            boost::asio::streambuf request;
            boost::asio::read_until(socket, request, "\r\n\r\n", ec);  // the request's head
            const auto body = metrics_.prometheus_text();
            const auto response = "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: " +
                                  std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
            boost::asio::write(socket, boost::asio::buffer(response), ec);
        }
    }

    const zklock::lock_metrics& metrics_;
    std::atomic<bool> stopping_{false};
    boost::asio::io_context io_;
    tcp::acceptor acceptor_;
    std::thread thread_;
};

/// GET http://127.0.0.1:port/metrics, as a scraper would: the body.
std::string scrape(unsigned short port) {
    boost::asio::io_context io;
    tcp::socket socket(io);
    socket.connect(tcp::endpoint(boost::asio::ip::address_v4::loopback(), port));
    const std::string request = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    boost::asio::write(socket, boost::asio::buffer(request));
    std::string response;
    boost::system::error_code ec;
    boost::asio::read(socket, boost::asio::dynamic_buffer(response), ec);  // to the end: Connection: close
    const auto body = response.find("\r\n\r\n");
    return body == std::string::npos ? std::string() : response.substr(body + 4);
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
            std::cout << "no connect string given: started a throwaway ZooKeeper at " << connect << "\n";
        }
        zklock::lock_metrics metrics;  // before the sessions: it outlives every event they post
        metrics_endpoint endpoint(metrics);
        std::cout << "serving http://127.0.0.1:" << endpoint.port() << "/metrics\n";

        const std::string path = "/examples/metrics-" + std::to_string(::getpid());
        constexpr int workers = 3, rounds = 5;
        {
            std::vector<std::jthread> threads;
            for (int w = 0; w < workers; ++w) {
                threads.emplace_back([&] {
                    zklock::SessionOptions options;
                    options.connect = connect;
                    zklock::Session session(options);
                    session.connect();
                    zklock::Mutex lock(session, path);
                    lock.on_event(metrics.handler());
                    for (int i = 0; i < rounds; ++i) {
                        std::lock_guard held(lock);
                        std::this_thread::sleep_for(20ms);  // the work under the lock
                    }
                });
            }
        }  // every worker's Session is closed: its events are in

        const auto text = scrape(endpoint.port());
        std::cout << text;
        const auto expected = "zklock_lock_acquisitions_total{path=\"" + path + "\"} " + std::to_string(workers * rounds);
        if (text.find(expected + "\n") == std::string::npos) {
            std::cerr << "expected '" << expected << "' in the scrape\n";
            return 1;
        }
        std::cout << "scraped " << workers * rounds << " acquisitions of " << path << "\n";
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "example_lock_metrics_exporter: " << e.what() << "\n";
        return 1;
    }
}
