// The PostgreSQL connection's cancel requests (pg_connection): a cancel is
// asked for one statement, and a statement queued behind it is sent only once
// every cancel request asked meanwhile has reached the server, so a late one
// cannot cancel it. The acquire sends its cancel again every 200 ms until the
// statement answers: on a loaded machine the first request can take longer
// than that, and then the second landed on the next acquire's statement
// (SQLSTATE 57014 out of try_lock_for).
#include "support.hpp"

#include "backends/postgres/pg_connection.hpp"

#include <zklock/testing/postgres_server.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

namespace zklock::test {
namespace {

namespace asio = boost::asio;
using detail::pg::connection;
using detail::pg::no_deadline;
using detail::pg::result;

TEST(PostgresCancel, AStatementQueuedBehindCancelsIsNotCancelledByTheLateOnes) {
    zklock::testing::PostgresServer server;
    asio::io_context io;
    auto work = asio::make_work_guard(io);
    std::thread runner([&] { io.run(); });
    auto strand = asio::make_strand(io.get_executor());
    auto conn = std::make_shared<connection>(connection::strand_type(strand));
    const auto on_strand = [&](std::function<void()> fn) {
        std::promise<void> done;
        asio::post(strand, [&] {
            fn();
            done.set_value();
        });
        done.get_future().wait();
    };

    std::promise<std::error_code> connected;
    on_strand([&] {
        conn->connect(server.connect_string(), "zklock-test:cancel", 10s,
                      [&](std::error_code ec) { connected.set_value(ec); });
    });
    auto c = connected.get_future();
    ASSERT_EQ(get_within(c), std::error_code{});

    std::promise<std::error_code> first, second;
    on_strand([&] {
        conn->query("SELECT pg_sleep(60)", {}, true, no_deadline,
                    [&](std::error_code ec, std::vector<result>) { first.set_value(ec); });
    });
    ASSERT_TRUE(wait_until([&] {
        return server.psql("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'zklock-test:cancel' "
                           "AND state = 'active' AND query LIKE 'SELECT pg_sleep(60)%'") == "1\n";
    })) << "the first statement never ran";

    // Several requests at once, as the repeated cancel of a slow machine
    // leaves them; the first to land ends the sleep.
    on_strand([&] {
        for (int i = 0; i < 8; ++i) conn->send_cancel();
        conn->query("SELECT pg_sleep(0.5), 1", {}, true, no_deadline,
                    [&](std::error_code ec, std::vector<result>) { second.set_value(ec); });
    });
    auto f1 = first.get_future();
    auto f2 = second.get_future();
    EXPECT_EQ(get_within(f1), detail::pg::error_from_sqlstate("57014"));
    EXPECT_EQ(get_within(f2), std::error_code{}) << "a cancel asked for the first statement cancelled the second";

    on_strand([&] { conn->close(); });
    work.reset();
    runner.join();
}

} // namespace
} // namespace zklock::test
