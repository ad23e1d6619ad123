#include <zklock/error.hpp>

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
    for (auto e : {errc::session_expired, errc::connection_suspended, errc::node_deleted, errc::session_closed})
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
