#include "backend_env.hpp"

#include "../support.hpp"

#include <zklock/mutex.hpp>
#include <zklock/testing/faults.hpp>
#include <zklock/testing/backend_servers.hpp>
#include <zklock/zookeeper_lock_service.hpp>

#include <chrono>
#include <string>
#include <system_error>
#include <vector>

namespace zklock::conformance {
namespace {

constexpr const char* root = "/zklock-conformance";

class ZooKeeperService : public ZooKeeperLockService {
public:
    explicit ZooKeeperService(std::unique_ptr<Session> s) : ZooKeeperLockService(*s, root), session_(std::move(s)) {}
    Session& session() { return *session_; }

private:
    std::unique_ptr<Session> session_;  // outlives nothing it lends: locks keep the session state alive
};

class ZooKeeperEnv : public BackendEnv {
public:
    ZooKeeperEnv() : servers_(options()), server_(servers_.zookeeper()) {}

    std::unique_ptr<LockService> client() override {
        SessionOptions o;
        o.connect = server_.connect_string();
        o.session_timeout = std::chrono::milliseconds(2000);
        auto s = std::make_unique<Session>(o);
        s->connect();
        return std::make_unique<ZooKeeperService>(std::move(s));
    }

    void crash(LockService& service) override {
        testing::expire_session(static_cast<ZooKeeperService&>(service).session());
    }

    void steal(const std::string& name) override {
        auto admin = client();
        auto& s = static_cast<ZooKeeperService&>(*admin).session();
        const auto queue = list_contenders(s, path(name));
        if (!queue.empty()) testing::delete_node(s, path(name) + "/" + queue.front().node);
    }

    std::size_t leftovers(const std::string& name) override {
        auto admin = client();
        return list_contenders(static_cast<ZooKeeperService&>(*admin).session(), path(name)).size();
    }

    bool waits(LockService& client, Lock&, const std::string& name, std::size_t waiters, std::string& how) override {
        how = "the queue holds the holder and " + std::to_string(waiters) +
              " waiter(s), and the waiter's session watches the node just ahead of its own (wchp)";
        const auto id = static_cast<ZooKeeperService&>(client).session().session_id();
        auto admin = this->client();
        auto& observer = static_cast<ZooKeeperService&>(*admin).session();
        return test::wait_until(
            [&] {
                std::error_code ec;
                const auto queue = list_contenders(observer, path(name), ec);
                if (ec || queue.size() != waiters + 1) return false;
                for (std::size_t i = 1; i < queue.size(); ++i)
                    if (queue[i].owner_session == id) {
                        const auto ahead = path(name) + "/" + queue[i - 1].node;
                        return test::watches(server_.four_letter_word("wchp"), ahead, id);
                    }
                return false;
            },
            std::chrono::seconds(20));
    }

private:
    static testing::BackendServersOptions options() {
        testing::BackendServersOptions o;
        o.zookeeper.tick_time_ms = 100;
        // wchp shows which sessions watch which node (waits()).
        o.zookeeper.extra_config = {"4lw.commands.whitelist=ruok,srvr,mntr,stat,cons,wchp"};
        return o;
    }
    static std::string path(const std::string& name) { return std::string(root) + "/" + name; }

    testing::BackendServers servers_;
    testing::ZooKeeperServer& server_;
};

const Registration zookeeper_registered("zookeeper", [] { return std::make_unique<ZooKeeperEnv>(); });

} // namespace
} // namespace zklock::conformance
