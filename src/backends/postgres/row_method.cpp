// "postgres-row": SELECT ... FOR UPDATE [NOWAIT] on the lock's row in
// zklock_rows, held by a transaction left open until the release COMMITs.
#include "backends/postgres/lock_method.hpp"
#include "backends/sql/sql_context.hpp"

namespace zklock::detail::pg {
namespace {

// Names are validated ([A-Za-z0-9._-]), so quoting alone is safe.
std::string literal(const std::string& s) { return "'" + s + "'"; }

class row final : public lock_method {
public:
    postgres_steps::method kind() const noexcept override { return postgres_steps::method::row; }

    lock_capabilities capabilities() const noexcept override {
        // not FIFO: a newcomer can lock the row between a release and the first waiter's retry
        return sql::sql_capabilities("postgres-row", sql_steps::method::row, false, true,
                "one connection and one open transaction per holder (long holds hold back VACUUM); mostly but not "
                "strictly FIFO; a holder cut off from the server keeps believing it holds until its connection "
                "fails; fencing tokens keep increasing only while the database is durable");
    }

    const char* application_prefix() const noexcept override { return "zklock-row:"; }

    // The row's fence comes from the sequence, not fence + 1: a dead holder's
    // transaction rolls back, and a counter in the row would hand its token out again.
    std::string create_tables_sql() const override {
        return "CREATE TABLE IF NOT EXISTS zklock_rows(name text PRIMARY KEY, fence bigint NOT NULL DEFAULT 0); ";
    }

    // Outside the lock's transaction, so that a try_lock never waits on another
    // transaction's uncommitted insert of the same row.
    // NOT EXISTS reads the snapshot: an existing row, even one locked and updated by
    // the holder's open transaction, makes it insert nothing and wait for nobody.
    std::optional<statement> prepare(const std::string& name) const override {
        return statement{"INSERT INTO zklock_rows(name) SELECT $1 WHERE NOT EXISTS "
                         "(SELECT 1 FROM zklock_rows WHERE name = $1) ON CONFLICT DO NOTHING",
                         {name}};
    }

    statement attempt(const attempt_args& a) const override {
        const std::string lit = literal(a.name);
        return {"BEGIN; SELECT fence FROM zklock_rows WHERE name = " + lit + " FOR UPDATE" +
                    (a.no_wait ? " NOWAIT" : "") +
                    "; UPDATE zklock_rows SET fence = nextval('zklock_fence') WHERE name = " + lit + " RETURNING fence",
                {},
                true};
    }

    statement release(const std::string&, const std::string&, const std::string&, std::int64_t) const override {
        return {"COMMIT", {}, true};
    }
};

} // namespace

const lock_method& row_method() noexcept {
    static const row m;
    return m;
}

} // namespace zklock::detail::pg
