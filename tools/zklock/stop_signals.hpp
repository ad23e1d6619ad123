// The stop signals of run and elect (SIGINT, SIGTERM, SIGHUP), read from a
// signalfd so that each one tells who sent it.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include <functional>
#include <vector>

namespace zklock::cli {

/// The stop signals zklock handles (SIGINT, SIGTERM, SIGHUP): those not ignored on
/// entry. Under nohup, or as a background job of a non-interactive shell, they
/// stay ignored, for zklock and (inherited through exec) for CMD.
std::vector<int> stop_signals();

/// One stop signal as it arrived.
struct stop_request {
    int signal = 0;
    /// The kernel sent it to zklock's whole process group, CMD included: the
    /// terminal's Ctrl-C (SIGINT). CMD has it already; forwarding it would
    /// deliver it twice. False for a signal sent by a process (kill(1): SI_USER), which
    /// reached zklock alone.
    bool whole_group = false;
};

/// Reads stop_signals() from a signalfd on `io`. The signals are blocked in the
/// constructing thread and so in every thread it starts afterwards: construct
/// it before the Session (which starts a thread). They stay blocked after
/// destruction, so one that arrives while zklock exits does not turn its exit
/// status into a death by signal.
class stop_signal_watch {
public:
    explicit stop_signal_watch(boost::asio::io_context& io);
    stop_signal_watch(const stop_signal_watch&) = delete;
    stop_signal_watch& operator=(const stop_signal_watch&) = delete;

    /// Calls `handler` on io for every stop signal until the watch is destroyed
    /// or io stops.
    void watch(std::function<void(stop_request)> handler);

private:
    void wait();

    boost::asio::posix::stream_descriptor fd_;
    std::function<void(stop_request)> handler_;
};

} // namespace zklock::cli
