// The simulation's side of the seam in src/support/io_seam.hpp: with
// ZKLOCK_SIMULATION defined, zklock's sources read the time of the simulated
// process that runs them, and wait on timers and a descriptor whose waits are
// events of the simulator's queue. Nothing here reads a real clock or starts a thread.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/posix/descriptor_base.hpp>
#include <boost/asio/post.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

namespace zklock::sim {

/// What the code under test asks of the simulator (tests/sim/world.hpp).
class clock_hooks {
public:
    using time_point = std::chrono::steady_clock::time_point;
    /// The clock of the simulated process that runs now (its own rate).
    virtual time_point local_now() = 0;
    /// Calls fire() once the current process's clock reaches `local`; an id for cancel_alarm.
    virtual std::uint64_t set_alarm(time_point local, std::function<void()> fire) = 0;
    virtual void cancel_alarm(std::uint64_t id) = 0;
    virtual std::uint64_t random() = 0;
    /// Calls ready() once the simulated C client's descriptor `fd` has
    /// something to read (at once when it has now); one wait per descriptor.
    virtual void wait_readable(int fd, std::function<void()> ready) = 0;
    virtual void cancel_readable(int fd) = 0;

protected:
    ~clock_hooks() = default;
};

/// The simulator running now; set by the world for the length of a run.
clock_hooks*& current_hooks() noexcept;

} // namespace zklock::sim

namespace zklock::detail {

/// The simulated process's steady clock.
struct clock {
    using duration = std::chrono::steady_clock::duration;
    using rep = duration::rep;
    using period = duration::period;
    using time_point = std::chrono::steady_clock::time_point;
    static constexpr bool is_steady = true;
    static time_point now() noexcept { return sim::current_hooks()->local_now(); }
};

inline std::uint64_t sim_random() { return sim::current_hooks()->random(); }

/// The subset of Asio's basic_waitable_timer the library uses; a wait is an
/// alarm of the simulator, and its handler is posted to the timer's executor
/// as Asio would (operation_aborted when cancelled).
template <class Executor> class basic_timer {
public:
    using executor_type = Executor;
    using clock_type = clock;
    using time_point = clock::time_point;
    using duration = clock::duration;

    explicit basic_timer(const Executor& ex) : st_(std::make_shared<state>(ex)) {}
    basic_timer(basic_timer&&) noexcept = default;
    basic_timer& operator=(basic_timer&& other) noexcept {
        if (this != &other) {
            if (st_) cancel();
            st_ = std::move(other.st_);
        }
        return *this;
    }
    ~basic_timer() {
        if (st_) cancel();
    }

    executor_type get_executor() const { return st_->ex; }
    time_point expiry() const { return st_->expiry; }
    std::size_t expires_at(time_point t) {
        const auto n = cancel();
        st_->expiry = t;
        return n;
    }
    std::size_t expires_after(duration d) { return expires_at(clock::now() + d); }

    std::size_t cancel() {
        if (st_->alarm) sim::current_hooks()->cancel_alarm(st_->alarm);
        st_->alarm = 0;
        const auto waiters = st_->waiters.lock();
        st_->waiters.reset();
        if (!waiters) return 0;
        for (auto& w : *waiters) complete(st_->ex, std::move(w), boost::asio::error::operation_aborted);
        return waiters->size();
    }

    template <class Handler> void async_wait(Handler&& handler) {
        auto waiters = st_->waiters.lock();
        if (!waiters) {
            // The alarm owns the handlers (as Asio's timer queue owns its
            // operations): a run's end destroys them with the alarms.
            waiters = std::make_shared<std::vector<std::unique_ptr<handler_base>>>();
            st_->waiters = waiters;
            st_->alarm = sim::current_hooks()->set_alarm(st_->expiry, [waiters, weak = std::weak_ptr<state>(st_)] {
                if (const auto st = weak.lock()) {
                    st->alarm = 0;
                    st->waiters.reset();
                    for (auto& w : *waiters) complete(st->ex, std::move(w), boost::system::error_code());
                }
            });
        }
        waiters->push_back(std::make_unique<holder<std::decay_t<Handler>>>(std::forward<Handler>(handler)));
    }

private:
    struct handler_base {
        virtual ~handler_base() = default;
        virtual void call(boost::system::error_code ec) = 0;
    };
    template <class H> struct holder final : handler_base {
        explicit holder(H h) : h(std::move(h)) {}
        void call(boost::system::error_code ec) override { h(ec); }
        H h;
    };
    struct state {
        explicit state(const Executor& e) : ex(e) {}
        Executor ex;
        time_point expiry{};
        std::uint64_t alarm = 0;
        std::weak_ptr<std::vector<std::unique_ptr<handler_base>>> waiters;
    };
    static void complete(const Executor& ex, std::unique_ptr<handler_base> h, boost::system::error_code ec) {
        boost::asio::post(ex, [h = std::move(h), ec]() mutable { h->call(ec); });
    }

    std::shared_ptr<state> st_;
};

using timer = basic_timer<boost::asio::any_io_executor>;

/// The subset of Asio's stream descriptor the session uses on the C client's
/// socket: a read wait completes when the simulated connection has a message
/// due; the C client asks for no write wait (it writes at once).
template <class Executor> class basic_descriptor {
public:
    explicit basic_descriptor(const Executor& ex) : ex_(ex) {}
    basic_descriptor(const basic_descriptor&) = delete;
    basic_descriptor& operator=(const basic_descriptor&) = delete;
    ~basic_descriptor() { release(); }

    bool is_open() const noexcept { return fd_ >= 0; }
    void assign(int fd, boost::system::error_code& ec) {
        ec = {};
        release();
        fd_ = fd;
    }
    void cancel(boost::system::error_code& ec) {
        ec = {};
        const auto waiter = waiter_.lock();
        waiter_.reset();
        if (fd_ < 0 || !waiter) return;
        sim::current_hooks()->cancel_readable(fd_);
        boost::asio::post(ex_, [waiter] { (*waiter)(boost::asio::error::operation_aborted); });
    }
    int release() {
        boost::system::error_code ignored;
        cancel(ignored);
        return std::exchange(fd_, -1);
    }
    template <class Handler> void async_wait(boost::asio::posix::descriptor_base::wait_type type, Handler&& handler) {
        if (type != boost::asio::posix::descriptor_base::wait_read || fd_ < 0) {
            boost::asio::post(ex_, [h = std::forward<Handler>(handler)]() mutable { h(boost::asio::error::bad_descriptor); });
            return;
        }
        // The world's wait owns the handler: a run's end destroys it.
        auto waiter = std::make_shared<std::function<void(boost::system::error_code)>>(
            [h = std::make_shared<std::decay_t<Handler>>(std::forward<Handler>(handler))](boost::system::error_code ec) {
                (*h)(ec);
            });
        waiter_ = waiter;
        sim::current_hooks()->wait_readable(fd_, [waiter, ex = ex_] {
            boost::asio::post(ex, [waiter] { (*waiter)(boost::system::error_code()); });
        });
    }

private:
    Executor ex_;
    int fd_ = -1;
    std::weak_ptr<std::function<void(boost::system::error_code)>> waiter_;
};

/// The simulated socket's waits are keyed by its number: the session waits on
/// the C client's own (io_seam.hpp's library form registers a duplicate).
inline int own_descriptor(int fd) noexcept { return fd; }
template <class Executor> void drop_descriptor(basic_descriptor<Executor>& d) noexcept { d.release(); }

} // namespace zklock::detail
