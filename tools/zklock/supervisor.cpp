#include "supervisor.hpp"

#include "commands.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>

namespace zklock::cli {
namespace asio = boost::asio;

supervisor::supervisor(SessionOptions options, std::chrono::milliseconds grace, bool verbose)
    : signals_(io_), session_(std::move(options)), child_(io_, grace), verbose_(verbose) {}

int supervisor::run() {
    signals_.watch([this](stop_request r) { on_signal(r); });
    if (verbose_) notice("connecting to " + session_.options().connect);
    session_.async_connect(asio::bind_cancellation_slot(
        connect_cancel_.slot(), asio::bind_executor(io_, [this](std::error_code ec) {
            if (finished_) return;
            if (ec == std::errc::operation_canceled) return finish(stopped_status(stop_signal_));
            if (ec) return finish(report_connect_failure(session_, ec));
            connected_ = true;
            on_connected();
        })));
    io_.run();
    return exit_code_;
}

void supervisor::on_signal(const stop_request& r) {
    if (finished_) return;
    if (connected_) return on_stop(r);
    stop_signal_ = r.signal;
    // The connect completes with operation_canceled on io_, where it detaches
    // its cancellation handler: emitted here, on io_, too.
    connect_cancel_.emit(asio::cancellation_type::terminal);
}

void supervisor::finish(int code) {
    if (finished_) return;
    finished_ = true;
    exit_code_ = code;
    io_.stop();
}

} // namespace zklock::cli
