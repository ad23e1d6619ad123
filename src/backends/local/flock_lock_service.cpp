#include <zklock/local/flock_lock_service.hpp>

#include "support/async_support.hpp"
#include "lock/acquire_gate.hpp"
#include "lock/counter_cells.hpp"
#include "lock/loss_reports.hpp"

#include <zklock/backend.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <atomic>
#include <mutex>
#include <random>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace zklock {
namespace asio = boost::asio;

namespace detail {

struct flock_context {
    std::shared_ptr<own_context> own;  // set when the service runs its own thread
    asio::any_io_executor executor;
    asio::strand<asio::any_io_executor> strand;
    std::string directory;
    flock_context(std::string dir, asio::any_io_executor ex, std::shared_ptr<own_context> o)
        : own(std::move(o)), executor(std::move(ex)), strand(asio::make_strand(executor)), directory(std::move(dir)) {}
    bool on_thread() const noexcept {
        if (own) return own->ioc.get_executor().running_in_this_thread();
        return strand.running_in_this_thread();
    }
};

namespace {

lock_capabilities flock_capabilities() noexcept {
    lock_capabilities c;
    c.backend = "flock";
    c.fair_fifo = false;
    c.dead_holder = dead_holder_release::process_exit;
    c.fencing_monotonic_across_failover = true;  // the counter lives in the lock file itself
    c.server_wakes_waiters = false;
    c.wakes_one_waiter = false;
    c.reports_loss = false;
    c.limits = "one machine only; waiters poll with backoff (not FIFO); nothing can take a held lock away, so no loss";
    return c;
}

class flock_backend : public LockBackend, public std::enable_shared_from_this<flock_backend> {
public:
    flock_backend(std::shared_ptr<flock_context> ctx, std::string path)
        : ctx_(std::move(ctx)), path_(std::move(path)), timer_(ctx_->strand),
          losses_(detail::loss_reports::make([c = ctx_](std::function<void()> fn) { asio::post(c->strand, std::move(fn)); },
                                             ctx_->executor)) {}
    ~flock_backend() override {
        if (fd_ >= 0) ::close(fd_);  // closing the descriptor releases the lock
    }

    void acquire(std::optional<std::chrono::steady_clock::time_point> deadline, bool no_wait,
                 asio::cancellation_slot slot, acquire_callback callback) override {
        const auto post = [c = ctx_](std::function<void()> fn) { asio::post(c->strand, std::move(fn)); };
        if (begin_acquire(shared_from_this(), &flock_backend::gate_, post, slot, callback,
                          [](flock_backend& b) { b.finish(operation_aborted(), false); }) == 0)
            return;
        asio::post(ctx_->strand, [self = shared_from_this(), deadline, no_wait, cb = std::move(callback)]() mutable {
            self->callback_ = std::move(cb);
            self->deadline_ = deadline;
            self->no_wait_ = no_wait;
            self->backoff_ = std::chrono::milliseconds(1);
            self->attempt();
        });
    }

    std::error_code release(std::function<void(std::error_code)> done) override {
        if (!gate_.release()) return make_error_code(errc::not_held);
        token_ = 0;
        asio::post(ctx_->strand, [self = shared_from_this(), done = std::move(done)] {
            self->unlock_file();
            self->losses_->end_waits({});
            if (done) done({});
        });
        return {};
    }

    void shutdown() noexcept override {
        try {
            asio::post(ctx_->strand, [self = shared_from_this()] {
                if (self->callback_) self->finish(operation_aborted(), false);
                self->gate_.end_hold();
                self->unlock_file();
                self->losses_->end_waits(operation_aborted());
            });
        } catch (...) {
        }
    }

    bool held() const noexcept override { return gate_.held(); }
    std::int64_t fencing_token() const noexcept override { return token_.load(); }
    // A flock cannot be taken away: callbacks are kept and never called.
    void on_lost(std::function<void(std::error_code)> callback) override { losses_->add_callback(std::move(callback)); }
    void wait_lost(asio::cancellation_slot slot, std::function<void(std::error_code)> callback) override {
        losses_->wait(slot, std::move(callback), [self = shared_from_this()] { return self->gate_.held(); });
    }
    bool on_backend_thread() const noexcept override { return ctx_->on_thread(); }
    asio::any_io_executor executor() const override { return ctx_->executor; }
    lock_capabilities capabilities() const noexcept override { return flock_capabilities(); }
    lock_stats stats() const noexcept override { return gate_.with_times(counters_.snapshot()); }

private:
    void attempt() {
        if (!callback_) return;
        const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) return finish(std::error_code(errno, std::generic_category()), false);
        counter_cells::bump(counters_.attempts);
        if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
            struct stat held {}, on_disk {};
            if (::fstat(fd, &held) == 0 && ::stat(path_.c_str(), &on_disk) == 0 && held.st_ino == on_disk.st_ino) {
                fd_ = fd;
                return grant();
            }
            ::close(fd);  // the file was replaced while we locked it: lock the new one
            return attempt();
        }
        const int err = errno;
        ::close(fd);
        if (err != EWOULDBLOCK) return finish(std::error_code(err, std::generic_category()), false);
        if (no_wait_) return finish({}, false);
        auto wait = backoff_ + std::chrono::microseconds(jitter_(rng_) % 1000);
        backoff_ = std::min<std::chrono::steady_clock::duration>(backoff_ * 2, std::chrono::milliseconds(16));
        if (deadline_) {
            const auto now = std::chrono::steady_clock::now();
            if (now >= *deadline_) return finish({}, false);
            wait = std::min<std::chrono::steady_clock::duration>(wait, *deadline_ - now);
        }
        timer_.expires_after(wait);
        timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (ec) return;
            counter_cells::bump(self->counters_.timer_retries);
            self->attempt();
        });
    }

    void grant() {
        // The fencing counter: 8 bytes at the start of the file, updated under the lock.
        std::int64_t counter = 0;
        if (::pread(fd_, &counter, sizeof counter, 0) != static_cast<ssize_t>(sizeof counter)) counter = 0;
        ++counter;
        if (::pwrite(fd_, &counter, sizeof counter, 0) != static_cast<ssize_t>(sizeof counter)) {
            const std::error_code ec(errno, std::generic_category());
            unlock_file();
            return finish(ec, false);
        }
        token_ = counter;
        counter_cells::bump(counters_.acquisitions);
        finish({}, true);
    }

    void finish(std::error_code ec, bool acquired) {
        timer_.cancel();
        if (auto cb = std::exchange(callback_, nullptr)) {
            gate_.end(acquired);
            cb(ec, acquired);
        }
    }

    void unlock_file() {
        if (fd_ < 0) return;
        ::flock(fd_, LOCK_UN);
        ::close(fd_);
        fd_ = -1;
    }

    std::shared_ptr<flock_context> ctx_;
    std::string path_;
    asio::steady_timer timer_;
    int fd_ = -1;
    acquire_callback callback_;
    std::optional<std::chrono::steady_clock::time_point> deadline_;
    bool no_wait_ = false;
    std::chrono::steady_clock::duration backoff_{};
    std::minstd_rand rng_{std::random_device{}()};
    std::uniform_int_distribution<int> jitter_{0, 1000000};
    acquire_gate gate_;
    std::atomic<std::int64_t> token_{0};
    counter_cells counters_;
    std::shared_ptr<detail::loss_reports> losses_;
};

} // namespace
} // namespace detail

FlockLockService::FlockLockService(std::string directory, asio::any_io_executor executor) {
    struct stat st {};
    if (::stat(directory.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        throw error(make_error_code(errc::invalid_argument), "zklock::FlockLockService: no directory '" + directory + "'");
    std::shared_ptr<detail::own_context> own;
    if (!executor) {
        own = detail::own_context::start();
        executor = own->ioc.get_executor();
    }
    context_ = std::make_shared<detail::flock_context>(std::move(directory), std::move(executor), std::move(own));
}

FlockLockService::~FlockLockService() {
    if (context_->own) context_->own->stop_and_join();
}

Lock FlockLockService::make_lock(const std::string& name) {
    std::string reason;
    if (const auto ec = validate_lock_name(name, &reason)) throw error(ec, "zklock: " + reason + ": '" + name + "'");
    return Lock(std::make_shared<detail::flock_backend>(context_, context_->directory + "/" + name + ".lock"));
}

lock_capabilities FlockLockService::capabilities() const noexcept { return detail::flock_capabilities(); }

} // namespace zklock
