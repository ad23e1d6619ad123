// The skeleton `zklock run`, `zklock elect` and `elect --observe` share: an
// io_context on the main thread, the stop signals, a Session that connects,
// and CMD as a child.
#pragma once

#include "command_child.hpp"
#include "stop_signals.hpp"

#include <zklock/session.hpp>

#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>

namespace zklock::cli {

/// Everything happens on io_ in the main thread; the Session runs its own
/// thread and posts completions here. A subclass starts its work in
/// on_connected() and ends it with finish().
class supervisor {
public:
    supervisor(const supervisor&) = delete;
    supervisor& operator=(const supervisor&) = delete;

    /// Connects, then runs until finish(); returns the exit status. A stop
    /// signal while connecting exits with stopped_status(); a failed connect with
    /// the status report_connect_failure() gives.
    int run();

protected:
    /// Throws zklock::error for bad session options (errc::invalid_argument).
    supervisor(SessionOptions options, std::chrono::milliseconds grace, bool verbose);
    virtual ~supervisor() = default;

    /// The session is connected: start the work.
    virtual void on_connected() = 0;
    /// A stop signal arrived after on_connected().
    virtual void on_stop(const stop_request& request) = 0;
    /// The exit status for a stop signal while connecting: 128+N.
    virtual int stopped_status(int signal) const { return 128 + signal; }

    /// Ends run() with `code`; later calls change nothing.
    void finish(int code);
    bool finished() const noexcept { return finished_; }

    // Declaration order is construction order: io_ outlives the session (whose
    // thread posts completions to it until the session is destroyed), and the
    // signals are blocked before the session starts its thread.
    boost::asio::io_context io_{1};
    // Completions come from the session's thread: io_ runs until finish() stops it.
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_ =
        boost::asio::make_work_guard(io_);
    stop_signal_watch signals_;
    Session session_;
    command_child child_;
    bool verbose_;

private:
    void on_signal(const stop_request& request);

    boost::asio::cancellation_signal connect_cancel_;
    bool connected_ = false;
    bool finished_ = false;
    int stop_signal_ = 0;
    int exit_code_ = 1;
};

} // namespace zklock::cli
