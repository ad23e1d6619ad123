#include "holding.hpp"
#include "terminal_text.hpp"

#include <zklock/error.hpp>
#include <zklock/multi_mutex.hpp>
#include <zklock/mutex.hpp>
#include <zklock/semaphore.hpp>
#include <zklock/shared_mutex.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/post.hpp>

#include <functional>
#include <memory>
#include <string>
#include <utility>

namespace zklock::cli {
namespace {
namespace asio = boost::asio;
using std::chrono::milliseconds;

MutexOptions options(const holding_kind& kind) {
    MutexOptions o;
    o.names = kind.names;
    o.node_data = kind.node_data;
    o.lock_delay = kind.lock_delay;
    o.revocable = kind.revocable;
    return o;
}

// Every hold is a zklock::Lock (a Mutex, a SharedMutex's reader, a lock set,
// a Semaphore's permit): one class drives them all. `owner` keeps the object
// that `lock` belongs to alive; `nodes` reads its node(s).
class lock_holding final : public holding {
public:
    using event_hook = std::function<void(std::function<void(const lock_event&)>)>;

    lock_holding(asio::io_context& io, std::shared_ptr<void> owner, Lock& lock, std::function<std::string()> nodes,
                 std::string busy, event_hook events)
        : io_(io), owner_(std::move(owner)), lock_(lock), nodes_(std::move(nodes)), busy_(std::move(busy)),
          events_(std::move(events)) {}

    void acquire(bool no_wait, std::optional<milliseconds> wait, acquire_handler done) override {
        const auto bind = [this](auto handler) {
            return asio::bind_cancellation_slot(cancel_.slot(), asio::bind_executor(io_, std::move(handler)));
        };
        if (no_wait) return lock_.async_try_lock(bind(std::move(done)));
        if (wait) return lock_.async_try_lock_for(*wait, bind(std::move(done)));
        lock_.async_lock(bind([done = std::move(done)](std::error_code e) { done(e, !e); }));
    }
    // The lock completes on io_ and detaches the cancellation handler there: emit here.
    void cancel() override { cancel_.emit(asio::cancellation_type::terminal); }
    std::string node_path() const override { return nodes_(); }
    std::int64_t fencing_token() const override { return lock_.fencing_token(); }
    std::optional<std::chrono::milliseconds> safe_for() const override { return lock_.safe_for(); }
    bool is_held() const override { return lock_.is_held(); }
    void wait_lost(done_handler done) override { lock_.async_wait_lost(asio::bind_executor(io_, std::move(done))); }
    void release(done_handler done) override { lock_.async_unlock(asio::bind_executor(io_, std::move(done))); }
    bool requeue(bool no_wait, std::optional<milliseconds> wait, acquire_handler done) override {
        if (!place_) return false;
        const auto bind = [this](auto handler) {
            return asio::bind_cancellation_slot(cancel_.slot(), asio::bind_executor(io_, std::move(handler)));
        };
        if (no_wait || wait) place_->async_try_requeue_for(no_wait ? milliseconds(0) : *wait, bind(std::move(done)));
        else place_->async_requeue(bind([done = std::move(done)](std::error_code e) { done(e, !e); }));
        return true;
    }
    /// The queue place behind `lock`, which requeue() needs (none: a lock set).
    void set_place(QueueLock& place) { place_ = &place; }
    std::string busy_message() const override { return busy_; }
    std::string failure_detail() const override { return lock_.failure_detail(); }
    void on_event(std::function<void(const lock_event&)> callback) override {
        // The lock calls it on the session's thread: hop to the runner's.
        events_([&io = io_, callback = std::move(callback)](const lock_event& e) {
            asio::post(io, [callback, e] { callback(e); });
        });
    }

private:
    asio::io_context& io_;
    std::shared_ptr<void> owner_;
    Lock& lock_;
    std::function<std::string()> nodes_;
    std::string busy_;
    event_hook events_;
    asio::cancellation_signal cancel_;
    QueueLock* place_ = nullptr;
};

// A place in one queue, owned by the holding: its node is node_path().
std::unique_ptr<holding> hold_place(asio::io_context& io, std::shared_ptr<void> owner, QueueLock& place,
                                    std::string busy) {
    auto h = std::make_unique<lock_holding>(
        io, std::move(owner), place, [&place] { return place.node_path(); }, std::move(busy),
        [&place](std::function<void(const lock_event&)> cb) { place.on_event(std::move(cb)); });
    h->set_place(place);
    return h;
}

} // namespace

std::unique_ptr<holding> make_holding(asio::io_context& io, Session& session, const std::vector<std::string>& paths,
                                      const holding_kind& kind) {
    const auto& path = paths.front();
    if (kind.permits) {
        SemaphoreOptions o;
        o.node_data = kind.node_data;
        o.lock_delay = kind.lock_delay;
        o.revocable = kind.revocable;
        auto permit = std::make_shared<QueueLock>(Semaphore(session, path, *kind.permits, o).permit());
        const auto busy = *kind.permits == 1 ? "the only permit of " + path + " is held by another"
                                             : "all " + counted(static_cast<long long>(*kind.permits), "permit") +
                                                   " of " + path + " are held by others";
        return hold_place(io, permit, *permit, busy);
    }
    if (paths.size() > 1) {
        MultiMutexOptions o;
        o.node_data = kind.node_data;
        o.lock_delay = kind.lock_delay;
        o.revocable = kind.revocable;
        auto set = std::make_shared<MultiMutex>(session, paths, o);
        std::string all;
        for (const auto& p : paths) all += (all.empty() ? "" : ", ") + p;
        // One node per lock path, in the order given, a line each (paths hold no newline).
        auto nodes = [&set = *set] {
            std::string out;
            for (const auto& n : set.node_paths()) out += (out.empty() ? "" : "\n") + n;
            return out;
        };
        return std::make_unique<lock_holding>(
            io, set, *set, std::move(nodes), "locks " + all + ": someone else holds or waits ahead for one of them",
            [&set = *set](std::function<void(const lock_event&)> cb) { set.on_event(std::move(cb)); });
    }
    if (kind.shared) {
        auto rw = std::make_shared<SharedMutex>(session, path, options(kind));
        return hold_place(io, rw, rw->reader(),
                          "lock " + path + " is held, or waited for, by a writer");
    }
    auto mutex = std::make_shared<Mutex>(session, path, options(kind));
    return hold_place(io, mutex, *mutex, "lock " + path + " is held by someone else");
}

} // namespace zklock::cli
