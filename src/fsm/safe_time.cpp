#include "fsm/safe_time.hpp"

#include <zookeeper.h>

#include <algorithm>

namespace zklock::detail {

bool server_answered(int rc) noexcept {
    if (rc == ZOK) return true;
    if (rc > ZAPIERROR) return false;  // the client's system errors: connection loss, timeout, marshalling
    switch (rc) {
    case ZAPIERROR:
    case ZSESSIONEXPIRED:
    case ZINVALIDSTATE:
    case ZCLOSING:
    case ZSESSIONMOVED:
    case ZAUTHFAILED:
    case ZSESSIONCLOSEDREQUIRESASLAUTH:
    case ZNOTHING:
    case ZINVALIDCALLBACK:
        return false;
    default: return true;
    }
}

std::chrono::steady_clock::duration safe_margin(std::chrono::milliseconds session_timeout) noexcept {
    // At least 1% of the timeout, rounded up in the clock's own ticks (whole
    // milliseconds would round a 102 ms timeout's 1.02 ms down), and at least
    // 1 ms: a budget never outlasts what a server clock 1% fast leaves
    // (tests/unit/test_property_safe_time.cpp).
    using tick = std::chrono::steady_clock::duration;
    const tick timeout = session_timeout;
    return std::max<tick>(std::chrono::milliseconds(1), (timeout + tick(99)) / 100);
}

std::chrono::steady_clock::time_point safe_until(std::chrono::steady_clock::time_point heard,
                                                 std::chrono::milliseconds session_timeout) noexcept {
    if (heard == std::chrono::steady_clock::time_point{} || session_timeout.count() <= 0) return {};
    return heard + session_timeout - safe_margin(session_timeout);
}

} // namespace zklock::detail
