#include "backends/memcached/memcached_client.hpp"

#include <zklock/error.hpp>

#include <libmemcached/memcached.h>

#include <cerrno>

namespace zklock::detail::memcached {

namespace {

/// Why a command failed, as zklock says it.
std::error_code failure_of(memcached_return_t rc, int err) {
    if (err == ECONNREFUSED) return make_error_code(std::errc::connection_refused);
    switch (rc) {
    case MEMCACHED_CONNECTION_FAILURE:
    case MEMCACHED_SERVER_MARKED_DEAD:
    case MEMCACHED_SERVER_TEMPORARILY_DISABLED:
        return err == 0 ? make_error_code(std::errc::connection_refused) : make_error_code(errc::connection_loss);
    case MEMCACHED_WRITE_FAILURE:
    case MEMCACHED_READ_FAILURE:
    case MEMCACHED_UNKNOWN_READ_FAILURE:
    case MEMCACHED_TIMEOUT:
    case MEMCACHED_ERRNO:
        return make_error_code(errc::connection_loss);
    case MEMCACHED_HOST_LOOKUP_FAILURE: return make_error_code(std::errc::host_unreachable);
    case MEMCACHED_AUTH_FAILURE: return make_error_code(errc::auth_failed);
    default: return make_error_code(std::errc::protocol_error);
    }
}

} // namespace

client::client(address where, std::chrono::milliseconds connect_timeout, std::chrono::milliseconds command_timeout)
    : where_(std::move(where)), connect_timeout_(connect_timeout), command_timeout_(command_timeout) {}

client::~client() { close(); }

void client::close() noexcept {
    if (mc_) memcached_free(mc_);
    mc_ = nullptr;
}

std::string client::endpoint() const {
    return (where_.host.find(':') != std::string::npos ? "[" + where_.host + "]" : where_.host) + ":" +
           std::to_string(where_.port);
}

memcached_st* client::handle() {
    if (mc_) return mc_;
    mc_ = memcached_create(nullptr);
    if (!mc_) return nullptr;
    const auto set = [this](memcached_behavior_t b, std::uint64_t v) { memcached_behavior_set(mc_, b, v); };
    set(MEMCACHED_BEHAVIOR_SUPPORT_CAS, 1);
    set(MEMCACHED_BEHAVIOR_TCP_NODELAY, 1);
    set(MEMCACHED_BEHAVIOR_NO_BLOCK, 1);  // connects are non-blocking: connect_timeout applies
    set(MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT, static_cast<std::uint64_t>(connect_timeout_.count()));
    set(MEMCACHED_BEHAVIOR_POLL_TIMEOUT, static_cast<std::uint64_t>(command_timeout_.count()));
    set(MEMCACHED_BEHAVIOR_RCV_TIMEOUT, static_cast<std::uint64_t>(command_timeout_.count()) * 1000);
    set(MEMCACHED_BEHAVIOR_SND_TIMEOUT, static_cast<std::uint64_t>(command_timeout_.count()) * 1000);
    set(MEMCACHED_BEHAVIOR_RETRY_TIMEOUT, 0);
    if (memcached_server_add(mc_, where_.host.c_str(), static_cast<in_port_t>(where_.port)) != MEMCACHED_SUCCESS) {
        close();
        return nullptr;
    }
    return mc_;
}

outcome client::finish(int code) {
    const auto rc = static_cast<memcached_return_t>(code);
    outcome o;
    switch (rc) {
    case MEMCACHED_SUCCESS:
    case MEMCACHED_STORED:
    case MEMCACHED_DELETED:
    case MEMCACHED_END: o.a = answer::done; return o;
    case MEMCACHED_NOTSTORED:
    case MEMCACHED_DATA_EXISTS: o.a = answer::refused; return o;
    case MEMCACHED_NOTFOUND: o.a = answer::not_found; return o;
    default: break;
    }
    o.a = answer::failed;
    o.error = failure_of(rc, mc_ ? memcached_last_error_errno(mc_) : 0);
    close();  // a fresh handle next time: libmemcached would keep refusing a failed server
    return o;
}

outcome client::add(const std::string& key, const std::string& value, std::uint32_t ttl_s) {
    auto* mc = handle();
    if (!mc) return finish(MEMCACHED_MEMORY_ALLOCATION_FAILURE);
    return finish(memcached_add(mc, key.data(), key.size(), value.data(), value.size(), static_cast<time_t>(ttl_s), 0));
}

outcome client::cas(const std::string& key, const std::string& value, std::uint32_t ttl_s, std::uint64_t unique) {
    auto* mc = handle();
    if (!mc) return finish(MEMCACHED_MEMORY_ALLOCATION_FAILURE);
    return finish(
        memcached_cas(mc, key.data(), key.size(), value.data(), value.size(), static_cast<time_t>(ttl_s), 0, unique));
}

outcome client::del(const std::string& key) {
    auto* mc = handle();
    if (!mc) return finish(MEMCACHED_MEMORY_ALLOCATION_FAILURE);
    return finish(memcached_delete(mc, key.data(), key.size(), 0));
}

outcome client::gets(const std::string& key) {
    auto* mc = handle();
    if (!mc) return finish(MEMCACHED_MEMORY_ALLOCATION_FAILURE);
    const char* keys[] = {key.data()};
    const std::size_t lengths[] = {key.size()};
    auto rc = memcached_mget(mc, keys, lengths, 1);
    if (rc != MEMCACHED_SUCCESS) return finish(rc);
    outcome found;
    found.a = answer::not_found;
    memcached_result_st* r = nullptr;
    while ((r = memcached_fetch_result(mc, nullptr, &rc)) != nullptr) {
        found.a = answer::done;
        found.value.assign(memcached_result_value(r), memcached_result_length(r));
        found.cas = memcached_result_cas(r);
        memcached_result_free(r);
    }
    if (rc != MEMCACHED_END && rc != MEMCACHED_NOTFOUND && rc != MEMCACHED_SUCCESS) return finish(rc);
    return found;
}

} // namespace zklock::detail::memcached
