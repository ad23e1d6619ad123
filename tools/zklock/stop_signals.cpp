#include "stop_signals.hpp"

#include <zklock/error.hpp>

#include <cerrno>
#include <csignal>
#include <system_error>

#include <sys/signalfd.h>
#include <unistd.h>

namespace zklock::cli {
namespace asio = boost::asio;

std::vector<int> stop_signals() {
    std::vector<int> out;
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
        struct sigaction current {};
        if (::sigaction(sig, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) continue;
        out.push_back(sig);
    }
    return out;
}

namespace {

int open_signalfd() {
    sigset_t set;
    ::sigemptyset(&set);
    for (int sig : stop_signals()) ::sigaddset(&set, sig);
    if (const int rc = ::pthread_sigmask(SIG_BLOCK, &set, nullptr); rc != 0)
        throw std::system_error(rc, std::generic_category(), "pthread_sigmask");
    const int fd = ::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "signalfd");
    return fd;
}

} // namespace

stop_signal_watch::stop_signal_watch(asio::io_context& io) : fd_(io, open_signalfd()) {}

void stop_signal_watch::watch(std::function<void(stop_request)> handler) {
    handler_ = std::move(handler);
    wait();
}

void stop_signal_watch::wait() {
    fd_.async_wait(asio::posix::descriptor_base::wait_read, [this](boost::system::error_code ec) {
        if (ec) return;  // destroyed, or io stopped
        signalfd_siginfo info{};
        ssize_t n;
        while ((n = ::read(fd_.native_handle(), &info, sizeof info)) == static_cast<ssize_t>(sizeof info)) {
            stop_request r;
            r.signal = static_cast<int>(info.ssi_signo);
            r.whole_group = info.ssi_code == SI_KERNEL;
            // A hangup of the terminal goes, from the kernel, to the session
            // leader alone: when zklock leads its session, CMD did not get it.
            if (r.signal == SIGHUP && ::getsid(0) == ::getpid()) r.whole_group = false;
            handler_(r);
        }
        wait();
    });
}

} // namespace zklock::cli
