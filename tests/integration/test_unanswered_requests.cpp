// A server that takes requests and answers none (paused with SIGSTOP: its
// connections stay open, what the client sends waits in the socket). Every
// operation with a deadline still completes: an acquire whose deadline
// passed, and a release, each within the session timeout, while the session
// keeps the delete it could not confirm and retries it once a server answers.
#include "support.hpp"

#include <zklock/error.hpp>
#include <zklock/mutex.hpp>

#include <boost/asio/use_future.hpp>

#include <mutex>

using namespace zklock;
using namespace zklock::test;

namespace {

// Far longer than the session timeout, so that an operation waiting for the
// server completes only after the pause and the test tells the two apart; it
// ends by itself, so a broken library fails the test instead of hanging it.
constexpr auto long_pause = 30s;

class UnansweredRequestsTest : public ServerTest {};

}  // namespace

TEST_F(UnansweredRequestsTest, AReleaseNoServerAnswersCompletesWithTimeoutAndTheSessionStillDeletesTheNode) {
    const auto path = lock_path();
    std::mutex log_mutex;
    std::vector<std::string> warnings;  // the session's log: the retried delete is one
    auto o = options(4000ms);
    o.log = log_sink{log_level::warn, [&](const log_record& r) {
                         std::lock_guard lk(log_mutex);
                         warnings.emplace_back(r.message);
                     }};
    auto s = std::make_unique<Session>(o);
    s->connect();
    Mutex m(*s, path);
    m.lock();
    ASSERT_TRUE(server_->pause_for(long_pause));
    // Connected as far as the client knows: the delete goes out and nobody answers.
    auto released = m.async_unlock(boost::asio::use_future);
    const auto ec = get_within(released, long_pause * 2);
    EXPECT_EQ(ec, errc::timeout) << ec.message();
    EXPECT_TRUE(server_->paused()) << "the release waited for the server to answer again";
    EXPECT_FALSE(m.is_held());
    server_->resume();
    // The session deletes the node once connected (or the server drops it with an expired session).
    auto observer = connect();
    EXPECT_TRUE(wait_until([&] { return list_contenders(*observer, path).empty(); }, 60s));
    EXPECT_TRUE(wait_until([&] {
        std::lock_guard lk(log_mutex);
        for (const auto& w : warnings)
            if (w.find("deleting ") == 0 && w.find("retried once connected") != std::string::npos) return true;
        return false;
    })) << "the retried delete was not logged";
    s.reset();  // before the log it writes to goes
}

TEST_F(UnansweredRequestsTest, AnAcquireWhoseDeadlinePassesWhileNoServerAnswersCompletesWithinTheSessionTimeout) {
    const auto path = lock_path();
    auto holder_session = connect(4000ms);
    Mutex holder(*holder_session, path);
    holder.lock();

    auto s = connect(4000ms);
    Mutex waiter(*s, path);
    auto acquired = waiter.async_try_lock_for(1s, boost::asio::use_future);
    ASSERT_TRUE(wait_until([&] { return waiter.queue_position() == std::optional<std::size_t>(1); }, 10s));
    ASSERT_TRUE(server_->pause_for(long_pause));
    // The deadline passes while the client still counts itself connected (it
    // notices a silent server after 2/3 of the session timeout): the delete of
    // its node goes out and nobody answers.
    const auto [ec, ok] = get_within(acquired, long_pause * 2);
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_FALSE(ok);
    EXPECT_TRUE(server_->paused()) << "the timed-out acquire waited for the server to answer again";
    server_->resume();

    auto observer = connect();
    std::vector<contender> queue;
    EXPECT_TRUE(wait_until(
        [&] {
            std::error_code e;
            queue = list_contenders(*observer, path, e);
            return !e && queue.size() <= 1;
        },
        60s))
        << "the waiter's node was never deleted";
    holder.unlock();
}
