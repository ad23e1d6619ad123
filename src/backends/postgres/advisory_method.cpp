// "postgres-advisory": a session advisory lock on a 64-bit hash of the name,
// held by the connection; the server's lock manager queues the waiters.
#include "backends/postgres/lock_method.hpp"
#include "backends/sql/sql_context.hpp"

namespace zklock::detail::pg {
namespace {

class advisory final : public lock_method {
public:
    postgres_steps::method kind() const noexcept override { return postgres_steps::method::advisory; }

    lock_capabilities capabilities() const noexcept override {
        // the lock manager queues conflicting waiters in arrival order, no barging
        return sql::sql_capabilities("postgres-advisory", sql_steps::method::advisory, true, true,
                "one connection per Lock object (advisory locks belong to the server session); the key is a "
                "64-bit hash of the name, so colliding names exclude each other; a holder cut off from the server "
                "keeps believing it holds until its connection fails; fencing tokens keep increasing only while "
                "the database is durable");
    }

    const char* application_prefix() const noexcept override { return "zklock-advisory:"; }

    statement attempt(const attempt_args& a) const override {
        if (a.no_wait)
            return {"SELECT CASE WHEN pg_try_advisory_lock(hashtextextended($1, 0)) "
                    "THEN nextval('zklock_fence') END",
                    {a.name}};
        // nextval only once the lock is granted: the CTE's row exists only then
        return {"WITH l AS MATERIALIZED (SELECT pg_advisory_lock(hashtextextended($1, 0))) "
                "SELECT nextval('zklock_fence') FROM l",
                {a.name}};
    }

    statement release(const std::string& name, const std::string&, const std::string&, std::int64_t) const override {
        return {"SELECT pg_advisory_unlock(hashtextextended($1, 0))", {name}};
    }
};

} // namespace

const lock_method& advisory_method() noexcept {
    static const advisory m;
    return m;
}

} // namespace zklock::detail::pg
