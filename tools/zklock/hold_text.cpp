#include "hold_text.hpp"

#include "status_view.hpp"
#include "terminal_text.hpp"

#include <zklock/error.hpp>
#include <zklock/queue_view.hpp>

namespace zklock::cli {
namespace {

// The OWNER zklock status shows: the node's data (without a lock set's list
// of paths), or the node when there is none.
std::string owner_of(const contender& c) {
    const auto data = parse_contender_data(c.data).data;
    return data.empty() ? "node " + shortened(c.node) + ", no owner data" : shortened(data);
}

} // namespace

std::string busy_text(const std::string& busy, const queue_listing& listing, std::size_t permits, bool shared) {
    std::vector<std::string> owners;
    if (shared) {
        for (const auto& c : listing.contenders)
            if (!c.shared) {
                owners.push_back(owner_of(c));
                break;
            }
    } else {
        const auto holds = holders(listing, permits);
        for (std::size_t i = 0; i < holds.size(); ++i)
            if (holds[i]) owners.push_back(owner_of(listing.contenders[i]));
    }
    if (owners.empty()) return busy;
    std::string all;
    for (const auto& o : owners) all += (all.empty() ? "" : ", ") + o;
    const char* label = shared ? "writer" : owners.size() == 1 ? "holder" : "holders";
    return busy + " (" + label + ": " + all + ")";
}

std::string permits_mismatch_text(const std::string& path, std::optional<std::size_t> stored, std::size_t asked) {
    const auto same = " (every participant must give the same --permits)";
    if (!stored)
        return path + " is a semaphore with another number of permits than " + std::to_string(asked) + same;
    return path + " is a semaphore of " + counted(static_cast<long long>(*stored), "permit") + ", not " +
           std::to_string(asked) + same;
}

std::string loss_reason(const std::error_code& ec, const std::string& node) {
    if (ec == errc::session_expired) return "the ZooKeeper session expired";
    if (ec == errc::node_deleted) return "another client deleted the " + node;
    if (ec == errc::connection_suspended) return "the connection was lost for longer than the session timeout";
    if (ec == errc::revoked) return "a revocation request asked the holder to let go (--revocable)";
    return ec.message();
}

} // namespace zklock::cli
