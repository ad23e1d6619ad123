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

namespace zklock::cli {
namespace {
namespace asio = boost::asio;
using std::chrono::milliseconds;

MutexOptions options(const holding_kind& kind) {
    MutexOptions o;
    o.names = kind.names;
    o.node_data = kind.node_data;
    o.lock_delay = kind.lock_delay;
    return o;
}

// The calls of an exclusive hold (Mutex), of a shared one (SharedMutex's reader
// side) and of a lock set (MultiMutex), so that one class drives them all.
struct exclusive_side {
    using lock_type = Mutex;
    static Mutex make(Session& s, const std::vector<std::string>& paths, const holding_kind& kind) {
        return Mutex(s, paths.front(), options(kind));
    }
    template <class H> static void lock(Mutex& m, H h) { m.async_lock(std::move(h)); }
    template <class H> static void try_lock(Mutex& m, H h) { m.async_try_lock(std::move(h)); }
    template <class H> static void try_lock_for(Mutex& m, milliseconds d, H h) { m.async_try_lock_for(d, std::move(h)); }
    template <class H> static void unlock(Mutex& m, H h) { m.async_unlock(std::move(h)); }
    template <class H> static void wait_lost(Mutex& m, H h) { m.async_wait_lost(std::move(h)); }
    static std::string node_path(const Mutex& m) { return m.node_path(); }
    static std::int64_t fencing_token(const Mutex& m) { return m.fencing_token(); }
    static std::string failure_detail(const Mutex& m) { return m.failure_detail(); }
    static std::string busy(const std::vector<std::string>& paths, const holding_kind&) {
        return "lock " + paths.front() + " is held by someone else";
    }
};

struct shared_side {
    using lock_type = SharedMutex;
    static SharedMutex make(Session& s, const std::vector<std::string>& paths, const holding_kind& kind) {
        return SharedMutex(s, paths.front(), options(kind));
    }
    template <class H> static void lock(SharedMutex& m, H h) { m.async_lock_shared(std::move(h)); }
    template <class H> static void try_lock(SharedMutex& m, H h) { m.async_try_lock_shared(std::move(h)); }
    template <class H> static void try_lock_for(SharedMutex& m, milliseconds d, H h) {
        m.async_try_lock_shared_for(d, std::move(h));
    }
    template <class H> static void unlock(SharedMutex& m, H h) { m.async_unlock_shared(std::move(h)); }
    template <class H> static void wait_lost(SharedMutex& m, H h) { m.async_wait_lost_shared(std::move(h)); }
    static std::string node_path(const SharedMutex& m) { return m.node_path_shared(); }
    static std::int64_t fencing_token(const SharedMutex& m) { return m.shared_fencing_token(); }
    static std::string failure_detail(const SharedMutex& m) { return m.failure_detail_shared(); }
    static std::string busy(const std::vector<std::string>& paths, const holding_kind&) {
        return "lock " + paths.front() + " is held, or waited for, by a writer (an exclusive holder)";
    }
};

struct set_side {
    using lock_type = MultiMutex;
    static MultiMutex make(Session& s, const std::vector<std::string>& paths, const holding_kind& kind) {
        MultiMutexOptions o;
        o.node_data = kind.node_data;
        o.lock_delay = kind.lock_delay;
        return MultiMutex(s, paths, o);
    }
    template <class H> static void lock(MultiMutex& m, H h) { m.async_lock(std::move(h)); }
    template <class H> static void try_lock(MultiMutex& m, H h) { m.async_try_lock(std::move(h)); }
    template <class H> static void try_lock_for(MultiMutex& m, milliseconds d, H h) {
        m.async_try_lock_for(d, std::move(h));
    }
    template <class H> static void unlock(MultiMutex& m, H h) { m.async_unlock(std::move(h)); }
    template <class H> static void wait_lost(MultiMutex& m, H h) { m.async_wait_lost(std::move(h)); }
    // One node per lock path, in the order given, a line each (paths hold no newline).
    static std::string node_path(const MultiMutex& m) {
        std::string out;
        for (const auto& n : m.node_paths()) out += (out.empty() ? "" : "\n") + n;
        return out;
    }
    static std::int64_t fencing_token(const MultiMutex& m) { return m.fencing_token(); }
    static std::string failure_detail(const MultiMutex& m) { return m.failure_detail(); }
    static std::string busy(const std::vector<std::string>& paths, const holding_kind&) {
        std::string all;
        for (const auto& p : paths) all += (all.empty() ? "" : ", ") + p;
        return "locks " + all + ": someone else holds or waits ahead for one of them";
    }
};

// One permit of the semaphore at the path: a Mutex under the semaphore's
// rule (Semaphore::permit()), held through the exclusive side's calls.
struct permit_side : exclusive_side {
    static Mutex make(Session& s, const std::vector<std::string>& paths, const holding_kind& kind) {
        SemaphoreOptions o;
        o.node_data = kind.node_data;
        o.lock_delay = kind.lock_delay;
        return Semaphore(s, paths.front(), *kind.permits, o).permit();
    }
    static std::string busy(const std::vector<std::string>& paths, const holding_kind& kind) {
        if (*kind.permits == 1) return "the only permit of " + paths.front() + " is held by another";
        return "all " + counted(static_cast<long long>(*kind.permits), "permit") + " of " + paths.front() +
               " are held by others";
    }
};

template <class Side> class lock_holding final : public holding {
public:
    lock_holding(asio::io_context& io, Session& session, const std::vector<std::string>& paths,
                 const holding_kind& kind)
        : io_(io), paths_(paths), kind_(kind), lock_(Side::make(session, paths, kind)) {}

    void acquire(bool no_wait, std::optional<milliseconds> wait, acquire_handler done) override {
        const auto bind = [this](auto handler) {
            return asio::bind_cancellation_slot(cancel_.slot(), asio::bind_executor(io_, std::move(handler)));
        };
        if (no_wait) return Side::try_lock(lock_, bind(std::move(done)));
        if (wait) return Side::try_lock_for(lock_, *wait, bind(std::move(done)));
        Side::lock(lock_, bind([done = std::move(done)](std::error_code e) { done(e, !e); }));
    }
    // The lock completes on io_ and detaches the cancellation handler there: emit here.
    void cancel() override { cancel_.emit(asio::cancellation_type::terminal); }
    std::string node_path() const override { return Side::node_path(lock_); }
    std::int64_t fencing_token() const override { return Side::fencing_token(lock_); }
    void wait_lost(done_handler done) override { Side::wait_lost(lock_, asio::bind_executor(io_, std::move(done))); }
    void release(done_handler done) override { Side::unlock(lock_, asio::bind_executor(io_, std::move(done))); }
    std::string busy_message() const override { return Side::busy(paths_, kind_); }
    std::string failure_detail() const override { return Side::failure_detail(lock_); }

private:
    asio::io_context& io_;
    std::vector<std::string> paths_;
    holding_kind kind_;
    typename Side::lock_type lock_;
    asio::cancellation_signal cancel_;
};

} // namespace

std::unique_ptr<holding> make_holding(asio::io_context& io, Session& session, const std::vector<std::string>& paths,
                                      const holding_kind& kind) {
    if (kind.permits) return std::make_unique<lock_holding<permit_side>>(io, session, paths, kind);
    if (paths.size() > 1) return std::make_unique<lock_holding<set_side>>(io, session, paths, kind);
    if (kind.shared) return std::make_unique<lock_holding<shared_side>>(io, session, paths, kind);
    return std::make_unique<lock_holding<exclusive_side>>(io, session, paths, kind);
}

} // namespace zklock::cli
