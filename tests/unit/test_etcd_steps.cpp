// The etcd recipe's decisions (backends/etcd/etcd_steps), without a server.
#include "backends/etcd/etcd_steps.hpp"

#include <zklock/error.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <system_error>

namespace zklock::detail::etcd {
namespace {

using namespace std::chrono_literals;

endpoints parsed(const std::string& text) {
    std::error_code ec;
    std::string reason;
    auto e = parse_endpoints(text, ec, &reason);
    EXPECT_FALSE(ec) << text << ": " << reason;
    return e;
}

std::string refusal(const std::string& text) {
    std::error_code ec;
    std::string reason;
    parse_endpoints(text, ec, &reason);
    EXPECT_EQ(ec, errc::invalid_argument) << text;
    return reason;
}

TEST(EtcdSteps, EndpointsBecomeGrpcTargets) {
    EXPECT_EQ(parsed("127.0.0.1:2379"), (endpoints{"dns:///127.0.0.1:2379", false}));
    EXPECT_EQ(parsed("etcd.example"), (endpoints{"dns:///etcd.example:2379", false}));
    EXPECT_EQ(parsed("http://etcd.example:12379/"), (endpoints{"dns:///etcd.example:12379", false, true}));
    EXPECT_EQ(parsed("https://etcd.example:2379"), (endpoints{"dns:///etcd.example:2379", true}));
    EXPECT_EQ(parsed("[::1]:2379"), (endpoints{"dns:///[::1]:2379", false}));
    EXPECT_EQ(parsed("127.0.0.1:1,127.0.0.1:2,http://127.0.0.1:3"),
              (endpoints{"ipv4:127.0.0.1:1,127.0.0.1:2,127.0.0.1:3", false, true}));
    EXPECT_EQ(parsed("[::1]:1,[::1]:2"), (endpoints{"ipv6:[::1]:1,[::1]:2", false}));
}

TEST(EtcdSteps, BadEndpointsAreRefusedWithAReasonThatQuotesNoSecret) {
    EXPECT_NE(refusal("").find("no host"), std::string::npos);
    EXPECT_NE(refusal("127.0.0.1:0").find("1..65535"), std::string::npos);
    EXPECT_NE(refusal("127.0.0.1:99999").find("1..65535"), std::string::npos);
    EXPECT_NE(refusal("127.0.0.1:").find("empty port"), std::string::npos);
    EXPECT_NE(refusal("unix:///run/etcd.sock").find("scheme"), std::string::npos);
    EXPECT_NE(refusal("127.0.0.1:2379/v3").find("path"), std::string::npos);
    EXPECT_NE(refusal("::1:2379").find("brackets"), std::string::npos);
    EXPECT_NE(refusal("http://127.0.0.1:1,https://127.0.0.1:2").find("mixed"), std::string::npos);
    EXPECT_NE(refusal("a.example:1,b.example:2").find("literals"), std::string::npos);
    const auto why = refusal("http://root:hunter2@127.0.0.1:2379");
    EXPECT_NE(why.find("credentials"), std::string::npos);
    EXPECT_EQ(why.find("hunter2"), std::string::npos) << why;
}

TEST(EtcdSteps, KeysAreEtcdMutexKeys) {
    // concurrency.NewMutex(s, "zklock/job") queues at "zklock/job/" + fmt.Sprintf("%x", lease).
    EXPECT_EQ(queue_prefix("zklock/", "job"), "zklock/job/");
    EXPECT_EQ(contender_key("zklock/job/", 0x694d7c3a1f2b0e05), "zklock/job/694d7c3a1f2b0e05");
    EXPECT_EQ(contender_key("p/", 10), "p/a");
    EXPECT_EQ(prefix_range_end("zklock/job/"), "zklock/job0");
    EXPECT_EQ(prefix_range_end(std::string("a\xff", 2)), "b");
    EXPECT_EQ(prefix_range_end(std::string("\xff\xff", 2)), std::string(1, '\0'));
}

TEST(EtcdSteps, TheLeaseLastsItsTtlFromTheSendTimeOfTheLastAnsweredKeepalive) {
    const lease_clock::time_point t0{std::chrono::seconds(100)};
    lease_clock c;
    EXPECT_TRUE(c.lost(t0)) << "no answer yet: nothing is certain";
    c.answered(t0, 10);
    EXPECT_FALSE(c.lost(t0 + 9999ms));
    EXPECT_TRUE(c.lost(t0 + 10s));
    // An answer to an older keepalive never shortens the lease.
    c.answered(t0 + 5s, 10);
    c.answered(t0 + 1s, 10);
    EXPECT_EQ(*c.valid_until, t0 + 15s);
    // Unanswered keepalives change nothing: only answers extend it.
    EXPECT_TRUE(c.lost(t0 + 15s));
    c.answered(t0 + 6s, 0);
    EXPECT_TRUE(c.gone);
    EXPECT_TRUE(c.lost(t0 + 6s)) << "etcd said the lease is gone";
}

TEST(EtcdSteps, TheFirstKeyHoldsAndATryLockBehindItGivesUp) {
    EXPECT_EQ(next_after_txn(7, 7, false), after_txn::held);
    EXPECT_EQ(next_after_txn(7, std::nullopt, false), after_txn::held);
    EXPECT_EQ(next_after_txn(9, 7, false), after_txn::wait);
    EXPECT_EQ(next_after_txn(9, 7, true), after_txn::taken);
    EXPECT_EQ(next_after_wait(false, true), after_wait::held);
    EXPECT_EQ(next_after_wait(true, true), after_wait::watch);
    EXPECT_EQ(next_after_wait(true, false), after_wait::key_gone);
    EXPECT_EQ(next_after_wait(false, false), after_wait::key_gone);
}

TEST(EtcdSteps, GrpcStatusesMapToLockErrors) {
    EXPECT_EQ(from_grpc(0, ""), std::error_code{});
    EXPECT_EQ(from_grpc(14, "connection refused"), errc::connection_loss);
    EXPECT_EQ(from_grpc(4, "Deadline Exceeded"), errc::operation_timeout);
    EXPECT_EQ(from_grpc(16, ""), errc::auth_failed);
    EXPECT_EQ(from_grpc(9, "etcdserver: invalid auth token"), errc::auth_failed);
    EXPECT_EQ(from_grpc(7, "etcdserver: permission denied"), errc::no_auth);
    EXPECT_EQ(from_grpc(3, "etcdserver: user name is empty"), errc::auth_failed);
    EXPECT_EQ(from_grpc(5, "etcdserver: requested lease not found"), errc::session_expired);
    // A connection gRPC 1.51 could not make says why (its words, seen against etcd 3.4).
    const std::string failed = "failed to connect to all addresses; last error: ";
    EXPECT_EQ(from_grpc(14, failed + "UNKNOWN: ipv4:127.0.0.1:1: Ssl handshake failed: SSL_ERROR_SSL: "
                                      "error:0A000086:SSL routines::certificate verify failed", true),
              errc::tls_untrusted_server);
    EXPECT_EQ(from_grpc(14, failed + "UNKNOWN: ipv4:127.0.0.1:1: Peer name a.example is not in peer certificate", true),
              errc::tls_wrong_host);
    EXPECT_EQ(from_grpc(14, failed + "UNKNOWN: ipv4:127.0.0.1:1: Ssl handshake failed: SSL_ERROR_SSL: "
                                      "error:0A00010B:SSL routines::wrong version number", true),
              errc::tls_handshake_failed);
    EXPECT_EQ(from_grpc(14, failed + "UNAVAILABLE: ipv4:127.0.0.1:1: Endpoint read failed", true),
              errc::tls_handshake_failed);
    EXPECT_EQ(from_grpc(14, failed + "UNAVAILABLE: ipv4:127.0.0.1:1: Socket closed", false), errc::tls_required);
    // The same words on a connection that was up: the server went away.
    EXPECT_EQ(from_grpc(14, "Socket closed", false), errc::connection_loss);
    EXPECT_EQ(from_grpc(14, failed + "UNAVAILABLE: ipv4:127.0.0.1:1: Connection refused", false),
              errc::connection_loss);
    EXPECT_TRUE(token_expired(9, "etcdserver: invalid auth token"));
    EXPECT_FALSE(token_expired(14, "unavailable"));
    EXPECT_EQ(keepalive_period(10s), 3333ms);
    EXPECT_EQ(keepalive_period(200ms), 100ms);
}

} // namespace
} // namespace zklock::detail::etcd
