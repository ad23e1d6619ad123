// The README's snippets for the fences and the comparison backends: compiled
// (example_readme_backends), not run: they need the user's Redis and PostgreSQL.
// Each sits between `// [readme:NAME]` and `// [/readme:NAME]`, as README.md shows it.
#include <zklock/backends.hpp>
#include <zklock/zklock.hpp>
#include <zklock/postgres/postgres_fence.hpp>
#include <zklock/redis/redis_fence.hpp>

#include <mutex>
#include <string>

namespace {

void postgres_fence(zklock::Mutex& lock, const std::string& payload) {
    // [readme:postgres_fence]
    zklock::PostgresFence fence("host=db1 dbname=app user=svc");  // installs the table and function if missing
    std::unique_lock hold(lock);                                  // any zklock lock
    auto r = fence.write("orders-42", lock.fencing_token(), payload);  // also write(..., ec) and async_write(..., token)
    if (!r.applied) { /* refused: r.stored_token is newer, our lock is lost: stop */ }
    // [/readme:postgres_fence]
}

void redis_fence(zklock::Mutex& lock, const std::string& redis_url, const std::string& text) {
    // [readme:redis_fence]
    // redis_url: "redis://:PASSWORD@10.0.0.5:6379/0", read from where you keep secrets, not written in code
    zklock::RedisFence fence(redis_url);
    auto r = fence.write("report:today", lock.fencing_token(), text);
    // [/readme:redis_fence]
    (void)r;
}

void backends() {
    // [readme:backends]
    zklock::BackendOptions options;
    options.redis = "10.0.0.5:6379";        // or "redis://user:password@10.0.0.5:6379/0" (AUTH on every connection)
    auto service = zklock::open_lock_service("redis", options);  // or "zookeeper", "redlock", "postgres-advisory", ...
    zklock::Lock lock = service->make_lock("nightly-report");
    std::unique_lock hold(lock);
    // [/readme:backends]
}

} // namespace

// Not run: every function above needs servers of the user's.
int main(int argc, char**) {
    if (argc > 1000) {
        zklock::Session session(zklock::SessionOptions{});
        zklock::Mutex lock(session, "/locks/x");
        postgres_fence(lock, "payload");
        redis_fence(lock, "redis://127.0.0.1:6379", "text");
        backends();
    }
    return 0;
}
