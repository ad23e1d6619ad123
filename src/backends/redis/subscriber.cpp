#include "backends/redis/subscriber.hpp"

#include <boost/asio/post.hpp>

#include <chrono>
#include <vector>

namespace zklock::detail::redis {
namespace asio = boost::asio;

namespace {
constexpr std::chrono::milliseconds resubscribe_delay{250};
} // namespace

subscriber::subscriber(strand_type strand, std::shared_ptr<connection> conn) : conn_(std::move(conn)), timer_(strand) {}

void subscriber::start() {
    conn_->set_push_handler(
        [weak = weak_from_this()](const std::string& kind, const std::string& channel, const std::string& payload) {
            if (auto self = weak.lock()) self->on_push(kind, channel, payload);
        });
    conn_->set_disconnect_handler([weak = weak_from_this()] {
        if (auto self = weak.lock()) self->on_disconnect();
    });
}

void subscriber::add(const std::string& channel, std::uint64_t id, waker wake) {
    auto& e = channels_[channel];
    e.wakers[id] = std::move(wake);
    switch (e.st) {
    case state::none: subscribe(channel, e); break;
    case state::subscribed: asio::post(timer_.get_executor(), [w = e.wakers[id]] { w(nullptr); }); break;
    case state::subscribing:
    case state::unsubscribing: break;  // the reply brings the wake / the re-subscribe
    }
}

void subscriber::remove(const std::string& channel, std::uint64_t id) {
    const auto it = channels_.find(channel);
    if (it == channels_.end()) return;
    it->second.wakers.erase(id);
    if (!it->second.wakers.empty()) return;
    if (it->second.st == state::subscribed) {
        if (conn_->connected() && conn_->subscribe_command("UNSUBSCRIBE", channel)) it->second.st = state::unsubscribing;
        else channels_.erase(it);
    } else if (it->second.st == state::none) {
        channels_.erase(it);
    }
}

void subscriber::close() {
    closed_ = true;
    timer_.cancel();
    conn_->close(false);
}

void subscriber::subscribe(const std::string& channel, entry& e) {
    if (!closed_ && conn_->subscribe_command("SUBSCRIBE", channel)) {
        e.st = state::subscribing;
    } else {
        e.st = state::none;
        schedule_resubscribe();
    }
}

void subscriber::wake_all(const entry& e, const std::string* released_token) {
    std::vector<waker> wakers;
    for (const auto& [id, w] : e.wakers) wakers.push_back(w);
    for (auto& w : wakers) w(released_token);
}

void subscriber::on_push(const std::string& kind, const std::string& channel, const std::string& payload) {
    const auto it = channels_.find(channel);
    if (it == channels_.end()) return;
    entry& e = it->second;
    if (kind == "message") {
        wake_all(e, &payload);
    } else if (kind == "subscribe") {
        e.st = state::subscribed;
        if (e.wakers.empty()) {
            if (conn_->subscribe_command("UNSUBSCRIBE", channel)) e.st = state::unsubscribing;
        } else {
            wake_all(e, nullptr);
        }
    } else if (kind == "unsubscribe") {
        if (e.wakers.empty()) channels_.erase(it);
        else subscribe(channel, e);
    }
}

void subscriber::on_disconnect() {
    for (auto it = channels_.begin(); it != channels_.end();) {
        if (it->second.wakers.empty()) {
            it = channels_.erase(it);
        } else {
            it->second.st = state::none;
            ++it;
        }
    }
    if (!channels_.empty()) schedule_resubscribe();  // waiters fall back on their backoff meanwhile
}

void subscriber::schedule_resubscribe() {
    if (closed_ || resubscribe_armed_) return;
    resubscribe_armed_ = true;
    timer_.expires_after(resubscribe_delay);
    timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
        self->resubscribe_armed_ = false;
        if (ec || self->closed_) return;
        for (auto& [channel, e] : self->channels_)
            if (e.st == state::none && !e.wakers.empty()) self->subscribe(channel, e);
    });
}

} // namespace zklock::detail::redis
