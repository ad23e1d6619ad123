#include "zklock/testing/faulty_link.hpp"

#include "zklock/testing/packet_filter.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <deque>
#include <future>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sys/socket.h>

namespace zklock::testing {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using steady = std::chrono::steady_clock;
constexpr auto nothrow = asio::as_tuple(asio::use_awaitable);
constexpr std::size_t read_size = 64 * 1024;

struct Chunk {
    steady::time_point due;
    std::vector<char> bytes;
};

// One direction of a connection: what was read and waits to be written.
struct Pipe {
    explicit Pipe(const asio::any_io_executor& ex) : wake(ex) {}
    std::deque<Chunk> queue;
    asio::steady_timer wake;  // the writer waits on it; the reader cancels it
    bool eof = false;         // the reading side saw the end of the stream
    bool done = false;        // the writer passed the end on
};

struct Connection {
    explicit Connection(const asio::any_io_executor& ex) : client(ex), server(ex), up(ex), down(ex) {}
    tcp::socket client;
    tcp::socket server;
    Pipe up;    // client -> server
    Pipe down;  // server -> client
    bool drop_reply = false;    // the next bytes from the server are the reply to lose
    bool garble_reply = false;  // ... or the reply whose xid to change
    std::string tail;         // the end of the last read, for a needle split across reads
    bool closed = false;
};

// A socket of our own making: close-on-exec from the start (Asio's are not).
void open_cloexec(tcp::socket& s) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "FaultyLink: socket");
    s.assign(tcp::v4(), fd);
}

}  // namespace

struct FaultyLink::Impl {
    asio::io_context io{1};
    // Keeps run() going until the destructor, so on_link_thread() always has a taker.
    asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
    tcp::acceptor acceptor{io};
    std::uint16_t port = 0;
    std::uint16_t target = 0;
    std::atomic<long long> delay_ms{0};
    std::optional<std::string> armed;  // the link's thread only
    bool armed_garble = false;         // what the armed needle does: garble (true) or drop the reply
    std::atomic<bool> armed_flag{false};
    std::atomic<std::size_t> dropped{0};
    std::atomic<std::size_t> garbled{0};
    std::atomic<std::size_t> open{0};
    std::atomic<std::size_t> accepted{0};
    std::vector<std::shared_ptr<Connection>> connections;  // the link's thread only
    mutable std::mutex filter_mutex;
    std::optional<PacketFilter> blackhole;
    std::thread thread;

    template <class F> auto on_link_thread(F f) -> decltype(f()) {
        std::packaged_task<decltype(f())()> task(std::move(f));
        auto result = task.get_future();
        asio::post(io, [&task] { task(); });
        return result.get();
    }

    void close(Connection& c, bool reset_client, bool reset_server) {
        if (c.closed) return;
        c.closed = true;
        boost::system::error_code ignored;
        if (reset_client) c.client.set_option(tcp::socket::linger(true, 0), ignored);
        if (reset_server) c.server.set_option(tcp::socket::linger(true, 0), ignored);
        c.client.close(ignored);
        c.server.close(ignored);
        c.up.wake.cancel();
        c.down.wake.cancel();
        std::erase_if(connections, [&c](const auto& p) { return p.get() == &c; });
        --open;
    }

    void note_request(Connection& c, std::string_view data) {
        if (!armed || c.drop_reply || c.garble_reply) return;
        bool hit = armed->empty();
        if (!hit) {
            std::string window = c.tail;
            window.append(data);
            hit = window.find(*armed) != std::string::npos;
            const std::size_t keep = std::min(window.size(), armed->size() - 1);
            c.tail = window.substr(window.size() - keep);
        }
        if (hit) {
            (armed_garble ? c.garble_reply : c.drop_reply) = true;
            armed.reset();
            armed_flag = false;
        }
    }

    asio::awaitable<void> read_side(std::shared_ptr<Connection> c, bool upstream) {
        auto& from = upstream ? c->client : c->server;
        auto& pipe = upstream ? c->up : c->down;
        std::vector<char> buf(read_size);
        while (true) {
            auto [ec, n] = co_await from.async_read_some(asio::buffer(buf), nothrow);
            if (c->closed) co_return;
            if (ec) {
                if (ec != asio::error::eof) {
                    close(*c, false, false);
                    co_return;
                }
                pipe.eof = true;
                pipe.wake.cancel();
                co_return;
            }
            const std::string_view data(buf.data(), n);  // buf may still be garbled below: a view sees it
            if (upstream) {
                note_request(*c, data);
            } else if (c->drop_reply) {
                ++dropped;
                close(*c, /*reset_client=*/true, /*reset_server=*/false);
                co_return;
            } else if (c->garble_reply && n >= 8) {
                // A reply frame: a 4-byte length, then the header, which opens with
                // the request's xid (big endian). Bit 20 of it changed: positive xids
                // stay positive, and the client finds no request with that xid.
                c->garble_reply = false;
                buf[5] = static_cast<char>(buf[5] ^ 0x10);
                ++garbled;
            }
            pipe.queue.push_back({steady::now() + std::chrono::milliseconds(delay_ms.load()),
                                  std::vector<char>(data.begin(), data.end())});
            pipe.wake.cancel();
        }
    }

    asio::awaitable<void> write_side(std::shared_ptr<Connection> c, bool upstream) {
        auto& to = upstream ? c->server : c->client;
        auto& pipe = upstream ? c->up : c->down;
        while (!c->closed) {
            if (pipe.queue.empty()) {
                if (pipe.eof) {
                    boost::system::error_code ignored;
                    to.shutdown(tcp::socket::shutdown_send, ignored);
                    pipe.done = true;
                    if (c->up.done && c->down.done) close(*c, false, false);
                    co_return;
                }
                pipe.wake.expires_at(steady::time_point::max());
                co_await pipe.wake.async_wait(nothrow);
                continue;
            }
            if (pipe.queue.front().due > steady::now()) {
                pipe.wake.expires_at(pipe.queue.front().due);
                co_await pipe.wake.async_wait(nothrow);
                continue;
            }
            const auto bytes = std::move(pipe.queue.front().bytes);
            pipe.queue.pop_front();
            auto [ec, n] = co_await asio::async_write(to, asio::buffer(bytes), nothrow);
            if (ec) {
                close(*c, false, false);
                co_return;
            }
        }
    }

    asio::awaitable<void> serve(std::shared_ptr<Connection> c) {
        try {
            open_cloexec(c->server);
        } catch (const std::system_error&) {
            close(*c, false, false);
            co_return;
        }
        auto [ec] = co_await c->server.async_connect({asio::ip::address_v4::loopback(), target}, nothrow);
        if (c->closed) co_return;
        if (ec) {
            close(*c, false, false);
            co_return;
        }
        boost::system::error_code ignored;
        c->client.set_option(tcp::no_delay(true), ignored);
        c->server.set_option(tcp::no_delay(true), ignored);
        for (const bool upstream : {true, false}) {
            asio::co_spawn(io, read_side(c, upstream), asio::detached);
            asio::co_spawn(io, write_side(c, upstream), asio::detached);
        }
    }

    asio::awaitable<void> accept_loop() {
        while (true) {
            auto [ec] = co_await acceptor.async_wait(tcp::acceptor::wait_read, nothrow);
            if (ec || !acceptor.is_open()) co_return;
            const int fd = ::accept4(acceptor.native_handle(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (fd < 0) {
                if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED ||
                    errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                    continue;
                }
                co_return;
            }
            auto c = std::make_shared<Connection>(io.get_executor());
            c->client.assign(tcp::v4(), fd);
            connections.push_back(c);
            ++open;
            ++accepted;
            asio::co_spawn(io, serve(std::move(c)), asio::detached);
        }
    }
};

FaultyLink::FaultyLink(std::uint16_t target_port) : impl_(std::make_unique<Impl>()) {
    impl_->target = target_port;
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "FaultyLink: socket");
    impl_->acceptor.assign(tcp::v4(), fd);
    impl_->acceptor.bind({asio::ip::address_v4::loopback(), 0});
    impl_->acceptor.listen();
    impl_->port = impl_->acceptor.local_endpoint().port();
    asio::co_spawn(impl_->io, impl_->accept_loop(), asio::detached);
    impl_->thread = std::thread([impl = impl_.get()] { impl->io.run(); });
    ::pthread_setname_np(impl_->thread.native_handle(), "zklock-link");  // named before the constructor returns
}

FaultyLink::~FaultyLink() {
    try {
        impl_->on_link_thread([impl = impl_.get()] {
            boost::system::error_code ignored;
            impl->acceptor.close(ignored);
            for (const auto& c : std::vector(impl->connections)) impl->close(*c, false, false);
        });
    } catch (...) {
        impl_->io.stop();
    }
    impl_->work.reset();
    impl_->thread.join();  // run() returns: every operation was cancelled, nothing is left to wait for
    try {
        heal();
    } catch (...) {
    }
}

std::uint16_t FaultyLink::port() const noexcept { return impl_->port; }

std::uint16_t FaultyLink::target_port() const noexcept { return impl_->target; }

std::string FaultyLink::connect_string() const { return "127.0.0.1:" + std::to_string(impl_->port); }

void FaultyLink::delay(std::chrono::milliseconds latency) { impl_->delay_ms = std::max<long long>(0, latency.count()); }

std::chrono::milliseconds FaultyLink::delay() const noexcept { return std::chrono::milliseconds(impl_->delay_ms.load()); }

void FaultyLink::blackhole() {
    std::lock_guard lk(impl_->filter_mutex);
    if (impl_->blackhole) return;
    PacketFilter filter("link 127.0.0.1:" + std::to_string(impl_->port));
    filter.drop({0, impl_->port});  // client -> link (and new connections' SYNs)
    filter.drop({impl_->port, 0});  // link -> client
    impl_->blackhole = std::move(filter);
}

void FaultyLink::heal() {
    std::lock_guard lk(impl_->filter_mutex);
    if (!impl_->blackhole) return;
    auto filter = std::move(*impl_->blackhole);
    impl_->blackhole.reset();
    filter.clear();
}

bool FaultyLink::blackholed() const {
    std::lock_guard lk(impl_->filter_mutex);
    return impl_->blackhole.has_value();
}

std::uint64_t FaultyLink::blackholed_packets() const {
    std::lock_guard lk(impl_->filter_mutex);
    return impl_->blackhole ? impl_->blackhole->dropped_packets() : 0;
}

std::size_t FaultyLink::reset() {
    return impl_->on_link_thread([impl = impl_.get()] {
        const auto all = impl->connections;
        for (const auto& c : all) impl->close(*c, true, true);
        return all.size();
    });
}

void FaultyLink::drop_next_reply(std::string request_contains) {
    impl_->on_link_thread([impl = impl_.get(), needle = std::move(request_contains)]() mutable {
        for (const auto& c : impl->connections) c->tail.clear();
        impl->armed = std::move(needle);
        impl->armed_garble = false;
        impl->armed_flag = true;
    });
}

void FaultyLink::garble_next_reply(std::string request_contains) {
    impl_->on_link_thread([impl = impl_.get(), needle = std::move(request_contains)]() mutable {
        for (const auto& c : impl->connections) c->tail.clear();
        impl->armed = std::move(needle);
        impl->armed_garble = true;
        impl->armed_flag = true;
    });
}

std::size_t FaultyLink::replies_garbled() const noexcept { return impl_->garbled.load(); }

bool FaultyLink::drop_armed() const { return impl_->armed_flag.load(); }

std::size_t FaultyLink::replies_dropped() const noexcept { return impl_->dropped.load(); }

std::size_t FaultyLink::open_connections() const noexcept { return impl_->open.load(); }

std::size_t FaultyLink::accepted_connections() const noexcept { return impl_->accepted.load(); }

}  // namespace zklock::testing
