#include <zklock/error.hpp>
#include "fsm/reply_kind.hpp"

#include <gtest/gtest.h>
#include <zookeeper.h>

#include <set>

using zklock::errc;

TEST(Errors, EveryZooKeeperCodeHasItsOwnErrc) {
    const int codes[] = {ZSYSTEMERROR, ZRUNTIMEINCONSISTENCY, ZDATAINCONSISTENCY, ZCONNECTIONLOSS, ZMARSHALLINGERROR,
                         ZUNIMPLEMENTED, ZOPERATIONTIMEOUT, ZBADARGUMENTS, ZINVALIDSTATE, ZNEWCONFIGNOQUORUM,
                         ZRECONFIGINPROGRESS, ZSSLCONNECTIONERROR, ZAPIERROR, ZNONODE, ZNOAUTH, ZBADVERSION,
                         ZNOCHILDRENFOREPHEMERALS, ZNODEEXISTS, ZNOTEMPTY, ZSESSIONEXPIRED, ZINVALIDCALLBACK,
                         ZINVALIDACL, ZAUTHFAILED, ZCLOSING, ZNOTHING, ZSESSIONMOVED, ZNOTREADONLY,
                         ZEPHEMERALONLOCALSESSION, ZNOWATCHER, ZRECONFIGDISABLED, ZSESSIONCLOSEDREQUIRESASLAUTH,
                         ZTHROTTLEDOP};
    std::set<int> seen;
    for (int rc : codes) {
        const auto ec = zklock::from_zookeeper(rc);
        EXPECT_TRUE(ec) << rc;
        EXPECT_EQ(&ec.category(), &zklock::error_category());
        EXPECT_NE(ec, errc::unknown_zookeeper_error) << "unmapped ZooKeeper code " << rc;
        EXPECT_TRUE(seen.insert(ec.value()).second) << "two codes map to " << ec.message();
        EXPECT_FALSE(ec.message().empty());
        EXPECT_EQ(ec.message().find("unknown"), std::string::npos) << rc;
    }
    EXPECT_FALSE(zklock::from_zookeeper(ZOK));
    EXPECT_EQ(zklock::from_zookeeper(-9999), errc::unknown_zookeeper_error);
}

TEST(Errors, SpecificMappings) {
    EXPECT_EQ(zklock::from_zookeeper(ZNONODE), errc::no_node);
    EXPECT_EQ(zklock::from_zookeeper(ZCONNECTIONLOSS), errc::connection_loss);
    EXPECT_EQ(zklock::from_zookeeper(ZSESSIONEXPIRED), errc::session_expired);
    EXPECT_EQ(zklock::from_zookeeper(ZNOAUTH), errc::no_auth);
    EXPECT_EQ(zklock::from_zookeeper(ZAUTHFAILED), errc::auth_failed);
}

TEST(Errors, Predicates) {
    EXPECT_TRUE(zklock::is_retryable(errc::connection_loss));
    EXPECT_TRUE(zklock::is_retryable(errc::operation_timeout));
    EXPECT_TRUE(zklock::is_retryable(errc::throttled_op));
    EXPECT_FALSE(zklock::is_retryable(errc::no_node));
    EXPECT_FALSE(zklock::is_retryable(errc::session_expired));
    for (auto e : {errc::no_auth, errc::auth_failed, errc::insecure_acl, errc::invalid_acl,
                   errc::blocked_by_persistent_node})
        EXPECT_FALSE(zklock::is_retryable(e)) << make_error_code(e).message();
    for (auto e : {errc::session_expired, errc::connection_suspended, errc::node_deleted, errc::session_closed,
                   errc::revoked})
        EXPECT_TRUE(zklock::is_lock_lost(e));
    EXPECT_FALSE(zklock::is_lock_lost(errc::timeout));
    EXPECT_FALSE(zklock::is_lock_lost(std::error_code{}));
}

TEST(Errors, ExceptionCarriesTheCode) {
    try {
        zklock::throw_if(make_error_code(errc::invalid_path), "ctx");
        FAIL() << "no throw";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), errc::invalid_path);
        EXPECT_NE(std::string(e.what()).find("ctx"), std::string::npos);
    }
    EXPECT_NO_THROW(zklock::throw_if({}, "ctx"));
    EXPECT_STREQ(zklock::error_category().name(), "zklock");
}

TEST(Errors, ASecondAcquireIsTheDeadlockStdMutexReports) {
    EXPECT_EQ(make_error_code(errc::already_acquiring), std::errc::resource_deadlock_would_occur);
    EXPECT_EQ(make_error_code(errc::would_deadlock), std::errc::resource_deadlock_would_occur);
    EXPECT_NE(make_error_code(errc::timeout), std::errc::resource_deadlock_would_occur);
    // Every other code stays its own condition.
    EXPECT_EQ(make_error_code(errc::session_expired).default_error_condition(),
              std::error_condition(static_cast<int>(errc::session_expired), zklock::error_category()));
}

TEST(Errors, OneReadingOfEveryReply) {
    using zklock::detail::classify_reply;
    using zklock::detail::reply_kind;
    EXPECT_EQ(classify_reply(std::error_code{}), reply_kind::ok);
    // What the C client fails pending requests with when it drops a connection,
    // and what the server refuses to run now: sent again, and is_retryable.
    for (auto e : {errc::connection_loss, errc::operation_timeout, errc::runtime_inconsistency, errc::marshalling_error,
                   errc::system_error, errc::throttled_op, errc::session_moved}) {
        EXPECT_EQ(classify_reply(make_error_code(e)), reply_kind::retry) << make_error_code(e).message();
        EXPECT_TRUE(zklock::is_retryable(e)) << make_error_code(e).message();
    }
    for (auto e : {errc::session_expired, errc::invalid_state})
        EXPECT_EQ(classify_reply(make_error_code(e)), reply_kind::session_gone) << make_error_code(e).message();
    for (auto e : {errc::closing, errc::session_closed})
        EXPECT_EQ(classify_reply(make_error_code(e)), reply_kind::closed) << make_error_code(e).message();
    for (auto e : {errc::no_node, errc::node_exists, errc::no_auth, errc::not_empty, errc::bad_version}) {
        EXPECT_EQ(classify_reply(make_error_code(e)), reply_kind::answer) << make_error_code(e).message();
        EXPECT_FALSE(zklock::is_retryable(e));
    }
    EXPECT_EQ(classify_reply(std::make_error_code(std::errc::timed_out)), reply_kind::answer);
    // The C client's return codes read the same way; a closing handle gives up
    // with session_closed.
    EXPECT_EQ(classify_reply(ZCONNECTIONLOSS), reply_kind::retry);
    EXPECT_EQ(classify_reply(ZSESSIONEXPIRED), reply_kind::session_gone);
    EXPECT_EQ(classify_reply(ZCLOSING), reply_kind::closed);
    EXPECT_EQ(zklock::detail::reply_error(ZCLOSING), errc::session_closed);
    EXPECT_EQ(zklock::detail::reply_error(ZNONODE), errc::no_node);
}

// The Redis, Redlock and PostgreSQL backends report with the same codes: their
// messages name no server (neither ZooKeeper for another server's connection or
// lease, nor the other backends in a ZooKeeper run), and read as one clause.
TEST(Errors, TheCodesEveryBackendUsesNameNoServer) {
    for (const auto code : {zklock::errc::connection_loss, zklock::errc::session_expired, zklock::errc::session_closed,
                            zklock::errc::timeout, zklock::errc::auth_failed, zklock::errc::no_auth,
                            zklock::errc::node_deleted}) {
        const auto text = make_error_code(code).message();
        for (const auto* server : {"ZooKeeper", "Redis", "PostgreSQL"})
            EXPECT_EQ(text.find(server), std::string::npos) << text;
        EXPECT_EQ(text.find('('), std::string::npos) << text;  // callers wrap it in their own parentheses
    }
}

TEST(Errors, ARefusedConnectionIsTheConditionOfTheStandardLibrary) {
    EXPECT_EQ(make_error_code(errc::connection_refused), std::errc::connection_refused);
    EXPECT_FALSE(make_error_code(errc::connection_refused).message().empty());
}
