-- docs/protocol.md §13 step 4: the SHA-256 of a Marmot trigger's decoded content, claimed by the
-- first replica that sees it (INSERT … ON CONFLICT DO NOTHING) and kept 10 minutes; the reaper
-- deletes rows past expires_at (§10). Nothing else about the trigger is stored.
CREATE TABLE marmot_trigger_digests (
    digest bytea PRIMARY KEY CHECK (octet_length(digest) = 32),
    expires_at timestamptz NOT NULL
);
CREATE INDEX marmot_trigger_digests_expires_at ON marmot_trigger_digests (expires_at);

-- Expand step (docs/operations.md): the runtime role of a running gateway already holds exactly DML
-- on the gateway tables, and readiness requires it on every table; grant the same on this one, in
-- this transaction, to every role that holds DML on `installations` without owning it, so an
-- upgrade without `migrate --runtime-role` keeps every replica ready. `--runtime-role` grants it too.
DO $$
DECLARE
    v_role name;
BEGIN
    FOR v_role IN
        SELECT r.rolname FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a JOIN pg_roles r ON r.oid = a.grantee
        WHERE c.oid = 'installations'::regclass AND a.privilege_type = 'DELETE'
          AND NOT pg_has_role(r.oid, c.relowner, 'MEMBER')
    LOOP
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE marmot_trigger_digests TO %I', v_role);
    END LOOP;
END
$$;
