// The fault kit's pure decisions: what the four-letter words say, which
// iptables rules to add and find, which sockets and packets a partition cuts.
#include <zklock/testing/four_letter_words.hpp>
#include <zklock/testing/packet_filter.hpp>

#include "testing/partition_rules.hpp"
#include "testing/tcp_sockets.hpp"

#include <gtest/gtest.h>

#include <algorithm>

using namespace zklock::testing;
using zklock::testing::detail::NodePorts;
using zklock::testing::detail::TcpSocket;

TEST(FourLetterWords, ServedConnectionsReadsPortsAndSessionIds) {
    const std::string cons =
        " /127.0.0.1:52102[0](queued=0,recved=1,sent=0)\n"
        " /127.0.0.1:40022[1](queued=0,recved=12,sent=12,sid=0x100008a3c2d0000,lop=PING,est=1700000000000,"
        "to=2000,lcxid=0x5,lzxid=0x1f,lresp=12,llat=0,minlat=0,avglat=0.1,maxlat=1)\n"
        " /[0:0:0:0:0:0:0:1]:40023[1](queued=0,recved=2,sent=2,sid=0xfffffffffffffffe)\n"
        "\n";
    const auto c = served_connections(cons);
    ASSERT_EQ(c.size(), 3u);
    EXPECT_EQ(c[0].client_port, 52102);
    EXPECT_FALSE(c[0].session_id.has_value());
    EXPECT_EQ(c[1].client_port, 40022);
    EXPECT_EQ(c[1].session_id, 0x100008a3c2d0000LL);
    EXPECT_EQ(c[2].client_port, 40023);
    EXPECT_EQ(c[2].session_id, -2) << "ids are Java longs, printed as unsigned hex";
}

TEST(FourLetterWords, ServedConnectionsSkipsOtherLines) {
    EXPECT_TRUE(served_connections("").empty());
    EXPECT_TRUE(served_connections("This ZooKeeper instance is not currently serving requests\n").empty());
    EXPECT_TRUE(served_connections(" /127.0.0.1:notaport[1](queued=0)\n").empty());
    EXPECT_TRUE(served_connections("Mode: leader\n").empty());
}

TEST(FourLetterWords, ServerMode) {
    EXPECT_EQ(server_mode("Zookeeper version: 3.8.0\nMode: follower\nNode count: 5\n"), "follower");
    EXPECT_EQ(server_mode("Mode: leader"), "leader");
    EXPECT_FALSE(server_mode("This ZooKeeper instance is not currently serving requests\n"));
    EXPECT_FALSE(server_mode("XMode: leader\n"));
}

TEST(PacketRules, CommentNamesZklockAndTheProcess) {
    EXPECT_EQ(packet_rule_comment(1234, "link 127.0.0.1:4000"), "zklock-testing pid=1234 link 127.0.0.1:4000");
    EXPECT_EQ(packet_rule_comment(7, ""), "zklock-testing pid=7");
    EXPECT_THROW(packet_rule_comment(7, "a\"b"), std::invalid_argument);
    EXPECT_THROW(packet_rule_comment(7, "x;rm"), std::invalid_argument);
}

TEST(PacketRules, SpecMatchesLoopbackTcpByPort) {
    using V = std::vector<std::string>;
    EXPECT_EQ(packet_rule_spec({0, 2181}, "c"),
              (V{"-i", "lo", "-p", "tcp", "--dport", "2181", "-m", "comment", "--comment", "c", "-j", "DROP"}));
    EXPECT_EQ(packet_rule_spec({40000, 0}, "c"),
              (V{"-i", "lo", "-p", "tcp", "--sport", "40000", "-m", "comment", "--comment", "c", "-j", "DROP"}));
    EXPECT_EQ(packet_rule_spec({1, 2}, "c"), (V{"-i", "lo", "-p", "tcp", "--sport", "1", "--dport", "2", "-m",
                                                "comment", "--comment", "c", "-j", "DROP"}));
}

TEST(PacketRules, FindsZklockRulesOfOneProcess) {
    const std::string listing =
        "# Warning: iptables-legacy tables present, use iptables-legacy to see them\n"
        "-P INPUT ACCEPT\n"
        "-A INPUT -i lo -p tcp -m tcp --dport 40000 -m comment --comment \"zklock-testing pid=12 link 127.0.0.1:40000\" -j DROP\n"
        "-A INPUT -i lo -p tcp -m tcp --dport 40001 -m comment --comment \"zklock-testing pid=123 link\" -j DROP\n"
        "-A INPUT -i lo -p tcp -m tcp --dport 22 -m comment --comment \"someone else's\" -j DROP\n"
        "-A INPUT -p tcp -m tcp --dport 80 -j ACCEPT\n";
    EXPECT_EQ(zklock_rules_in(listing, 0).size(), 2u);
    ASSERT_EQ(zklock_rules_in(listing, 12).size(), 1u);
    EXPECT_NE(zklock_rules_in(listing, 12)[0].find("40000"), std::string::npos);
    EXPECT_EQ(zklock_rules_in(listing, 123).size(), 1u);
    EXPECT_TRUE(zklock_rules_in(listing, 1).empty());
}

TEST(PacketRules, CountsDroppedPacketsOfOneComment) {
    const std::string listing =
        "-P INPUT ACCEPT -c 0 0\n"
        "-A INPUT -i lo -p tcp -m tcp --sport 40000 -m comment --comment \"zklock-testing pid=12 link\" -c 3 180 -j DROP\n"
        "-A INPUT -i lo -p tcp -m tcp --dport 40000 -m comment --comment \"zklock-testing pid=12 link\" -c 4 240 -j DROP\n"
        "-A INPUT -i lo -p tcp -m tcp --dport 40001 -m comment --comment \"zklock-testing pid=12 link 2\" -c 100 1 -j DROP\n";
    EXPECT_EQ(dropped_packets_in(listing, "zklock-testing pid=12 link"), 7u);
    EXPECT_EQ(dropped_packets_in(listing, "zklock-testing pid=12 link 2"), 100u);
    EXPECT_EQ(dropped_packets_in(listing, "zklock-testing pid=13"), 0u);
}

TEST(TcpSockets, ParsesProcNetTables) {
    const std::string tcp =
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
        "   0: 0100007F:0C6B 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 5001 1 0 100 0 0 10 0\n"
        "   1: 0100007F:9CA4 0100007F:0C6B 01 00000000:00000000 00:00000000 00000000     0        0 5002 1 0 20 4 30 10 -1\n"
        "garbage\n";
    const std::string tcp6 =
        "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
        "   0: 0000000000000000FFFF00000100007F:0C77 0000000000000000FFFF00000100007F:8ED4 01 00000000:00000000 00:00000000 00000000     0        0 6001 1 0 20 4 30 10 -1\n";
    const auto v4 = zklock::testing::detail::parse_proc_net_tcp(tcp);
    ASSERT_EQ(v4.size(), 2u);
    EXPECT_EQ(v4[0], (TcpSocket{3179, 0, 10, 5001}));
    EXPECT_EQ(v4[1], (TcpSocket{40100, 3179, 1, 5002}));
    const auto v6 = zklock::testing::detail::parse_proc_net_tcp(tcp6);
    ASSERT_EQ(v6.size(), 1u);
    EXPECT_EQ(v6[0], (TcpSocket{3191, 36564, 1, 6001}));
}

// Ports as in a real 3-node ensemble: the leader (myid 3) opened election
// connections to the two lower ids; both followers connect to its quorum port.
TEST(PartitionRules, CutsTheNodesOwnPortsAndTheConnectionsItOpened) {
    const NodePorts leader{2381, 3183, 3193};
    const std::vector<NodePorts> peers{{2181, 3181, 3191}, {2281, 3182, 3192}};
    const std::vector<TcpSocket> sockets{
        {3183, 0, 10, 1},       // quorum listener
        {3193, 0, 10, 2},       // election listener
        {2381, 0, 10, 3},       // client listener
        {3183, 38326, 1, 4},    // follower 2 synced to us
        {3183, 38336, 1, 5},    // follower 1 synced to us
        {60468, 3192, 1, 6},    // our election connection to node 2
        {36052, 3191, 1, 7},    // our election connection to node 1
        {2381, 51000, 1, 8},    // a client: left alone
        {45000, 5432, 1, 9},    // something else entirely: left alone
        {46000, 3191, 6, 10},   // not established: left alone
    };
    const auto rules = zklock::testing::detail::partition_rules(leader, peers, sockets);
    const std::vector<TcpPacketMatch> expected{{0, 3183}, {3183, 0}, {0, 3193}, {3193, 0},
                                               {60468, 3192}, {3192, 60468}, {36052, 3191}, {3191, 36052}};
    EXPECT_EQ(rules, expected);
    for (const auto& r : rules) {
        EXPECT_NE(r.source_port, 2381);
        EXPECT_NE(r.destination_port, 2381);
    }
}

TEST(PartitionRules, StandaloneHasNothingToCut) {
    EXPECT_TRUE(zklock::testing::detail::partition_rules({2181, 0, 0}, {}, {{2181, 0, 10, 1}, {2181, 50000, 1, 2}}).empty());
}
