#include "safety/naive.hpp"

#include "safety/plan.hpp"

#include <zklock/testing/redis_server.hpp>

#include <charconv>
#include <stdexcept>
#include <thread>

namespace zklock::cli::safety {
namespace {

std::int64_t unix_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::optional<std::int64_t> as_number(const std::optional<std::string>& v) {
    if (!v) return std::nullopt;
    std::int64_t n = 0;
    const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
    if (ec != std::errc{} || end != v->data() + v->size()) return std::nullopt;
    return n;
}

}  // namespace

std::optional<std::string> redis_value(std::string_view reply) {
    const auto bad = [&]() -> std::runtime_error {
        return std::runtime_error("unexpected Redis reply: " + std::string(reply.substr(0, 80)));
    };
    if (reply.size() < 3 || !reply.ends_with("\r\n")) throw bad();
    const auto first_end = reply.find("\r\n");
    const auto head = reply.substr(1, first_end - 1);
    if (reply[0] == ':' || reply[0] == '+') return std::string(head);
    if (reply[0] != '$') throw bad();
    if (head == "-1") return std::nullopt;
    std::size_t length = 0;
    const auto [end, ec] = std::from_chars(head.data(), head.data() + head.size(), length);
    if (ec != std::errc{} || end != head.data() + head.size() || reply.size() != first_end + 2 + length + 2) throw bad();
    return std::string(reply.substr(first_end + 2, length));
}

naive_lock::naive_lock(std::string_view recipe, std::uint16_t port, std::string key, std::chrono::milliseconds ttl)
    : getset_(recipe == naive_setnx_getset), port_(port), key_(std::move(key)), ttl_(ttl) {}

std::string naive_lock::command(const std::vector<std::string>& args) const {
    return testing::redis_command(port_, args, ttl_);
}

void naive_lock::acquire(const std::function<void()>& between) {
    const auto poll = std::max(std::chrono::milliseconds(5), ttl_ / 20);
    while (true) {
        try {
            if (!getset_) {
                const auto started = std::chrono::steady_clock::now();
                if (redis_value(command({"SETNX", key_, "held"})) == "1") {
                    between();
                    command({"PEXPIRE", key_, std::to_string(ttl_.count())});
                    lease_end_ = started + ttl_;
                    return;
                }
            } else {
                const auto now = unix_ms();
                const auto expires = now + ttl_.count() + 1;
                if (redis_value(command({"SETNX", key_, std::to_string(expires)})) == "1") {
                    expires_ms_ = expires;
                    return;
                }
                const auto current = as_number(redis_value(command({"GET", key_})));
                if (current && *current < now) {
                    const auto old = as_number(redis_value(command({"GETSET", key_, std::to_string(expires)})));
                    // Still the expired time it read (or the key vanished meanwhile): the lock is its own.
                    if (!old || *old == *current) {
                        expires_ms_ = expires;
                        return;
                    }
                }
            }
        } catch (const std::exception&) {
            // Unreachable or refused: a user's loop tries again, so does this one.
        }
        std::this_thread::sleep_for(poll);
    }
}

std::int64_t naive_lock::take_token() {
    const auto v = as_number(redis_value(command({"INCR", key_ + ":token"})));
    if (!v) throw std::runtime_error("INCR did not answer a number");
    return *v;
}

bool naive_lock::lease_valid() const {
    return getset_ ? unix_ms() < expires_ms_ : std::chrono::steady_clock::now() < lease_end_;
}

std::string naive_lock::release() {
    if (getset_ && !lease_valid()) return "lost: its expiry time had passed (not deleted)";
    try {
        command({"DEL", key_});
        return "";
    } catch (const std::exception& e) {
        return std::string("error: DEL failed: ") + e.what();
    }
}

}  // namespace zklock::cli::safety
