// Secrets hidden from output and taken off a child's argv, without a server.
#include "support/secrets.hpp"

#include <gtest/gtest.h>

namespace zklock::detail {
namespace {

TEST(Redact, ConninfoPasswordsUnquotedAndQuoted) {
    EXPECT_EQ(redact_secrets("host=h port=5432 password=hunter2 dbname=d"), "host=h port=5432 password=*** dbname=d");
    EXPECT_EQ(redact_secrets("password='hunter 2' user=u"), "password='***' user=u");
    EXPECT_EQ(redact_secrets("password = 'it\\'s hunter2' user=u"), "password = '***' user=u");
    EXPECT_EQ(redact_secrets("password=hun\\ ter2 user=u"), "password=*** user=u");  // libpq's escaped blank
    EXPECT_EQ(redact_secrets("user=u PASSWORD=hunter2"), "user=u PASSWORD=***");
    EXPECT_EQ(redact_secrets("sslpassword=hunter2"), "sslpassword=***");
    EXPECT_EQ(redact_secrets("PGPASSWORD=hunter2 pgbench"), "PGPASSWORD=*** pgbench");
    EXPECT_EQ(redact_secrets("password=\"hunter 2\""), "password=\"***\"");
    EXPECT_EQ(redact_secrets("password='never closed hunter2"), "password='***'");
    EXPECT_EQ(redact_secrets("user=u password="), "user=u password=");  // nothing to hide
    EXPECT_EQ(redact_secrets("password= user=u"), "password= ***");     // libpq reads "user=u" as the password
}

TEST(Redact, UrlUserinfoPasswords) {
    EXPECT_EQ(redact_secrets("postgresql://alice:hunter2@db:5432/app"), "postgresql://alice:***@db:5432/app");
    EXPECT_EQ(redact_secrets("--redis redis://alice:hunter2@h:6379/2 -c x"), "--redis redis://alice:***@h:6379/2 -c x");
    EXPECT_EQ(redact_secrets("redis://:hunter2@h:1"), "redis://:***@h:1");
    EXPECT_EQ(redact_secrets("redis://alice:hun@ter2@h:1"), "redis://alice:***@h:1");  // up to the last '@'
    EXPECT_EQ(redact_secrets("postgres://u:pw@h/db?sslmode=require&password=hunter2"),
              "postgres://u:***@h/db?sslmode=require&password=***");
    // Several URLs in one argument (Redlock's list): each one's own.
    EXPECT_EQ(redact_secrets("redis://a:hunter2@h:1,redis://b:hunter3@h:2"), "redis://a:***@h:1,redis://b:***@h:2");
}

TEST(Redact, EverythingElseIsKept) {
    for (const char* plain : {"", "host=h port=5432 user=u dbname=d", "redis://h:6379/1", "postgresql://alice@db/app",
                              "127.0.0.1:2181,127.0.0.1:2182/chroot", "zklock bench --backend redis,postgres-advisory",
                              "FATAL: password authentication failed for user \"u\"", "password", "a://b"})
        EXPECT_EQ(redact_secrets(plain), plain);
}

TEST(Redact, NoSecretSurvives) {
    for (const char* text : {"password=hunter2", "x password='hunter2' y", "password=\"a\\\"hunter2\"",
                             "redis://u:hunter2@h", "postgresql://u:hunter2@h/d", "postgresql://h/d?password=hunter2",
                             "password =\thunter2", "redis://u:a@hunter2@h"}) {
        SCOPED_TRACE(text);
        EXPECT_EQ(redact_secrets(text).find("hunter2"), std::string::npos) << redact_secrets(text);
    }
}

TEST(SplitConninfo, KeywordValuePassword) {
    auto s = split_conninfo_password("host=127.0.0.1 port=5432 user=u password=hunter2 dbname=d");
    ASSERT_TRUE(s);
    EXPECT_EQ(s->conninfo, "host=127.0.0.1 port=5432 user=u dbname=d");
    EXPECT_EQ(s->password, "hunter2");

    s = split_conninfo_password("  password = 'it\\'s a \\\\ secret'  host='my host' ");
    ASSERT_TRUE(s);
    EXPECT_EQ(s->conninfo, "host='my host'");
    EXPECT_EQ(s->password, "it's a \\ secret");

    s = split_conninfo_password("password=a\\ b host=h");
    ASSERT_TRUE(s);
    EXPECT_EQ(s->password, "a b");
    EXPECT_EQ(s->conninfo, "host=h");

    s = split_conninfo_password("host=h dbname=d");
    ASSERT_TRUE(s);
    EXPECT_EQ(s->conninfo, "host=h dbname=d");
    EXPECT_EQ(s->password, "");
}

TEST(SplitConninfo, UriPassword) {
    auto s = split_conninfo_password("postgresql://alice:hun%40ter2@db:5432/app?sslmode=disable");
    ASSERT_TRUE(s);
    EXPECT_EQ(s->conninfo, "postgresql://alice@db:5432/app?sslmode=disable");
    EXPECT_EQ(s->password, "hun@ter2");

    s = split_conninfo_password("postgres://db/app?password=hunter2&application_name=x");
    ASSERT_TRUE(s);
    EXPECT_EQ(s->conninfo, "postgres://db/app?application_name=x");
    EXPECT_EQ(s->password, "hunter2");

    s = split_conninfo_password("postgresql://alice@db/app");
    ASSERT_TRUE(s);
    EXPECT_EQ(s->conninfo, "postgresql://alice@db/app");
    EXPECT_EQ(s->password, "");
}

TEST(SplitConninfo, UnreadableOrOtherSecretsAreRefused) {
    EXPECT_FALSE(split_conninfo_password("host"));
    EXPECT_FALSE(split_conninfo_password("password='unterminated"));
    EXPECT_FALSE(split_conninfo_password("host=h sslpassword=hunter2"));
    EXPECT_FALSE(split_conninfo_password("postgresql://u:bad%zz@h/d"));
    EXPECT_FALSE(split_conninfo_password("postgresql://h/d?sslpassword=x"));
}

TEST(PgpassLine, EscapesAndRefusesLineBreaks) {
    EXPECT_EQ(pgpass_line("hunter2"), "*:*:*:*:hunter2\n");
    EXPECT_EQ(pgpass_line("a:b\\c"), "*:*:*:*:a\\:b\\\\c\n");
    EXPECT_FALSE(pgpass_line("a\nb"));
}

} // namespace
} // namespace zklock::detail
