// `zklock write`'s words (tools/zklock/write_ops.hpp), without a server.
#include "write_ops.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace zklock;
using namespace zklock::cli;

namespace {

std::string no_stdin() {
    ADD_FAILURE() << "stdin read without a '-'";
    return {};
}

} // namespace

TEST(CliWriteOps, WordsBecomeOperationsInOrder) {
    const auto w = parse_write_ops({"create", "/a", "1", "set:3", "/b", "two words", "delete", "/c", "check:0", "/d",
                                    "sequential", "/log/e-", "", "check", "/f", "delete:7", "/g"},
                                   no_stdin);
    ASSERT_EQ(w.error, "");
    ASSERT_EQ(w.ops.size(), 7u);
    EXPECT_EQ(w.ops[0].type, guarded_op::kind::create);
    EXPECT_EQ(w.ops[0].path, "/a");
    EXPECT_EQ(w.ops[0].data, "1");
    EXPECT_EQ(w.ops[1].type, guarded_op::kind::set_data);
    EXPECT_EQ(w.ops[1].version, 3);
    EXPECT_EQ(w.ops[1].data, "two words");
    EXPECT_EQ(w.ops[2].type, guarded_op::kind::erase);
    EXPECT_EQ(w.ops[2].version, -1);
    EXPECT_EQ(w.ops[3].type, guarded_op::kind::check);
    EXPECT_EQ(w.ops[3].version, 0);
    EXPECT_EQ(w.ops[4].type, guarded_op::kind::sequential);
    EXPECT_EQ(w.ops[4].data, "");
    EXPECT_EQ(w.ops[5].version, -1);
    EXPECT_EQ(w.ops[6].version, 7);
}

TEST(CliWriteOps, DataFromStdinOnce) {
    int reads = 0;
    const auto w = parse_write_ops({"set", "/a", "-"}, [&] {
        ++reads;
        return std::string("from stdin\n");
    });
    ASSERT_EQ(w.error, "");
    EXPECT_EQ(w.ops[0].data, "from stdin\n");
    EXPECT_EQ(reads, 1);
    EXPECT_NE(parse_write_ops({"set", "/a", "-", "create", "/b", "-"}, [] { return std::string(); }).error.find("only one"),
              std::string::npos);
}

TEST(CliWriteOps, BadWordsSayWhatIsWrong) {
    EXPECT_EQ(parse_write_ops({}, no_stdin).error, "no operation given");
    EXPECT_EQ(parse_write_ops({"put", "/a", "1"}, no_stdin).error,
              "'put' is no operation (create, sequential, set, delete, check)");
    EXPECT_EQ(parse_write_ops({"set", "/a"}, no_stdin).error, "set needs PATH DATA");
    EXPECT_EQ(parse_write_ops({"delete"}, no_stdin).error, "delete needs PATH");
    EXPECT_EQ(parse_write_ops({"create:2", "/a", "1"}, no_stdin).error, "'create:2': create takes no version");
    EXPECT_EQ(parse_write_ops({"set:x", "/a", "1"}, no_stdin).error,
              "'set:x': the version after ':' must be a number from 0");
    EXPECT_EQ(parse_write_ops({"set:-1", "/a", "1"}, no_stdin).error,
              "'set:-1': the version after ':' must be a number from 0");
}

TEST(CliWriteOps, TheLockNodesAreTheLinesOfTheVariable) {
    EXPECT_EQ(lock_nodes_of("/l/_c_1-lock-0000000001"), (std::vector<std::string>{"/l/_c_1-lock-0000000001"}));
    EXPECT_EQ(lock_nodes_of("/a/n1\n/b/n2\n"), (std::vector<std::string>{"/a/n1", "/b/n2"}));
    EXPECT_EQ(lock_nodes_of("\n\r\n"), std::vector<std::string>{});
    EXPECT_EQ(lock_nodes_of(""), std::vector<std::string>{});
}
