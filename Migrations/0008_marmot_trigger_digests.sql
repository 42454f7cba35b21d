-- docs/protocol.md §13 step 4: the SHA-256 of a Marmot trigger's decoded content, claimed by the
-- first replica that sees it (INSERT … ON CONFLICT DO NOTHING) and kept 10 minutes; the reaper
-- deletes rows past expires_at (§10). Nothing else about the trigger is stored.
CREATE TABLE marmot_trigger_digests (
    digest bytea PRIMARY KEY CHECK (octet_length(digest) = 32),
    expires_at timestamptz NOT NULL
);
CREATE INDEX marmot_trigger_digests_expires_at ON marmot_trigger_digests (expires_at);
