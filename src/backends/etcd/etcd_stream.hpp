// One bidirectional gRPC stream of etcd's (LeaseKeepAlive, Watch) on gRPC's
// callback API: writes queued one at a time, a read always outstanding, the
// end reported once. Writes start from outside the reactions, so the stream
// holds itself open (AddHold) until its read fails: from then on it refuses
// writes, lets go of the hold, and gRPC may end it. The reactor deletes itself
// at OnDone; the handle that the service keeps outlives it.
//
// `on_read` and `on_done` run on gRPC's threads: the service's hooks only
// post to its own thread.
#pragma once

#include <grpcpp/client_context.h>
#include <grpcpp/support/client_callback.h>
#include <grpcpp/support/status.h>

#include <chrono>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace zklock::detail::etcd {

template <class Req, class Resp> class bidi_stream : public std::enable_shared_from_this<bidi_stream<Req, Resp>> {
public:
    using reactor_base = grpc::ClientBidiReactor<Req, Resp>;
    /// Starts the RPC on `context` with `reactor` (the stub's async() method).
    using starter = std::function<void(grpc::ClientContext*, reactor_base*)>;

    /// Opens the stream; `token` (may be empty) goes as etcd's "token" metadata.
    static std::shared_ptr<bidi_stream> open(const starter& start, const std::string& token,
                                             std::function<void(Resp&)> on_read,
                                             std::function<void(const grpc::Status&)> on_done) {
        auto s = std::shared_ptr<bidi_stream>(new bidi_stream(std::move(on_read), std::move(on_done)));
        auto* r = new reactor(s);
        s->reactor_ = r;
        if (!token.empty()) r->context.AddMetadata("token", token);
        start(&r->context, r);
        r->AddHold();
        r->StartRead(&r->response);
        r->StartCall();
        return s;
    }

    /// Any thread: queues `request`; false once the stream has ended.
    bool send(Req request) {
        std::lock_guard lk(mutex_);
        if (!reactor_ || ended_) return false;
        queue_.push_back(std::move(request));
        if (!writing_) {
            writing_ = true;
            reactor_->StartWrite(&queue_.front());
        }
        return true;
    }

    /// Any thread: ends the stream (on_done follows, with CANCELLED).
    void cancel() {
        std::lock_guard lk(mutex_);
        if (reactor_) reactor_->context.TryCancel();
    }

    /// True once on_done has run.
    bool wait_done(std::chrono::milliseconds timeout) { return done_.wait_for(timeout) == std::future_status::ready; }

private:
    struct reactor : reactor_base {
        explicit reactor(std::shared_ptr<bidi_stream> s) : stream(std::move(s)) {}
        void OnReadDone(bool ok) override {
            if (!ok) {  // the stream ends: no more writes, and OnDone follows
                {
                    std::lock_guard lk(stream->mutex_);
                    stream->ended_ = true;
                }
                this->RemoveHold();
                return;
            }
            stream->on_read_(response);
            response.Clear();
            this->StartRead(&response);
        }
        void OnWriteDone(bool ok) override {
            std::lock_guard lk(stream->mutex_);
            stream->queue_.pop_front();
            stream->writing_ = false;
            if (ok && !stream->queue_.empty() && stream->reactor_ && !stream->ended_) {
                stream->writing_ = true;
                this->StartWrite(&stream->queue_.front());
            }
        }
        void OnDone(const grpc::Status& status) override {
            auto s = stream;
            {
                std::lock_guard lk(s->mutex_);
                s->reactor_ = nullptr;
            }
            s->on_done_(status);
            s->finished_.set_value();
            delete this;
        }
        grpc::ClientContext context;
        Resp response;
        std::shared_ptr<bidi_stream> stream;
    };

    bidi_stream(std::function<void(Resp&)> on_read, std::function<void(const grpc::Status&)> on_done)
        : on_read_(std::move(on_read)), on_done_(std::move(on_done)) {}

    std::function<void(Resp&)> on_read_;
    std::function<void(const grpc::Status&)> on_done_;
    std::recursive_mutex mutex_;  // a write may complete inline in StartWrite
    reactor* reactor_ = nullptr;  // under mutex_; null once OnDone ran
    std::deque<Req> queue_;       // under mutex_; front: being written
    bool writing_ = false;
    bool ended_ = false;          // under mutex_: the read failed, no write may start
    std::promise<void> finished_;
    std::shared_future<void> done_ = finished_.get_future().share();
};

} // namespace zklock::detail::etcd
