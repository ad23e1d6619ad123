// "postgres-lease": a row in zklock_leases with an owner and an expiry,
// taken over once expired; a release NOTIFYs the waiters.
#include "backends/postgres/lock_method.hpp"
#include "backends/sql/sql_context.hpp"

namespace zklock::detail::pg {
namespace {

class lease final : public lock_method {
public:
    postgres_steps::method kind() const noexcept override { return postgres_steps::method::lease; }

    lock_capabilities capabilities() const noexcept override {
        // every waiter LISTENs; a release NOTIFYs them all (not only one)
        return sql::sql_capabilities("postgres-lease", sql_steps::method::lease, false, true,
                "one connection per Lock object; not FIFO; a release wakes every waiter (NOTIFY) and expired "
                "leases are found by jittered polling; a paused holder can outlive its TTL (use the fencing "
                "token, a sequence that keeps increasing only while the database is durable: fsync on, no "
                "failover to a lagging replica)");
    }

    const char* application_prefix() const noexcept override { return "zklock-lease:"; }

    std::string create_tables_sql() const override {
        return "CREATE TABLE IF NOT EXISTS zklock_leases(name text PRIMARY KEY, owner text NOT NULL, "
               "fence bigint NOT NULL, expires_at timestamptz NOT NULL); ";
    }

    std::string after_setup_sql(const std::string& channel) const override { return " LISTEN " + channel + ";"; }

    statement attempt(const attempt_args& a) const override {
        // The fence is drawn only after the row is ours, while this statement still
        // holds its row lock: a statement whose VALUES drew nextval() first and then
        // ran late could otherwise win the lease after a later holder, with a
        // smaller token (the conformance suite caught this under load). The row's
        // fence column is not used.
        return {"WITH won AS (INSERT INTO zklock_leases(name, owner, fence, expires_at) "
                "VALUES ($1, $2, 0, now() + $3::interval) "
                "ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, "
                "expires_at = excluded.expires_at WHERE zklock_leases.expires_at < now() RETURNING name) "
                "SELECT nextval('zklock_fence') FROM won",
                {a.name, a.owner, a.ttl_interval}};
    }

    std::optional<statement> renew(const attempt_args& a) const override {
        return statement{"UPDATE zklock_leases SET expires_at = now() + $3::interval WHERE name = $1 AND owner = $2",
                         {a.name, a.owner, a.ttl_interval}};
    }

    statement release(const std::string& name, const std::string& owner, const std::string& channel,
                      std::int64_t) const override {
        return {"WITH d AS (DELETE FROM zklock_leases WHERE name = $1 AND owner = $2 RETURNING 1) "
                "SELECT pg_notify($3, '') FROM d",
                {name, owner, channel}};
    }
};

} // namespace

const lock_method& lease_method() noexcept {
    static const lease m;
    return m;
}

} // namespace zklock::detail::pg
