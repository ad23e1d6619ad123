// What the Locks of one EtcdLockService share: the gRPC channel and stubs,
// the thread every decision runs on, the authentication token, the calls in
// flight, the one keepalive stream and the one watch stream (each multiplexed
// over the Locks: leases by id, watches by the watch ids the service picks),
// and (live_locks) the live locks the service ends with it.
#pragma once

#include "backends/etcd/etcd_steps.hpp"
#include "backends/etcd/etcd_stream.hpp"
#include "backends/key_lease/live_locks.hpp"
#include "support/async_support.hpp"

#include <zklock/etcd/etcd_lock_service.hpp>
#include <zklock/log.hpp>

#include "etcd/etcdserver/etcdserverpb/rpc.grpc.pb.h"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/post.hpp>

#include <grpcpp/channel.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <type_traits>
#include <vector>

namespace zklock::detail {

namespace etcd {

/// What the etcd backend offers and does not.
lock_capabilities capabilities() noexcept;

/// What a watch tells its Lock: the key was deleted, or the watch ended
/// without saying (stream broken, revision compacted): read again.
enum class watch_news { deleted, ended };

/// The calls in flight, counted so that the service's end can wait for them.
struct flights {
    std::mutex mutex;
    std::condition_variable cv;
    int count = 0;
    void begin() {
        std::lock_guard lk(mutex);
        ++count;
    }
    void end() {
        std::lock_guard lk(mutex);
        if (--count == 0) cv.notify_all();
    }
    bool wait_idle(std::chrono::milliseconds timeout) {
        std::unique_lock lk(mutex);
        return cv.wait_for(lk, timeout, [&] { return count == 0; });
    }
};

} // namespace etcd

struct etcd_context;

namespace etcd::rpc {
// The unary calls the backend makes, as etcd_context::call's starters.
#define ZKLOCK_ETCD_RPC(name, stub, method, Req, Resp)                                                             \
    void name(etcd_context& c, grpc::ClientContext* context, const etcdserverpb::Req* req, etcdserverpb::Resp* resp, \
              std::function<void(grpc::Status)> done);
ZKLOCK_ETCD_RPC(txn, kv, Txn, TxnRequest, TxnResponse)
ZKLOCK_ETCD_RPC(delete_range, kv, DeleteRange, DeleteRangeRequest, DeleteRangeResponse)
ZKLOCK_ETCD_RPC(lease_grant, leases, LeaseGrant, LeaseGrantRequest, LeaseGrantResponse)
ZKLOCK_ETCD_RPC(lease_revoke, leases, LeaseRevoke, LeaseRevokeRequest, LeaseRevokeResponse)
#undef ZKLOCK_ETCD_RPC
} // namespace etcd::rpc

struct etcd_context : live_locks, std::enable_shared_from_this<etcd_context> {
    using clock_type = std::chrono::steady_clock;
    using keepalive_stream = etcd::bidi_stream<etcdserverpb::LeaseKeepAliveRequest, etcdserverpb::LeaseKeepAliveResponse>;
    using watch_stream = etcd::bidi_stream<etcdserverpb::WatchRequest, etcdserverpb::WatchResponse>;

    etcd::endpoints where;  // first: validated before the thread starts; tls also when options.tls is enabled
    EtcdOptions options;
    std::shared_ptr<own_context> own;
    boost::asio::any_io_executor executor;
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<etcdserverpb::KV::Stub> kv;
    std::unique_ptr<etcdserverpb::Lease::Stub> leases;
    std::unique_ptr<etcdserverpb::Watch::Stub> watches;
    std::unique_ptr<etcdserverpb::Auth::Stub> auth;
    std::shared_ptr<etcd::flights> in_flight = std::make_shared<etcd::flights>();

    /// Throws zklock::error (errc::invalid_argument) for endpoints or options it refuses.
    etcd_context(const std::string& endpoints_text, EtcdOptions opts);

    bool on_thread() const noexcept { return own->ioc.get_executor().running_in_this_thread(); }
    /// Runs fn on the thread; once the thread has ended (the service is gone)
    /// fn runs here and finds the service closed.
    template <class F> void post(F&& fn) {
        if (own->done) return fn();
        boost::asio::post(own->ioc, std::forward<F>(fn));
    }
    void log(log_level level, const std::string& message) const;

    // --- unary calls (thread only); `done` runs on the thread

    /// Starts one unary call on the context's stubs (a captureless lambda).
    template <class Req, class Resp>
    using starter = void (*)(etcd_context&, grpc::ClientContext*, const Req*, Resp*, std::function<void(grpc::Status)>);

    /// Sends `req` (after authenticating, when a user is set); `done(error,
    /// response)` on the thread. An answer saying the token expired
    /// authenticates again and sends once more.
    ///
    /// What gRPC's callback holds is only the call's own state and weak
    /// references: `done` (which may own a Lock, and through it this context
    /// and the channel) waits in `pending_` on the thread, so that nothing of
    /// zklock's is destroyed on one of gRPC's threads.
    template <class Req, class Resp>
    void call(starter<Req, Resp> start, std::type_identity_t<Req> req,
              std::type_identity_t<std::function<void(std::error_code, Resp&)>> done, bool again = true) {
        with_token([this, start, req = std::move(req), done = std::move(done), again](std::error_code ec) mutable {
            if (ec) {
                Resp none;
                return done(ec, none);
            }
            struct state {
                grpc::ClientContext context;
                Req req;
                Resp resp;
            };
            auto s = std::make_shared<state>();
            s->req = std::move(req);
            s->context.set_deadline(std::chrono::system_clock::now() + options.request_timeout);
            if (!token_.empty()) s->context.AddMetadata("token", token_);
            const auto id = next_call_id_++;
            pending_[id] = [this, s, start, done = std::move(done), again](const grpc::Status& st) mutable {
                const int code = static_cast<int>(st.error_code());
                if (again && !options.user.empty() && etcd::token_expired(code, st.error_message())) {
                    token_.clear();
                    return call<Req, Resp>(start, std::move(s->req), std::move(done), false);
                }
                done(etcd::from_grpc(code, st.error_message(), where.tls), s->resp);
            };
            in_flight->begin();
            start(*this, &s->context, &s->req, &s->resp,
                  [weak = weak_from_this(), own_ = own, flights = in_flight, s, id](grpc::Status st) {
                      boost::asio::post(own_->ioc, [weak, id, st] {
                          if (auto self = weak.lock()) self->answered(id, st);
                      });
                      flights->end();
                  });
        });
    }

    // --- keepalives (thread only)

    /// `listener(sent, ttl)` hears every answer to lease `id`'s keepalives.
    void listen_lease(std::int64_t id, std::function<void(clock_type::time_point, std::int64_t)> listener);
    void forget_lease(std::int64_t id);
    /// Sends one keepalive for lease `id` (opens the stream when none is open).
    void keepalive(std::int64_t id);

    // --- watches (thread only)

    /// Watches the deletion of `key` from `revision` on; `news` hears once.
    /// Returns the watch's id.
    std::int64_t watch_delete(const std::string& key, std::int64_t revision, std::function<void(etcd::watch_news)> news);
    void unwatch(std::int64_t id);

    /// Thread: ends the live locks (each revokes its lease), then marks closed.
    void close();
    /// Not the thread: cancels the streams and waits for their ends.
    void end_streams(std::chrono::milliseconds timeout);

private:
    void with_token(std::function<void(std::error_code)> then);
    /// Thread: the call `id` was answered with `st`.
    void answered(std::uint64_t id, const grpc::Status& st) {
        auto node = pending_.extract(id);
        if (!node.empty()) node.mapped()(st);
    }
    void open_keepalives();
    void open_watches();
    void keepalive_answer(const etcdserverpb::LeaseKeepAliveResponse& r);
    void watch_answer(const etcdserverpb::WatchResponse& r);

    // the thread only
    std::uint64_t next_call_id_ = 1;
    std::map<std::uint64_t, std::function<void(const grpc::Status&)>> pending_;  // the calls in flight
    std::string token_;
    bool authenticating_ = false;
    std::vector<std::function<void(std::error_code)>> token_waiters_;
    std::shared_ptr<keepalive_stream> keepalive_stream_;
    std::map<std::int64_t, std::deque<clock_type::time_point>> keepalives_sent_;
    std::map<std::int64_t, std::function<void(clock_type::time_point, std::int64_t)>> lease_listeners_;
    std::shared_ptr<watch_stream> watch_stream_;
    std::int64_t next_watch_id_ = 1;
    std::map<std::int64_t, std::function<void(etcd::watch_news)>> watchers_;
    std::mutex streams_mutex_;  // the two stream pointers, for end_streams()
};

} // namespace zklock::detail
