// The fixture of the Curator interop tests (test_interop_curator.cpp,
// test_interop_curator_names.cpp): a ZooKeeper server and one Curator peer
// process on it, or a skip that says why the peer cannot run here.
#pragma once

#include "curator_peer.hpp"
#include "grant_support.hpp"
#include "support.hpp"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace zklock::test {

class CuratorInteropTest : public ServerTest {
protected:
    void SetUp() override {
        if (const auto why = curator_peer_unavailable()) GTEST_SKIP() << "Curator interop: " << *why;
        ServerTest::SetUp();
    }

    /// The Curator peer on `path`, once connected.
    std::unique_ptr<CuratorPeer> peer(const std::string& path) {
        auto p = std::make_unique<CuratorPeer>(dir_.path(), server_->connect_string(), path);
        EXPECT_TRUE(p->wait_for("ready", "peer"));
        return p;
    }

    /// Waits until the queue at `path` holds `n` contenders; returns who made each,
    /// in order: the name given in `who` for a zklock session, "curator" otherwise.
    std::vector<std::string> wait_for_queue(Session& observer, const std::string& path, std::size_t n,
                                            const std::map<std::int64_t, std::string>& who = {}) {
        std::vector<std::string> out;
        for (const auto& c : wait_for_contenders(observer, path, n, 60s)) {
            const auto it = who.find(c.owner_session);
            out.push_back(it == who.end() ? "curator" : it->second);
        }
        return out;
    }

    testing::TempDir dir_{"zklock-curator-"};
};

} // namespace zklock::test
