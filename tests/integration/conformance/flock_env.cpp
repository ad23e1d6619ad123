#include "backend_env.hpp"

#include "../support.hpp"

#include <zklock/local/flock_lock_service.hpp>
#include <zklock/testing/backend_servers.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

namespace zklock::conformance {
namespace {

class FlockEnv : public BackendEnv {
public:
    std::unique_ptr<LockService> client() override { return std::make_unique<FlockLockService>(dir_.string()); }
    void crash(LockService&) override {}
    std::optional<std::string> cannot_crash() const override {
        return "a flock is released only when its holder's process exits; FlockLock.ReleasedWhenTheHolderProcessExits "
               "kills a real process";
    }
    void steal(const std::string&) override {}  // never called: flock reports no loss (nothing can take it)
    std::size_t leftovers(const std::string& name) override {
        const int fd = ::open((dir_ / (name + ".lock")).c_str(), O_RDWR | O_CLOEXEC);
        if (fd < 0) return 0;
        const bool free = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
        ::close(fd);
        return free ? 0 : 1;
    }
private:
    testing::BackendServers servers_;
    const std::filesystem::path& dir_ = servers_.flock_directory();
};

const Registration flock_registered("flock", [] { return std::make_unique<FlockEnv>(); });

} // namespace

// The dead-owner case for flock, with a real process: the child takes the lock
// through the library and exits without releasing it.
TEST(FlockLock, ReleasedWhenTheHolderProcessExits) {
    testing::TempDir dir("zklock-flock-");
    int report[2];
    ASSERT_EQ(::pipe(report), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ::close(report[0]);
        FlockLockService service(dir.path().string());
        Lock lock = service.make_lock("job");
        lock.lock();
        const std::int64_t token = lock.fencing_token();
        if (::write(report[1], &token, sizeof token) != static_cast<ssize_t>(sizeof token)) ::_exit(2);
        ::_exit(0);  // no unlock, no destructors: as a crash would
    }
    ::close(report[1]);
    std::int64_t child_token = 0;
    ASSERT_EQ(::read(report[0], &child_token, sizeof child_token), static_cast<ssize_t>(sizeof child_token));
    ::close(report[0]);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    FlockLockService service(dir.path().string());
    Lock lock = service.make_lock("job");
    EXPECT_TRUE(lock.try_lock_for(std::chrono::seconds(5)));
    EXPECT_GT(lock.fencing_token(), child_token);
    lock.unlock();
}

} // namespace zklock::conformance
