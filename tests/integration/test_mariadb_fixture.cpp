// MariaDBServer (zklock::testing_backends): a real mariadbd on loopback,
// started, probed, faulted and cleaned up. Each test pays one server start
// (about two seconds), so they are few and each checks several things.
#include <zklock/testing/mariadb_server.hpp>
#include <zklock/testing/process.hpp>

#include <gtest/gtest.h>

#include <mysql.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include <sys/stat.h>
#include <unistd.h>

namespace {

using namespace std::chrono_literals;
using zklock::testing::MariaDBServer;

std::string cmdline_of(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
    std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (auto& c : s)
        if (c == '\0') c = ' ';
    return s;
}

// A client connect as `user` over TCP: 0 when `SELECT 1` answered, else the error number.
unsigned connect_as(const MariaDBServer& server, const std::string& user, const char* password) {
    MYSQL* m = mysql_init(nullptr);
    const unsigned timeout = 10;
    mysql_optionsv(m, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
    const unsigned protocol = MYSQL_PROTOCOL_TCP;
    mysql_optionsv(m, MYSQL_OPT_PROTOCOL, &protocol);
    unsigned result = 0;
    if (!mysql_real_connect(m, "127.0.0.1", user.c_str(), password, server.database().c_str(), server.port(), nullptr, 0))
        result = mysql_errno(m);
    else if (mysql_query(m, "SELECT 1") != 0)
        result = mysql_errno(m);
    else
        mysql_free_result(mysql_store_result(m));
    mysql_close(m);
    return result;
}

TEST(MariaDBServerTest, StartsAsItsOwnUserAndKeepsThePasswordOffEveryCommandLine) {
    zklock::testing::MariaDBServerOptions options;
    options.password = "maria pass'word\\42";  // quotes and backslashes reach the server intact
    const auto started = std::chrono::steady_clock::now();
    MariaDBServer server(options);
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
    std::cout << "MariaDBServer started in " << took.count() << " ms (" << server.version() << ")\n";
    EXPECT_TRUE(server.running());
    EXPECT_EQ(server.connect_string(), "mysql://zklock@127.0.0.1:" + std::to_string(server.port()) + "/zklock");
    EXPECT_EQ(server.query("SELECT 1"), "1\n");
    EXPECT_EQ(server.query("SELECT @@log_bin, @@skip_name_resolve, @@innodb_flush_log_at_trx_commit"), "0|1|2\n");
    EXPECT_EQ(server.query("SELECT 'a', NULL UNION ALL SELECT 'b', 2"), "a|NULL\nb|2\n");
    // The clients' account needs its password; root is not reachable over TCP.
    EXPECT_EQ(connect_as(server, "zklock", options.password.c_str()), 0u);
    EXPECT_EQ(connect_as(server, "zklock", "wrong"), 1045u);
    EXPECT_EQ(connect_as(server, "zklock", nullptr), 1045u);
    EXPECT_NE(connect_as(server, "root", nullptr), 0u);
    // No secret on any command line, in the log or in a file of the temp dir.
    const auto cmdline = cmdline_of(server.pid());
    EXPECT_NE(cmdline.find("mariadbd"), std::string::npos) << cmdline;
    EXPECT_EQ(cmdline.find("pass"), std::string::npos) << cmdline;
    EXPECT_EQ(server.log_tail(1000).find("pass'word"), std::string::npos);
    for (const auto& e : std::filesystem::directory_iterator(server.directory())) {
        if (!e.is_regular_file()) continue;
        std::ifstream in(e.path(), std::ios::binary);
        const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        EXPECT_EQ(text.find("pass'word"), std::string::npos) << e.path();
    }
    if (::geteuid() == 0) {
        std::ifstream status("/proc/" + std::to_string(server.pid()) + "/status");
        const std::string text((std::istreambuf_iterator<char>(status)), std::istreambuf_iterator<char>());
        EXPECT_EQ(text.find("\nUid:\t0\t"), std::string::npos) << "mariadbd runs as root";
    }
    try {
        server.query("SELECT * FROM no_such_table");
        FAIL() << "query did not throw";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("doesn't exist"), std::string::npos) << e.what();
    }
}

TEST(MariaDBServerTest, FaultsKeepDataAndDestructionLeavesNothing) {
    std::filesystem::path dir;
    pid_t pid = -1;
    {
        MariaDBServer server;
        dir = server.directory();
        const auto port = server.port();
        server.query("CREATE TABLE t(v INT) ENGINE=InnoDB; INSERT INTO t VALUES (42)");
        server.restart();
        EXPECT_EQ(server.port(), port);
        EXPECT_EQ(server.query("SELECT v FROM t"), "42\n");
        server.query("INSERT INTO t VALUES (43)");
        server.kill9();
        EXPECT_FALSE(server.running());
        server.restart();  // InnoDB's recovery: committed rows survive
        EXPECT_EQ(server.query("SELECT v FROM t ORDER BY v"), "42\n43\n");
        ASSERT_TRUE(server.pause());
        EXPECT_THROW(server.query("SELECT 1", 1500ms), std::runtime_error);
        ASSERT_TRUE(server.resume());
        EXPECT_EQ(server.query("SELECT 1"), "1\n");
        pid = server.pid();
        server.stop();
        EXPECT_THROW(server.query("SELECT 1", 2s), std::runtime_error);
        server.restart();
        pid = server.pid();
    }
    EXPECT_FALSE(std::filesystem::exists(dir));
    EXPECT_TRUE(cmdline_of(pid).empty()) << "mariadbd " << pid << " still runs";
}

} // namespace
