// "postgres-version": the optimistic lock on a version column, as applications
// write it. A row per lock in zklock_versions holds an owner, an expiry and a
// version. Acquire reads the version of a free row (no owner, or an expired
// one), then takes the row with an UPDATE that names that version: it changes
// one row only when nobody took the row or moved the version in between. The
// new version is the fencing token. Waiters poll: nothing tells them of a
// release.
#include "backends/postgres/lock_method.hpp"
#include "backends/sql/sql_context.hpp"

#include <string>

namespace zklock::detail::pg {
namespace {

class version final : public lock_method {
public:
    postgres_steps::method kind() const noexcept override { return postgres_steps::method::version; }

    lock_capabilities capabilities() const noexcept override {
        // waiters poll, jittered, up to every 500 ms
        return sql::sql_capabilities("postgres-version", sql_steps::method::version, false, false,
                "one connection per Lock object; not FIFO; waiters poll (a release tells nobody); a paused holder "
                "can outlive its expiry (the version is the fencing token, and keeps increasing only while the "
                "database is durable)");
    }

    const char* application_prefix() const noexcept override { return "zklock-version:"; }

    std::string create_tables_sql() const override {
        return "CREATE TABLE IF NOT EXISTS zklock_versions(name text PRIMARY KEY, owner text, "
               "version bigint NOT NULL DEFAULT 0, expires_at timestamptz); ";
    }

    // The lock's row, made once (again after an operator deleted it).
    std::optional<statement> prepare(const std::string& name) const override {
        return statement{"INSERT INTO zklock_versions(name) VALUES ($1) ON CONFLICT DO NOTHING", {name}};
    }

    // The version of a free row; "held" while an owner's expiry is ahead, on
    // the server's clock; no row when the row is gone.
    std::optional<statement> read(const std::string& name) const override {
        return statement{"SELECT CASE WHEN owner IS NULL OR expires_at < now() THEN version::text ELSE 'held' END "
                         "FROM zklock_versions WHERE name = $1",
                         {name}};
    }

    // The compare-and-set: one row when the version is still the one read and
    // the row still free. Two clients that read the same version both send
    // it; the second UPDATE waits for the first's row lock, then finds the
    // version moved and changes nothing.
    statement attempt(const attempt_args& a) const override {
        return {"UPDATE zklock_versions SET owner = $2, version = version + 1, expires_at = now() + $3::interval "
                "WHERE name = $1 AND (owner IS NULL OR expires_at < now()) AND version = $4 RETURNING version",
                {a.name, a.owner, a.ttl_interval, std::string(a.observed)}};
    }

    std::optional<statement> renew(const attempt_args& a) const override {
        return statement{"UPDATE zklock_versions SET expires_at = now() + $3::interval "
                         "WHERE name = $1 AND owner = $2 AND version = $4",
                         {a.name, a.owner, a.ttl_interval, std::to_string(a.token)}};
    }

    // Clears the owner only while the version is still ours: a holder whose
    // expiry passed and whose row was taken since changes nothing.
    statement release(const std::string& name, const std::string& owner, const std::string&,
                      std::int64_t token) const override {
        return {"UPDATE zklock_versions SET owner = NULL, expires_at = NULL WHERE name = $1 AND owner = $2 AND version = $3",
                {name, owner, std::to_string(token)}};
    }
};

} // namespace

const lock_method& version_method() noexcept {
    static const version m;
    return m;
}

} // namespace zklock::detail::pg
