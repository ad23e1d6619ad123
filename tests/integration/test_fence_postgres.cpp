// PostgresFence and zklock_fenced_write() against a real, password-protected
// PostgreSQL: a paused ZooKeeper lock holder's late write is refused.
#include "fence_support.hpp"

#include <zklock/postgres/postgres_fence.hpp>
#include <zklock/testing/postgres_server.hpp>

#include <boost/asio/use_future.hpp>

#include <future>

namespace zklock::test {
namespace {

testing::PostgresServerOptions with_password() {
    testing::PostgresServerOptions o;
    o.password = "fence-Pa55";  // from a 0600 file; never on a command line
    return o;
}

// The password through a password file, as a deployment would (PGPASSFILE, ~/.pgpass).
std::string conninfo(const testing::PostgresServer& pg) {
    return pg.connect_string() + " passfile=" + pg.pgpass_path().string();
}

fence::write_fn writer(PostgresFence& f, const std::string& resource) {
    return [&f, resource](std::int64_t token, const std::string& value) { return f.write(resource, token, value); };
}
fence::read_fn reader(PostgresFence& f, const std::string& resource) {
    return [&f, resource] { return f.read(resource); };
}

TEST(PostgresFence, PausedZooKeeperHoldersLateWriteIsRefused) {
    testing::ZooKeeperServer zk(fence::zookeeper_options());
    testing::PostgresServer pg(with_password());
    PostgresFence f(conninfo(pg));
    fence::paused_holder_late_write_is_refused(zk, writer(f, "orders-42"), reader(f, "orders-42"));
    // The row as SQL users see it.
    EXPECT_EQ(pg.psql("SELECT convert_from(value, 'UTF8') FROM zklock_fenced WHERE resource = 'orders-42'"), "B\n");
}

TEST(PostgresFence, EqualAndHigherTokensAreAcceptedLowerRefusedAlsoFromSql) {
    testing::PostgresServer pg(with_password());
    {
        // Not installed and not allowed to install: the function is missing.
        PostgresFenceOptions o;
        o.install = false;
        PostgresFence bare(conninfo(pg), o);
        std::error_code ec;
        bare.write("r", 1, "x", ec);
        EXPECT_EQ(ec, errc::no_node) << ec.message();
    }
    PostgresFence f(conninfo(pg));
    fence::equal_and_higher_accepted_lower_refused(writer(f, "report"), reader(f, "report"));
    f.install();  // idempotent
    f.install();

    // zklock_fenced_write() is usable from SQL as installed.
    EXPECT_EQ(pg.psql("SELECT applied, stored_token FROM zklock_fenced_write('sql', 10, 'ten')"), "t|10\n");
    EXPECT_EQ(pg.psql("SELECT applied, stored_token FROM zklock_fenced_write('sql', 10, 'ten again')"), "t|10\n");
    EXPECT_EQ(pg.psql("SELECT applied, stored_token FROM zklock_fenced_write('sql', 9, 'nine')"), "f|10\n");
    EXPECT_EQ(f.read("sql"), (fenced_value{10, "ten again"}));
    EXPECT_THROW(pg.psql("SELECT * FROM zklock_fenced_write('sql', 0, 'zero')"), std::runtime_error);

    // Binary values, the error_code and asynchronous forms.
    const std::string binary("\0\x01\xff\n'\\x", 7);
    std::error_code ec;
    EXPECT_EQ(f.write("bin", 3, binary, ec), (fenced_write_result{true, 3}));
    EXPECT_FALSE(ec) << ec.message();
    auto refused = f.async_write("bin", 2, "old", boost::asio::use_future);
    EXPECT_EQ(get_within(refused), std::make_tuple(std::error_code(), fenced_write_result{false, 3}));
    auto value = f.async_read("bin", boost::asio::use_future);
    EXPECT_EQ(get_within(value), std::make_tuple(std::error_code(), std::optional<fenced_value>({3, binary})));
    EXPECT_EQ(f.read("never-written"), std::nullopt);

    // Bad arguments are refused before any I/O.
    f.write("r", 0, "x", ec);
    EXPECT_EQ(ec, errc::invalid_argument);
    f.write("", 5, "x", ec);
    EXPECT_EQ(ec, errc::invalid_argument);
    EXPECT_THROW(f.write("r", -3, "x"), zklock::error);

    // No password: an authentication error, not a lost connection.
    PostgresFence stranger(pg.connect_string() + " passfile=/nonexistent");
    stranger.write("report", 100, "x", ec);
    EXPECT_EQ(ec, errc::no_auth) << ec.message();
    EXPECT_EQ(f.read("report"), (fenced_value{(std::int64_t{1} << 62) + 1, "big"}));
}

TEST(PostgresFence, ConcurrentWritersInRandomOrderLeaveTheHighestTokensValue) {
    testing::PostgresServer pg(with_password());
    const auto descriptors_before = fence::open_descriptors();
    const auto seed = std::random_device{}();
    SCOPED_TRACE("seed " + std::to_string(seed));
    const auto lanes = fence::shuffled_lanes(1000, 24, 4, seed);
    // One fence (one connection) per lane; every fence installs on connect at
    // once (serialized by the advisory lock), then the lanes write concurrently.
    std::vector<std::unique_ptr<PostgresFence>> fences;
    for (std::size_t i = 0; i < lanes.size(); ++i) fences.push_back(std::make_unique<PostgresFence>(conninfo(pg)));
    std::vector<std::pair<std::int64_t, std::future<std::tuple<std::error_code, fenced_write_result>>>> writes;
    for (std::size_t i = 0; i < lanes.size(); ++i)
        for (const auto token : lanes[i])
            writes.emplace_back(token, fences[i]->async_write("contended", token, fence::value_of(token),
                                                              boost::asio::use_future));
    for (auto& [token, result] : writes) {
        const auto [ec, r] = get_within(result, std::chrono::seconds(30));
        EXPECT_FALSE(ec) << ec.message();
        fence::expect_consistent(token, r);
        if (token == 1024) {
            EXPECT_TRUE(r.applied) << "the highest token is never refused";
        }
    }
    // Every connection the fences opened is close-on-exec.
    const auto inheritable = fence::inheritable_since(descriptors_before);
    EXPECT_TRUE(inheritable.empty()) << ::testing::PrintToString(inheritable);
    EXPECT_EQ(fences[0]->read("contended"), (fenced_value{1024, fence::value_of(1024)}));
}

} // namespace
} // namespace zklock::test
