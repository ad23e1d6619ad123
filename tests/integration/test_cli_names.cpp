// `zklock run --names` and `zklock elect --names`: the node the CLI creates is
// named in the naming asked for (zklock::node_names), and a semaphore refuses
// any naming but zklock's.
#include "test_cli_support.hpp"

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

namespace zklock::test::cli {
namespace {

// The node's name as the command saw it in ZKLOCK_LOCK_NODE.
std::string node_seen(const std::filesystem::path& file) {
    auto text = read_file(file);
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return std::filesystem::path(text).filename().string();
}

const std::string write_node = "echo \"$ZKLOCK_LOCK_NODE\" > \"$0\"";

TEST_F(CliTest, RunNamesTheLockNodeInTheNamingAskedFor) {
    const std::vector<std::pair<std::string, std::regex>> cases{
        {"zklock", std::regex("_c_[0-9a-f-]{36}-lock-[0-9]{10}")},
        {"curator", std::regex("_c_[0-9a-f-]{36}-lock-[0-9]{10}")},
        {"kazoo", std::regex("[0-9a-f]{32}__lock__[0-9]{10}")},
    };
    for (const auto& [names, expected] : cases) {
        const auto path = lock_path(names);
        const auto file = cli_.file("node-" + names);
        auto p = cli_.start(plus(run_args(path, {"--names", names}), {"sh", "-c", write_node, file.string()}));
        EXPECT_EQ(exit_code(p), 0) << cli_.output();
        const auto node = node_seen(file);
        EXPECT_TRUE(std::regex_match(node, expected)) << names << ": " << node;
        EXPECT_EQ(queue_length(path), 0u);
    }
}

TEST_F(CliTest, ElectNamesTheElectionNodeInTheNamingAskedFor) {
    const std::vector<std::pair<std::string, std::regex>> cases{
        {"curator", std::regex("_c_[0-9a-f-]{36}-latch-[0-9]{10}")},
        {"kazoo", std::regex("[0-9a-f]{32}__lock__[0-9]{10}")},
    };
    for (const auto& [names, expected] : cases) {
        const auto path = lock_path("election-" + names);
        const auto file = cli_.file("node-" + names);
        auto p = cli_.start({"elect", "-c", server_->connect_string(), "--names", names, "--once", path, "id", "--",
                             "sh", "-c", write_node, file.string()});
        EXPECT_EQ(exit_code(p), 0) << cli_.output();
        const auto node = node_seen(file);
        EXPECT_TRUE(std::regex_match(node, expected)) << names << ": " << node;
        EXPECT_EQ(queue_length(path), 0u);
    }
}

TEST_F(CliTest, NamesOtherThanZklocksWithPermitsOrUnknownNamesExit64WithoutRunningTheCommand) {
    const auto path = lock_path();
    const auto marker = cli_.file("ran");
    auto permits =
        cli_.start(plus(run_args(path, {"--permits", "2", "--names", "kazoo"}), {"touch", marker.string()}), "permits");
    EXPECT_EQ(exit_code(permits), 64);
    EXPECT_NE(cli_.output("permits").find("zklock's names"), std::string::npos) << cli_.output("permits");
    auto unknown = cli_.start(plus(run_args(path, {"--names", "go-zookeeper"}), {"touch", marker.string()}), "unknown");
    EXPECT_EQ(exit_code(unknown), 64);
    EXPECT_FALSE(std::filesystem::exists(marker));
    EXPECT_EQ(queue_length(path), 0u);
}

} // namespace
} // namespace zklock::test::cli
