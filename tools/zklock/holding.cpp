#include "holding.hpp"

#include <zklock/error.hpp>
#include <zklock/multi_mutex.hpp>
#include <zklock/mutex.hpp>
#include <zklock/semaphore.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/post.hpp>

namespace zklock::cli {
namespace {
namespace asio = boost::asio;
using std::chrono::milliseconds;

// What the lock and the lock set say of themselves, for lock_holding.
std::string nodes_of(const Mutex& m) { return m.node_path(); }
std::string nodes_of(const MultiMutex& m) {
    // One node per lock path, in the order given, a line each (paths hold no newline).
    std::string out;
    for (const auto& n : m.node_paths()) out += (out.empty() ? "" : "\n") + n;
    return out;
}
std::string busy_of(const Mutex& m) { return "lock " + m.path() + " is held by someone else"; }
std::string busy_of(const MultiMutex& m) {
    std::string paths;
    for (const auto& p : m.paths()) paths += (paths.empty() ? "" : ", ") + p;
    return "locks " + paths + ": someone else holds or waits ahead for one of them";
}

// The lock (a Mutex) or a lock set (a MultiMutex): the same interface.
template <class L> class lock_holding final : public holding {
public:
    template <class... Args>
    lock_holding(asio::io_context& io, Session& session, Args&&... args)
        : io_(io), mutex_(session, std::forward<Args>(args)...) {}

    void acquire(bool no_wait, std::optional<milliseconds> wait, acquire_handler done) override {
        const auto bind = [this](auto handler) {
            return asio::bind_cancellation_slot(cancel_.slot(), asio::bind_executor(io_, std::move(handler)));
        };
        if (no_wait) return mutex_.async_try_lock(bind(std::move(done)));
        if (wait) return mutex_.async_try_lock_for(*wait, bind(std::move(done)));
        mutex_.async_lock(bind([done = std::move(done)](std::error_code e) { done(e, !e); }));
    }
    // The lock completes on io_ and detaches the cancellation handler there: emit here.
    void cancel() override { cancel_.emit(asio::cancellation_type::terminal); }
    std::string node_path() const override { return nodes_of(mutex_); }
    std::int64_t fencing_token() const override { return mutex_.fencing_token(); }
    void wait_lost(done_handler done) override { mutex_.async_wait_lost(asio::bind_executor(io_, std::move(done))); }
    void release(done_handler done) override { mutex_.async_unlock(asio::bind_executor(io_, std::move(done))); }
    std::string busy_message() const override { return busy_of(mutex_); }
    std::string failure_detail() const override { return mutex_.failure_detail(); }

private:
    asio::io_context& io_;
    L mutex_;
    asio::cancellation_signal cancel_;
};

class lease_holding final : public holding {
public:
    lease_holding(asio::io_context& io, Session& session, const std::string& path, std::size_t permits,
                  std::chrono::milliseconds lock_delay)
        : io_(io), session_(session), semaphore_(session, path, permits, options(lock_delay)) {}

    void acquire(bool no_wait, std::optional<milliseconds> wait, acquire_handler done) override {
        pending_ = true;
        auto handler = asio::bind_cancellation_slot(
            cancel_->slot(), asio::bind_executor(io_, [this, done = std::move(done)](std::error_code ec, std::optional<Lease> lease) {
                pending_ = false;
                if (lease) lease_ = std::move(lease);
                done(ec, lease_.has_value());
            }));
        if (no_wait) return semaphore_.async_try_acquire(std::move(handler));
        // No deadline: hours::max() waits as long as it takes.
        semaphore_.async_try_acquire_for(wait.value_or(milliseconds::max()), std::move(handler));
    }
    // The semaphore's inner acquire detaches its cancellation handler on the
    // session's executor (before the completion reaches io_): emit there, so the
    // emit never races with that. The signal outlives a late emit.
    void cancel() override {
        if (!pending_) return;
        asio::post(session_.get_executor(), [signal = cancel_] { signal->emit(asio::cancellation_type::terminal); });
    }
    std::string node_path() const override { return lease_ ? lease_->node_path() : std::string(); }
    std::int64_t fencing_token() const override { return lease_ ? lease_->fencing_token() : 0; }
    void wait_lost(done_handler done) override {
        if (!lease_) return asio::post(io_, [done = std::move(done)] { done(make_error_code(errc::not_held)); });
        lease_->async_wait_lost(asio::bind_executor(io_, std::move(done)));
    }
    void release(done_handler done) override {
        if (!lease_) return asio::post(io_, [done = std::move(done)] { done(make_error_code(errc::not_held)); });
        lease_->async_release(asio::bind_executor(io_, std::move(done)));
    }
    std::string busy_message() const override {
        return "all " + std::to_string(semaphore_.permits()) + " permits of " + semaphore_.path() +
               " are held by others";
    }
    std::string failure_detail() const override { return semaphore_.failure_detail(); }

private:
    static SemaphoreOptions options(std::chrono::milliseconds lock_delay) {
        SemaphoreOptions o;
        o.lock_delay = lock_delay;
        return o;
    }

    asio::io_context& io_;
    Session& session_;
    Semaphore semaphore_;
    std::optional<Lease> lease_;
    std::shared_ptr<asio::cancellation_signal> cancel_ = std::make_shared<asio::cancellation_signal>();
    bool pending_ = false;
};

} // namespace

std::unique_ptr<holding> make_holding(asio::io_context& io, Session& session, const std::vector<std::string>& paths,
                                      std::optional<std::size_t> permits, node_names names,
                                      std::chrono::milliseconds lock_delay) {
    if (permits) return std::make_unique<lease_holding>(io, session, paths.front(), *permits, lock_delay);
    if (paths.size() > 1) {
        MultiMutexOptions o;
        o.lock_delay = lock_delay;
        return std::make_unique<lock_holding<MultiMutex>>(io, session, paths, o);
    }
    MutexOptions o;
    o.names = names;
    o.lock_delay = lock_delay;
    return std::make_unique<lock_holding<Mutex>>(io, session, paths.front(), o);
}

} // namespace zklock::cli
