// ACLs and authentication: parsing, digest ids, policy checks. No server.
#include <zklock/acl.hpp>
#include "fsm/acl_check.hpp"
#include <zklock/error.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <sys/stat.h>
#include <unistd.h>

using namespace zklock;

TEST(Acl, DigestIdIsWhatTheServerComputes) {
    // The value ZooKeeper's documentation gives for super:superpw.
    EXPECT_EQ(digest_id("super", "superpw"), "super:g9oN2HttPfn8MMWJZ2r45Np/LIA=");
    EXPECT_EQ(digest_acl("alice", "secret", perms::read), (acl_entry{"digest", "alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E=", perms::read}));
}

TEST(Acl, ParsesZkCliSyntax) {
    EXPECT_EQ(parse_acl("auth::cdrwa"), acls::creator_all());
    EXPECT_EQ(parse_acl("auth::cdrwa,world:anyone:r"), acls::creator_all_world_read());
    EXPECT_EQ(parse_acl("world:anyone:cdrwa"), acls::open_unsafe());
    // A digest id holds a ':' itself: the permissions follow the last one.
    EXPECT_EQ(parse_acl("digest:alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E=:rw"),
              (acl_list{{"digest", "alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E=", perms::read | perms::write}}));
    EXPECT_EQ(parse_acl(" ip:10.0.0.0/8:r , world:anyone:CD "),
              (acl_list{{"ip", "10.0.0.0/8", perms::read}, {"world", "anyone", perms::create | perms::remove}}));
}

TEST(Acl, RefusesMalformedEntriesWithAReason) {
    for (const char* bad : {"", "auth", "auth:cdrwa", ":anyone:r", "world:anyone:rx", "world:anyone:", "auth::cdrwa,"}) {
        std::error_code ec;
        std::string reason;
        const auto acl = parse_acl(bad, ec, &reason);
        EXPECT_EQ(ec, errc::invalid_argument) << "accepted '" << bad << "'";
        EXPECT_FALSE(reason.empty()) << bad;
        EXPECT_TRUE(acl.empty());
    }
    EXPECT_THROW(parse_acl("nonsense"), zklock::error);
}

TEST(Acl, PrintsInZkCliSyntax) {
    EXPECT_EQ(perms_to_string(perms::all), "cdrwa");
    EXPECT_EQ(perms_to_string(perms::read | perms::admin), "ra");
    EXPECT_EQ(to_string(acls::creator_all_world_read()), "auth::cdrwa,world:anyone:r");
    const auto text = "digest:bob:X/Y=:cdr,ip:127.0.0.1:a";
    EXPECT_EQ(to_string(parse_acl(text)), text);
}

TEST(Acl, AuthEntriesAreCheckedAndNamedWithoutTheirSecret) {
    std::error_code ec;
    std::string reason;
    auto e = parse_auth("digest:alice:s3cret:with:colons", ec, &reason);
    ASSERT_FALSE(ec) << reason;
    EXPECT_EQ(e, (auth_entry{"digest", "alice:s3cret:with:colons"}));
    EXPECT_EQ(identity(e), "digest:alice");
    EXPECT_EQ(identity(std::vector<auth_entry>{}), "anyone (no authentication)");
    for (const char* bad : {"digest:alice", "digest::pw", "nocolon", ":x"}) {
        parse_auth(bad, ec, &reason);
        EXPECT_EQ(ec, errc::invalid_argument) << bad;
    }
    parse_auth("digest:alice", ec, &reason);
    EXPECT_EQ(reason.find("alice:"), std::string::npos) << reason;
}

TEST(Acl, PolicyValidation) {
    std::string reason;
    EXPECT_FALSE(validate_acl(acls::open_unsafe(), false));
    EXPECT_FALSE(validate_acl(acls::creator_all(), true));
    EXPECT_EQ(validate_acl(acls::creator_all(), false, &reason), errc::invalid_argument);
    EXPECT_NE(reason.find("authenticates as nobody"), std::string::npos) << reason;
    EXPECT_EQ(validate_acl({}, true), errc::invalid_argument);
    EXPECT_EQ(validate_acl({{"world", "anyone", 0}}, false), errc::invalid_argument);
    EXPECT_EQ(validate_acl({{"world", "anyone", 64}}, false), errc::invalid_argument);
}

TEST(AclCheck, ExpandsTheCreatorToItsDigestIdentities) {
    using detail::expand_policy;
    const std::vector<auth_entry> auth{{"digest", "alice:secret"}, {"ip", "ignored"}};
    EXPECT_EQ(expand_policy(acls::creator_all_world_read(), auth),
              (acl_list{digest_acl("alice", "secret"), {"world", "anyone", perms::read}}));
    EXPECT_TRUE(detail::is_open(acls::open_unsafe()));
    EXPECT_FALSE(detail::is_open(acls::creator_all_world_read()));
}

TEST(AclCheck, FindsWhatAnExistingAclGrantsBeyondThePolicy) {
    using detail::first_excess;
    const auto policy = detail::expand_policy(acls::creator_all_world_read(), {{"digest", "alice:secret"}});
    // What the server stores for alice's own directory: nothing more than the policy.
    EXPECT_FALSE(first_excess(policy, policy));
    EXPECT_FALSE(first_excess({digest_acl("alice", "secret", perms::read)}, policy));
    // An open directory, or one another identity may change, is more open.
    EXPECT_EQ(first_excess(acls::open_unsafe(), policy), (acl_entry{"world", "anyone", perms::all}));
    EXPECT_EQ(first_excess({digest_acl("alice", "secret"), digest_acl("mallory", "x", perms::remove)}, policy),
              digest_acl("mallory", "x", perms::remove));
    EXPECT_TRUE(first_excess({{"world", "anyone", perms::read | perms::create}}, policy));
    // A wrong password is another identity.
    EXPECT_TRUE(first_excess({digest_acl("alice", "guess")}, policy));
}

namespace {
std::string write_file(const std::string& name, const std::string& content, mode_t mode) {
    const auto path = (std::filesystem::temp_directory_path() /
                       (name + "-" + std::to_string(::getpid()) + "-" +
                        ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                          .string();
    std::ofstream(path) << content;
    ::chmod(path.c_str(), mode);
    return path;
}
} // namespace

TEST(AuthFile, ReadsPrivateFiles) {
    const auto path = write_file("auth", "# zklock\n\ndigest:alice:secret\n  digest:ops:two:parts  \n", 0600);
    std::error_code ec;
    std::string reason;
    const auto auth = read_auth_file(path, ec, &reason);
    std::filesystem::remove(path);
    ASSERT_FALSE(ec) << reason;
    EXPECT_EQ(auth, (std::vector<auth_entry>{{"digest", "alice:secret"}, {"digest", "ops:two:parts"}}));
}

TEST(AuthFile, RefusesFilesOthersMayReadAndNeverQuotesTheSecret) {
    for (mode_t mode : {0640, 0604, 0660, 0602}) {
        const auto path = write_file("auth", "digest:alice:topsecret\n", mode);
        std::error_code ec;
        std::string reason;
        const auto auth = read_auth_file(path, ec, &reason);
        std::filesystem::remove(path);
        EXPECT_EQ(ec, errc::invalid_argument) << std::oct << mode;
        EXPECT_TRUE(auth.empty());
        EXPECT_NE(reason.find("chmod 600"), std::string::npos) << reason;
        EXPECT_EQ(reason.find("topsecret"), std::string::npos) << reason;
    }
    const auto path = write_file("auth", "digest:alice\n", 0600);
    std::error_code ec;
    std::string reason;
    read_auth_file(path, ec, &reason);
    std::filesystem::remove(path);
    EXPECT_EQ(ec, errc::invalid_argument);
    EXPECT_NE(reason.find("line 1"), std::string::npos) << reason;
    read_auth_file("/nonexistent/zklock-auth", ec, &reason);
    EXPECT_EQ(ec, errc::invalid_argument);
}
