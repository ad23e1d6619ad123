// The C client's log lines taken apart for a Session's log sink.
#include "fsm/client_log.hpp"

#include <gtest/gtest.h>

using zklock::log_level;
using zklock::detail::parse_client_log;
using zklock::detail::refused_address;

TEST(ClientLog, LevelAndMessageComeOutOfTheCClientsFormat) {
    // As the C client prints them (log_message in zk_log.c): Debian's 3.8 without
    // the thread id, other builds with "(0xTID)" after the pid.
    const auto info = parse_client_log(
        "2026-11-23 21:40:00,123:4242(0x7f3a1c2b3700):ZOO_INFO@log_env@1250: Client environment:host.name=box\n");
    ASSERT_TRUE(info);
    EXPECT_EQ(info->level, log_level::info);
    EXPECT_EQ(info->message, "Client environment:host.name=box");

    const auto error = parse_client_log(
        "2026-11-23 21:40:00,123:4242(0x7f3a1c2b3700):ZOO_ERROR@handle_socket_error_msg@1290: Socket "
        "[127.0.0.1:2181] zk retcode=-4, errno=111(Connection refused): server refused to accept the client");
    ASSERT_TRUE(error);
    EXPECT_EQ(error->level, log_level::error);
    EXPECT_EQ(error->message, "Socket [127.0.0.1:2181] zk retcode=-4, errno=111(Connection refused): server refused "
                              "to accept the client");

    const auto warn =
        parse_client_log("2026-11-23 21:25:52,577:867:ZOO_WARN@zookeeper_interest@2200: Delaying connection\n");
    ASSERT_TRUE(warn);
    EXPECT_EQ(warn->level, log_level::warn);
    EXPECT_EQ(warn->message, "Delaying connection");

    const auto debug = parse_client_log("t:1(0x1):ZOO_DEBUG@zoo_awget@3900: Sending request xid=0x1 for path [/x]");
    ASSERT_TRUE(debug);
    EXPECT_EQ(debug->level, log_level::debug);
}

TEST(ClientLog, ALineWithoutALevelIsNotALogLine) {
    EXPECT_FALSE(parse_client_log(""));
    EXPECT_FALSE(parse_client_log("no level here: ZOO_ but no tag\n"));
}

// A connect refused by the server's address (nothing listens there) is told
// apart from every other failure: only ECONNREFUSED counts.
TEST(ClientLog, ARefusedConnectNamesItsAddress) {
    EXPECT_EQ(refused_address("Socket 127.0.0.1:1 zk retcode=-4, errno=111(Connection refused): server refused to "
                              "accept the client"),
              "127.0.0.1:1");
    EXPECT_EQ(refused_address("Socket [::1]:2181 zk retcode=-4, errno=111(Connection refused): server refused to "
                              "accept the client"),
              "[::1]:2181");
    EXPECT_EQ(refused_address("Socket [127.0.0.1:2181] zk retcode=-4, errno=111(Connection refused): server refused"),
              "127.0.0.1:2181");
    EXPECT_FALSE(refused_address("Socket 10.0.0.1:2181 zk retcode=-4, errno=113(No route to host): server refused to "
                                 "accept the client"));
    EXPECT_FALSE(refused_address("Socket 127.0.0.1:2181 zk retcode=-4, errno=112(Host is down): connect() call failed"));
    EXPECT_FALSE(refused_address("Initiating client connection, host=127.0.0.1:1 sessionTimeout=10000"));
    EXPECT_FALSE(refused_address("Socket  zk retcode=-4, errno=111(Connection refused): x"));
}
