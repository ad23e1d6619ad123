// What the session, the engines and the lock front wait on: the clock, the
// timers and the C client's socket. In the library: std::chrono::steady_clock,
// Asio's timers on it and Asio's stream descriptor. In the deterministic
// simulation (tests/sim), which compiles these sources again with
// ZKLOCK_SIMULATION defined: the simulated process's clock, and timers and a
// descriptor whose waits are events of the simulator. Both clocks have
// steady_clock's time_point, so every signature stays the same.
#pragma once

#ifdef ZKLOCK_SIMULATION
#include "sim_seam.hpp"  // tests/sim
#else
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/basic_waitable_timer.hpp>
#include <boost/asio/posix/basic_stream_descriptor.hpp>
#include <boost/asio/wait_traits.hpp>

#include <chrono>

#include <fcntl.h>

namespace zklock::detail {

using clock = std::chrono::steady_clock;
template <class Executor>
using basic_timer = boost::asio::basic_waitable_timer<clock, boost::asio::wait_traits<clock>, Executor>;
using timer = basic_timer<boost::asio::any_io_executor>;
template <class Executor> using basic_descriptor = boost::asio::posix::basic_stream_descriptor<Executor>;

/// What the session registers with the reactor for the C client's socket `fd`:
/// a duplicate of its own (close-on-exec), -1 when none can be made. The C
/// client closes its socket when it likes, and the number may be another
/// thread's socket a moment later: a registration on the client's number
/// would be removed (epoll_ctl DEL) from whatever then has it, another
/// Session's socket on the same reactor among them.
inline int own_descriptor(int fd) noexcept { return ::fcntl(fd, F_DUPFD_CLOEXEC, 0); }
/// Deregisters and closes what own_descriptor() gave `d`.
template <class Executor> void drop_descriptor(basic_descriptor<Executor>& d) noexcept {
    boost::system::error_code ignored;
    d.close(ignored);
}

} // namespace zklock::detail
#endif
