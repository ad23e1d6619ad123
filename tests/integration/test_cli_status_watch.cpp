// zklock status --watch: the queues of several locks, printed again on each
// change (one JSON line per change when not on a terminal), until a signal.
#include "test_cli_support.hpp"

#include <boost/asio/use_future.hpp>
#include <nlohmann/json.hpp>

#include <csignal>
#include <set>

using namespace zklock;
using namespace zklock::test;
using namespace zklock::test::cli;

namespace {

class StatusWatchTest : public CliTest {};

// The JSON lines printed so far (each a complete line).
std::vector<nlohmann::json> json_lines(const std::filesystem::path& p) {
    std::vector<nlohmann::json> out;
    for (const auto& line : complete_lines(p)) out.push_back(nlohmann::json::parse(line));
    return out;
}

std::vector<std::string> nodes_in(const nlohmann::json& line) {
    std::vector<std::string> out;
    for (const auto& c : line.at("contenders")) out.push_back(c.at("node"));
    return out;
}

TEST_F(StatusWatchTest, PrintsALinePerChangeOfEachLockAndExitsZeroOnSigint) {
    const auto a = lock_path("a"), b = lock_path("b");
    auto p = cli_.start({"status", "-c", server_->connect_string(), "-W", "--json", a, b}, "watch");
    const auto out = cli_.output_path("watch");
    // Waits for line n (0-based) and returns it.
    const auto line = [&](std::size_t n) {
        EXPECT_TRUE(wait_until([&] { return complete_lines(out).size() > n; }, 20s)) << read_file(out);
        const auto lines = json_lines(out);
        return n < lines.size() ? lines[n] : nlohmann::json::object({{"path", ""}, {"contenders", {}}});
    };
    // Both locks first, as they are: empty.
    std::set<std::string> first{line(0).at("path"), line(1).at("path")};
    EXPECT_EQ(first, (std::set<std::string>{a, b}));
    EXPECT_TRUE(line(0).at("contenders").empty());
    EXPECT_TRUE(line(0).contains("at_ms"));

    auto s1 = connect(), s2 = connect();
    Mutex holder(*s1, a), waiter(*s2, a);
    holder.lock();
    const auto h = node_name(holder.node_path());
    EXPECT_EQ(line(2).at("path"), a);
    EXPECT_EQ(nodes_in(line(2)), std::vector<std::string>{h});
    auto granted = waiter.async_lock(boost::asio::use_future);
    const auto w = (wait_until([&] { return !waiter.node_path().empty(); }), node_name(waiter.node_path()));
    EXPECT_EQ(nodes_in(line(3)), (std::vector<std::string>{h, w}));
    holder.unlock();
    EXPECT_FALSE(get_within(granted));
    EXPECT_EQ(nodes_in(line(4)), std::vector<std::string>{w});
    waiter.unlock();
    EXPECT_TRUE(line(5).at("contenders").empty());
    EXPECT_EQ(line(5).at("path"), a);

    ASSERT_TRUE(p.signal(SIGINT));
    EXPECT_EQ(exit_code(p), 0) << read_file(out);
    EXPECT_EQ(complete_lines(out).size(), 6u) << read_file(out);  // one line per change, nothing for b
}

// -w, --watch's old short name, still works (old scripts), saying first on
// stderr that -W or --watch is its name now.
TEST_F(StatusWatchTest, PrintsATimedBlockPerChangeAsTextAndExitsZeroOnSigterm) {
    const auto path = lock_path();
    auto p = cli_.start({"status", "-c", server_->connect_string(), "-w", "-o", "wide", path}, "text");
    const auto text = [&] { return cli_.output("text"); };
    // Nobody has made the lock's node yet: the path does not exist.
    ASSERT_TRUE(wait_until([&] { return text().find(": the lock path does not exist") != std::string::npos; }, 20s))
        << text();
    const std::string note = "zklock: status -w is the old short name of --watch: write -W or --watch";
    EXPECT_EQ(text().rfind(note, 0), 0u) << text();
    EXPECT_EQ(text().find("\n@ ") + 1, text().find('\n') + 1) << text();  // then the block, which starts with its time

    auto s = connect();
    Mutex holder(*s, path);
    holder.lock();
    const auto h = node_name(holder.node_path());
    ASSERT_TRUE(wait_until([&] { return text().find(h) != std::string::npos; }, 20s)) << text();
    EXPECT_NE(text().find(path + ": 1 contender (position 0 holds the lock)"), std::string::npos) << text();
    holder.unlock();
    ASSERT_TRUE(wait_until([&] { return text().rfind(": no contenders\n") > text().find(h); }, 20s)) << text();

    ASSERT_TRUE(p.signal(SIGTERM));
    EXPECT_EQ(exit_code(p), 0) << text();
}

} // namespace
