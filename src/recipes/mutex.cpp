#include <zklock/mutex.hpp>

#include "session/session_access.hpp"
#include "recipes/queue_factory.hpp"

#include <utility>

namespace zklock {

Mutex::Mutex(Session& session, std::string path, MutexOptions options)
    : QueueLock(detail::make_queue_lock(detail::session_access::session(session),
                                        detail::request_of(std::move(path), std::move(options)), nullptr)) {}

Mutex::Mutex(Session& session, std::string path, MutexOptions options, std::error_code& ec)
    : QueueLock(detail::make_queue_lock(detail::session_access::session(session),
                                        detail::request_of(std::move(path), std::move(options)), &ec)) {}

} // namespace zklock
