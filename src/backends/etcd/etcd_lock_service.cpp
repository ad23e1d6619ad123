#include <zklock/etcd/etcd_lock_service.hpp>

#include "backends/etcd/etcd_backend.hpp"
#include "backends/etcd/etcd_context.hpp"
#include "backends/etcd/etcd_steps.hpp"

#include <zklock/error.hpp>

#include <boost/asio/post.hpp>

#include <future>

namespace zklock {
namespace asio = boost::asio;

EtcdLockService::EtcdLockService(const std::string& endpoints, EtcdOptions options)
    : context_(std::make_shared<detail::etcd_context>(endpoints, std::move(options))) {}

EtcdLockService::~EtcdLockService() {
    try {
        auto& ctx = *context_;
        // The releases the Locks' destructors queued run first, then the live
        // locks end (each revokes its lease); then the calls in flight finish
        // (their answers may send more: a revoke after a grant), then the streams.
        std::promise<void> closed;
        asio::post(ctx.own->ioc, [&] {
            ctx.close();
            closed.set_value();
        });
        closed.get_future().wait_for(ctx.options.request_timeout);
        const auto budget = ctx.options.request_timeout + std::chrono::seconds(1);
        const auto end = std::chrono::steady_clock::now() + budget;
        while (std::chrono::steady_clock::now() < end) {
            if (!ctx.in_flight->wait_idle(budget)) break;
            std::promise<void> drained;  // the answers' handlers have run
            asio::post(ctx.own->ioc, [&] { drained.set_value(); });
            drained.get_future().wait_for(budget);
            std::lock_guard lk(ctx.in_flight->mutex);
            if (ctx.in_flight->count == 0) break;
        }
        ctx.end_streams(std::chrono::seconds(2));
        ctx.own->stop_and_join();
    } catch (...) {
    }
}

Lock EtcdLockService::make_lock(const std::string& name) {
    std::string reason;
    if (const auto ec = validate_lock_name(name, &reason)) throw error(ec, "zklock: " + reason + ": '" + name + "'");
    auto backend = std::make_shared<detail::etcd::etcd_backend>(context_, prefix_for(context_->options.key_prefix, name));
    backend->register_closer();
    return Lock(std::move(backend));
}

lock_capabilities EtcdLockService::capabilities() const noexcept { return detail::etcd::capabilities(); }

std::string EtcdLockService::prefix_for(std::string_view key_prefix, std::string_view name) {
    return detail::etcd::queue_prefix(key_prefix, name);
}

} // namespace zklock
