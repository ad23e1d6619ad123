// One Redis server's pub/sub connection, shared by every lock of a service:
// the waiters' wake-ups on their locks' release channels.
#pragma once

#include "backends/redis/connection.hpp"

#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace zklock::detail::redis {

/// One Redis server's subscriber connection, shared by every lock of a service:
/// one SUBSCRIBE per channel however many waiters, UNSUBSCRIBE when the last
/// one leaves. A waiter's wake function runs with the released token on every
/// message, and with nullptr once its channel's subscription is confirmed (the
/// acquire retries then, so a release between the failed attempt and the
/// subscription is not missed). After a lost connection it subscribes again
/// (after a short delay); the waiters fall back on their backoff meanwhile.
/// Strand only.
class subscriber : public std::enable_shared_from_this<subscriber> {
public:
    using waker = std::function<void(const std::string* released_token)>;

    subscriber(strand_type strand, std::shared_ptr<connection> conn);

    /// Takes the connection's pushes and disconnects (once shared).
    void start();
    void add(const std::string& channel, std::uint64_t id, waker wake);
    void remove(const std::string& channel, std::uint64_t id);
    void close();

private:
    enum class state { none, subscribing, subscribed, unsubscribing };
    struct entry {
        state st = state::none;
        std::map<std::uint64_t, waker> wakers;
    };

    void subscribe(const std::string& channel, entry& e);
    static void wake_all(const entry& e, const std::string* released_token);
    void on_push(const std::string& kind, const std::string& channel, const std::string& payload);
    void on_disconnect();
    void schedule_resubscribe();

    std::shared_ptr<connection> conn_;
    boost::asio::steady_timer timer_;
    std::map<std::string, entry> channels_;
    bool closed_ = false;
    bool resubscribe_armed_ = false;
};

} // namespace zklock::detail::redis
