// zklock::FlockLockService: flock(2) on local files, the single-machine baseline.
#pragma once

#include <zklock/export.hpp>
#include <zklock/lock.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <memory>
#include <string>

namespace zklock {

namespace detail {
struct flock_context;
}

/// Locks named `name` as flock(2) exclusive locks on `<directory>/<name>.lock`.
/// No server: it coordinates processes on one machine only. The file also holds
/// the fencing counter (incremented under the lock). Waiters retry with jittered
/// backoff (1-16 ms), so grants are not FIFO; a holder's lock is released when its
/// process exits (or its descriptor closes), and nothing can take a held lock away,
/// so there is no loss to report. A lock file deleted while held would let a second
/// holder in on a new file: acquire checks that the locked descriptor still names
/// the file on disk, and retries otherwise.
class ZKLOCK_EXPORT FlockLockService : public LockService {
public:
    /// `directory` must exist. Without an executor the service runs its own
    /// io_context on one thread for its timers.
    explicit FlockLockService(std::string directory, boost::asio::any_io_executor executor = {});
    ~FlockLockService() override;
    Lock make_lock(const std::string& name) override;
    lock_capabilities capabilities() const noexcept override;

private:
    std::shared_ptr<detail::flock_context> context_;
};

} // namespace zklock
