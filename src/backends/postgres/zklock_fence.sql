-- zklock fencing for PostgreSQL: a table of fenced values and the function
-- that writes them only for a writer whose fencing token is not older than the
-- one stored with the row. Idempotent: run it again to upgrade.
--
--   psql -d mydb -f zklock_fence.sql          (or zklock::PostgresFence::install())
--
--   SELECT applied, stored_token FROM zklock_fenced_write('orders-42', 1234, 'new value');
--     applied = true:  written; the row now records token 1234
--     applied = false: refused, nothing written: stored_token is the newer token
--                      a later lock holder wrote with (this writer's lock was lost)
--
-- The decision is one statement (INSERT ... ON CONFLICT DO UPDATE ... WHERE),
-- so concurrent writers are serialized on the row: whatever their order, the
-- row ends with the value of the highest token, and a lower token never
-- overwrites a higher one. Equal tokens are accepted (one holder writing twice).
-- Tokens must come from one source for one resource (one ZooKeeper ensemble,
-- or one backend's counter): never mix them.
--
-- The same rule on your own table instead of zklock_fenced: add a column
--     ALTER TABLE orders ADD COLUMN fencing_token bigint NOT NULL DEFAULT 0;
-- and make every write of a lock holder conditional on it, in one statement:
--     INSERT INTO orders AS o (id, status, fencing_token) VALUES ($1, $2, $3)
--     ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status, fencing_token = EXCLUDED.fencing_token
--     WHERE o.fencing_token <= EXCLUDED.fencing_token;
--     -- or, for a row that exists:
--     UPDATE orders SET status = $2, fencing_token = $3 WHERE id = $1 AND fencing_token <= $3;
-- A row count of 0 is a refused stale write.

CREATE TABLE IF NOT EXISTS zklock_fenced (
    resource      text PRIMARY KEY,
    fencing_token bigint NOT NULL CHECK (fencing_token > 0),
    value         bytea,
    updated_at    timestamptz NOT NULL DEFAULT now()
);

CREATE OR REPLACE FUNCTION zklock_fenced_write(p_resource text, p_token bigint, p_value bytea,
                                               OUT applied boolean, OUT stored_token bigint)
LANGUAGE plpgsql AS $zklock$
BEGIN
    IF p_resource IS NULL OR p_token IS NULL OR p_token < 1 THEN
        RAISE EXCEPTION 'zklock_fenced_write: a resource and a positive fencing token are needed'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    INSERT INTO zklock_fenced AS f (resource, fencing_token, value, updated_at)
    VALUES (p_resource, p_token, p_value, now())
    ON CONFLICT (resource) DO UPDATE
        SET fencing_token = EXCLUDED.fencing_token, value = EXCLUDED.value, updated_at = EXCLUDED.updated_at
        WHERE f.fencing_token <= EXCLUDED.fencing_token
    RETURNING f.fencing_token INTO stored_token;
    applied := FOUND;
    IF NOT applied THEN
        -- Refused. ON CONFLICT DO UPDATE locked the row even so, and this
        -- statement takes a new snapshot: it reads the token that refused us.
        SELECT f.fencing_token INTO stored_token FROM zklock_fenced AS f WHERE f.resource = p_resource;
    END IF;
END
$zklock$;
