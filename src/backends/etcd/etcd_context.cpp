#include "backends/etcd/etcd_context.hpp"

#include "support/log_emit.hpp"

#include <zklock/error.hpp>

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_certificate_verifier.h>
#include <grpcpp/security/tls_credentials_options.h>
#include <grpcpp/support/channel_arguments.h>

#include <zklock/tls_options.hpp>

#include <cerrno>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace zklock::detail {

namespace {

etcd::endpoints parse(const std::string& text, const EtcdOptions& o) {
    std::error_code ec;
    std::string reason;
    auto e = etcd::parse_endpoints(text, ec, &reason);
    if (ec) throw error(ec, "zklock::EtcdLockService: " + reason);
    if (e.plain && o.tls.enabled())
        throw error(make_error_code(errc::invalid_argument),
                    "zklock::EtcdLockService: http:// endpoints with TLS options (give https:// or host:port)");
    e.tls = e.tls || o.tls.enabled();  // TLS options alone select TLS
    return e;
}

const EtcdOptions& validated(const EtcdOptions& o) {
    const auto refuse = [](const std::string& why) {
        throw error(make_error_code(errc::invalid_argument), "zklock::EtcdLockService: " + why);
    };
    if (o.ttl < std::chrono::seconds(2)) refuse("ttl under 2 s (etcd's leases count whole seconds)");
    if (o.user.empty() && !o.password.empty()) refuse("a password without a user");
    if (o.request_timeout <= std::chrono::milliseconds::zero()) refuse("request_timeout not positive");
    std::string reason;
    if (validate_tls(o.tls, &reason)) refuse(reason);
    return o;
}

// The whole file, read through a close-on-exec descriptor (validate_tls
// checked it before; it may have changed since).
std::string read_pem(const std::string& path, const char* what) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    std::string text;
    if (fd >= 0) {
        char buf[8192];
        for (;;) {
            const ssize_t n = ::read(fd, buf, sizeof buf);
            if (n > 0) text.append(buf, static_cast<std::size_t>(n));
            else if (n == 0 || errno != EINTR) break;
        }
        ::close(fd);
    }
    if (fd < 0 || text.empty())
        throw error(make_error_code(errc::invalid_argument),
                    std::string("zklock::EtcdLockService: cannot read the TLS ") + what + " " + path);
    return text;
}

// The endpoints' credentials. The default (chain and host checked) is
// grpc::SslCredentials; without the host check, or checking nothing, gRPC's
// TlsCredentials with a verifier that adds no check of its own.
std::shared_ptr<grpc::ChannelCredentials> credentials(const etcd::endpoints& where, const EtcdOptions& o) {
    if (!where.tls) return grpc::InsecureChannelCredentials();
    const auto& t = o.tls;
    std::string ca = t.ca_file.empty() || t.insecure ? std::string() : read_pem(t.ca_file, "CA file");
    std::string cert, key;
    if (!t.cert_file.empty()) {
        cert = read_pem(t.cert_file, "certificate file");
        key = read_pem(t.key_file, "key file");
    }
    if (t.verify_host && !t.insecure) {
        grpc::SslCredentialsOptions ssl;
        ssl.pem_root_certs = std::move(ca);
        ssl.pem_cert_chain = std::move(cert);
        ssl.pem_private_key = std::move(key);
        return grpc::SslCredentials(ssl);
    }
    namespace gx = grpc::experimental;
    std::vector<gx::IdentityKeyCertPair> identity;
    if (!cert.empty()) identity.push_back({std::move(key), std::move(cert)});
    const bool roots = !ca.empty();
    gx::TlsChannelCredentialsOptions tls;
    if (roots || !identity.empty())
        tls.set_certificate_provider(std::make_shared<gx::StaticDataCertificateProvider>(std::move(ca), identity));
    if (roots) tls.watch_root_certs();
    if (!identity.empty()) tls.watch_identity_key_cert_pairs();
    tls.set_verify_server_certs(!t.insecure);
    tls.set_certificate_verifier(std::make_shared<gx::NoOpCertificateVerifier>());
    tls.set_check_call_host(false);
    return grpc::experimental::TlsCredentials(tls);
}

std::shared_ptr<grpc::Channel> make_channel(const etcd::endpoints& where, const EtcdOptions& o) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
    // One connection attempt may take up to connect_timeout (gRPC's minimum connect timeout).
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, static_cast<int>(o.connect_timeout.count()));
    return grpc::CreateCustomChannel(where.target, credentials(where, o), args);
}

// gRPC 1.51 runs every channel's callback API on one completion queue of the
// process with threads of its own, made at the first callback call of a
// channel and shut down when the last channel that made one is destroyed. A
// channel's last reference may go on one of those threads (every ClientContext
// holds one), which then joins itself and frees the queue it runs on: a
// double free, seen under ASan when a test's services end. One such channel
// that is never destroyed keeps the queue for the life of the process. Its one
// call goes to a Unix socket that does not exist and fails at once.
// (Held by namespace-scope pointers, so that LeakSanitizer sees them reachable.)
std::shared_ptr<grpc::Channel>* keeper_channel = nullptr;
etcdserverpb::KV::Stub* keeper_stub = nullptr;

void keep_callback_queue() {
    static const bool kept = [] {
        keeper_channel = new std::shared_ptr<grpc::Channel>(
            grpc::CreateChannel("unix:/nonexistent/zklock-etcd-keeper", grpc::InsecureChannelCredentials()));
        keeper_stub = etcdserverpb::KV::NewStub(*keeper_channel).release();
        auto* stub = keeper_stub;
        struct state {
            grpc::ClientContext context;
            etcdserverpb::RangeRequest req;
            etcdserverpb::RangeResponse resp;
        };
        auto* s = new state;
        s->context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(100));
        stub->async()->Range(&s->context, &s->req, &s->resp, [s](grpc::Status) { delete s; });
        return true;
    }();
    (void)kept;
}

} // namespace

namespace etcd {

lock_capabilities capabilities() noexcept {
    lock_capabilities c;
    c.backend = "etcd";
    c.fair_fifo = true;
    c.dead_holder = dead_holder_release::ttl_expiry;
    c.fencing_monotonic_across_failover = true;
    c.server_wakes_waiters = true;
    c.wakes_one_waiter = true;
    c.reports_loss = true;
    c.limits = "a dead holder blocks others until its lease runs out (ttl), and a holder paused past its ttl can "
               "let two clients hold the lock: its writes need the fencing token (the key's create revision) checked";
    return c;
}

} // namespace etcd

etcd_context::etcd_context(const std::string& endpoints_text, EtcdOptions opts)
    : where(parse(endpoints_text, opts)), options(validated(opts)), own((keep_callback_queue(), own_context::start())),
      executor(options.executor ? options.executor : boost::asio::any_io_executor(own->ioc.get_executor())),
      channel(make_channel(where, options)), kv(etcdserverpb::KV::NewStub(channel)),
      leases(etcdserverpb::Lease::NewStub(channel)), watches(etcdserverpb::Watch::NewStub(channel)),
      auth(etcdserverpb::Auth::NewStub(channel)) {}

void etcd_context::log(log_level level, const std::string& message) const { emit(options.log, level, "etcd", message); }

void etcd_context::with_token(std::function<void(std::error_code)> then) {
    if (options.user.empty() || !token_.empty()) return then({});
    token_waiters_.push_back(std::move(then));
    if (authenticating_) return;
    authenticating_ = true;
    etcdserverpb::AuthenticateRequest req;
    req.set_name(options.user);
    req.set_password(options.password);
    struct state {
        grpc::ClientContext context;
        etcdserverpb::AuthenticateRequest req;
        etcdserverpb::AuthenticateResponse resp;
    };
    auto s = std::make_shared<state>();
    s->req = std::move(req);
    s->context.set_deadline(std::chrono::system_clock::now() + options.request_timeout);
    in_flight->begin();
    auth->async()->Authenticate(&s->context, &s->req, &s->resp,
                                [weak = weak_from_this(), own_ = own, flights = in_flight, s](grpc::Status st) {
                                    boost::asio::post(own_->ioc, [weak, s, st] {
                                        auto self = weak.lock();
                                        if (!self) return;
                                        self->authenticating_ = false;
                                        auto ec = etcd::from_grpc(static_cast<int>(st.error_code()), st.error_message(),
                                                                  self->where.tls);
                                        if (!ec) self->token_ = s->resp.token();
                                        else if (st.error_code() == grpc::StatusCode::INVALID_ARGUMENT ||
                                                 st.error_code() == grpc::StatusCode::FAILED_PRECONDITION)
                                            ec = make_error_code(errc::auth_failed);  // wrong user or password, auth off
                                        if (ec) self->log(log_level::warn, "authenticating as " + self->options.user +
                                                                               " failed: " + st.error_message());
                                        auto waiters = std::exchange(self->token_waiters_, {});
                                        for (auto& w : waiters) w(ec);
                                    });
                                    flights->end();
                                });
}

namespace etcd::rpc {
#define ZKLOCK_ETCD_RPC(name, stub, method, Req, Resp)                                                             \
    void name(etcd_context& c, grpc::ClientContext* context, const etcdserverpb::Req* req, etcdserverpb::Resp* resp, \
              std::function<void(grpc::Status)> done) {                                                            \
        c.stub->async()->method(context, req, resp, std::move(done));                                             \
    }
ZKLOCK_ETCD_RPC(txn, kv, Txn, TxnRequest, TxnResponse)
ZKLOCK_ETCD_RPC(delete_range, kv, DeleteRange, DeleteRangeRequest, DeleteRangeResponse)
ZKLOCK_ETCD_RPC(lease_grant, leases, LeaseGrant, LeaseGrantRequest, LeaseGrantResponse)
ZKLOCK_ETCD_RPC(lease_revoke, leases, LeaseRevoke, LeaseRevokeRequest, LeaseRevokeResponse)
#undef ZKLOCK_ETCD_RPC
} // namespace etcd::rpc

// --- keepalives

void etcd_context::listen_lease(std::int64_t id, std::function<void(clock_type::time_point, std::int64_t)> listener) {
    lease_listeners_[id] = std::move(listener);
}

void etcd_context::forget_lease(std::int64_t id) {
    lease_listeners_.erase(id);
    keepalives_sent_.erase(id);
}

void etcd_context::open_keepalives() {
    std::lock_guard lk(streams_mutex_);
    keepalive_stream_ = keepalive_stream::open(
        [this](grpc::ClientContext* c, keepalive_stream::reactor_base* r) { leases->async()->LeaseKeepAlive(c, r); },
        token_,
        [weak = weak_from_this(), own_ = own](etcdserverpb::LeaseKeepAliveResponse& r) {
            boost::asio::post(own_->ioc, [weak, r] {
                if (auto self = weak.lock()) self->keepalive_answer(r);
            });
        },
        [weak = weak_from_this(), own_ = own](const grpc::Status& st) {
            boost::asio::post(own_->ioc, [weak, st] {
                auto self = weak.lock();
                if (!self) return;
                if (!self->closed) self->log(log_level::warn, "the keepalive stream ended: " + st.error_message());
                std::lock_guard lk(self->streams_mutex_);
                self->keepalive_stream_.reset();
                for (auto& [id, sent] : self->keepalives_sent_) sent.clear();  // never answered
                if (etcd::token_expired(static_cast<int>(st.error_code()), st.error_message())) self->token_.clear();
            });
        });
}

void etcd_context::keepalive(std::int64_t id) {
    if (!keepalive_stream_) open_keepalives();
    etcdserverpb::LeaseKeepAliveRequest req;
    req.set_id(id);
    if (keepalive_stream_->send(std::move(req))) keepalives_sent_[id].push_back(clock_type::now());
}

void etcd_context::keepalive_answer(const etcdserverpb::LeaseKeepAliveResponse& r) {
    auto sent = keepalives_sent_.find(r.id());
    if (sent == keepalives_sent_.end() || sent->second.empty()) return;
    const auto at = sent->second.front();
    sent->second.pop_front();
    if (auto l = lease_listeners_.find(r.id()); l != lease_listeners_.end()) {
        auto listener = l->second;  // it may forget the lease
        listener(at, r.ttl());
    }
}

// --- watches

void etcd_context::open_watches() {
    std::lock_guard lk(streams_mutex_);
    watch_stream_ = watch_stream::open(
        [this](grpc::ClientContext* c, watch_stream::reactor_base* r) { watches->async()->Watch(c, r); }, token_,
        [weak = weak_from_this(), own_ = own](etcdserverpb::WatchResponse& r) {
            boost::asio::post(own_->ioc, [weak, r = std::move(r)] {
                if (auto self = weak.lock()) self->watch_answer(r);
            });
        },
        [weak = weak_from_this(), own_ = own](const grpc::Status& st) {
            boost::asio::post(own_->ioc, [weak, st] {
                auto self = weak.lock();
                if (!self) return;
                if (!self->closed) self->log(log_level::warn, "the watch stream ended: " + st.error_message());
                {
                    std::lock_guard lk(self->streams_mutex_);
                    self->watch_stream_.reset();
                }
                if (etcd::token_expired(static_cast<int>(st.error_code()), st.error_message())) self->token_.clear();
                auto ended = std::exchange(self->watchers_, {});
                for (auto& [id, news] : ended) news(etcd::watch_news::ended);
            });
        });
}

std::int64_t etcd_context::watch_delete(const std::string& key, std::int64_t revision,
                                        std::function<void(etcd::watch_news)> news) {
    if (!watch_stream_) open_watches();
    const auto id = next_watch_id_++;
    etcdserverpb::WatchRequest req;
    auto* create = req.mutable_create_request();
    create->set_key(key);
    create->set_start_revision(revision);
    create->set_watch_id(id);
    create->add_filters(etcdserverpb::WatchCreateRequest::NOPUT);
    watchers_[id] = std::move(news);
    if (!watch_stream_->send(std::move(req))) {
        // The stream ended before this create went out: its end reports every watcher.
    }
    return id;
}

void etcd_context::unwatch(std::int64_t id) {
    if (watchers_.erase(id) == 0 || !watch_stream_) return;
    etcdserverpb::WatchRequest req;
    req.mutable_cancel_request()->set_watch_id(id);
    watch_stream_->send(std::move(req));
}

void etcd_context::watch_answer(const etcdserverpb::WatchResponse& r) {
    auto w = watchers_.find(r.watch_id());
    if (w == watchers_.end()) return;
    bool deleted = false;
    for (const auto& ev : r.events())
        if (ev.type() == mvccpb::Event::DELETE) deleted = true;
    if (!deleted && !r.canceled()) return;
    auto news = std::move(w->second);
    watchers_.erase(w);
    if (!r.canceled() && watch_stream_) {
        etcdserverpb::WatchRequest req;
        req.mutable_cancel_request()->set_watch_id(r.watch_id());
        watch_stream_->send(std::move(req));
    }
    news(deleted ? etcd::watch_news::deleted : etcd::watch_news::ended);
}

// --- the end

void etcd_context::close() {
    end_live_locks();
    closed = true;
}

void etcd_context::end_streams(std::chrono::milliseconds timeout) {
    std::shared_ptr<keepalive_stream> k;
    std::shared_ptr<watch_stream> w;
    {
        std::lock_guard lk(streams_mutex_);
        k = keepalive_stream_;
        w = watch_stream_;
    }
    if (k) k->cancel();
    if (w) w->cancel();
    if (k) k->wait_done(timeout);
    if (w) w->wait_done(timeout);
}

} // namespace zklock::detail
