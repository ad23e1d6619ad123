// The fixture of the kazoo interop tests (test_interop_kazoo.cpp,
// test_interop_kazoo_names.cpp): a ZooKeeper server, python3-kazoo checked, and
// kazoo clients started as processes on it.
#pragma once

#include "kazoo_peer.hpp"
#include "support.hpp"

#include <zklock/testing/process.hpp>

#include <memory>
#include <string>
#include <vector>

namespace zklock::test {

// Sessions of 4 s (the server's most): the machine may be busy with other tests.
class KazooInteropTest : public ServerTest {
protected:
    void SetUp() override {
        ServerTest::SetUp();
        ASSERT_EQ(::access(python, X_OK), 0) << python << " is missing: run scripts/setup";
        testing::ChildProcess probe({python, "-c", "import kazoo.recipe.lock"});
        const auto status = probe.wait_exit(60s);
        ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
            << "python3-kazoo is missing: run scripts/setup";
    }

    std::unique_ptr<KazooPeer> peer(const std::string& path, const std::string& name, std::vector<std::string> args) {
        return std::make_unique<KazooPeer>(dir_.path(), server_->connect_string(), path, name, std::move(args));
    }

    /// Waits until the queue at `path` holds `n` contenders; returns their dialects in order.
    std::vector<std::string> wait_for_queue(Session& s, const std::string& path, std::size_t n) {
        std::vector<std::string> out;
        for (const auto& c : wait_for_contenders(s, path, n, 60s)) out.push_back(c.dialect);
        return out;
    }

    testing::TempDir dir_{"zklock-interop-"};
};

} // namespace zklock::test
