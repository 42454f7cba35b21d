-- push-gateway schema, version 1. Everything every replica shares (PROTOCOL.md §4, §7, §10).
-- Bytes are bytea, times timestamptz. Table rationale: docs/decisions/0030-schema.md.

-- §4.1: a stateless challenge is consumed by inserting its id; the primary key makes reuse fail.
-- Rows only need to outlive the challenge's 300 s validity; the reaper deletes them after expires_at.
CREATE TABLE consumed_challenges (
    challenge_id uuid PRIMARY KEY,
    expires_at timestamptz NOT NULL
);
CREATE INDEX consumed_challenges_expires_at ON consumed_challenges (expires_at);

-- §4.2, §4.4, §4.6, §5: one row per enrolled installation. "Live" means revoked_at IS NULL and
-- expires_at > now(); only the first half can be an index predicate, so transactions that enforce
-- uniqueness first delete expired rows that would conflict (see the decision record).
CREATE TABLE installations (
    handle uuid PRIMARY KEY,
    app_attest_key_id bytea NOT NULL CHECK (octet_length(app_attest_key_id) = 32),
    -- Uncompressed P-256 point from the attestation leaf certificate (0x04 ‖ X ‖ Y).
    app_attest_public_key bytea NOT NULL
        CHECK (octet_length(app_attest_public_key) = 65 AND get_byte(app_attest_public_key, 0) = 4),
    -- App Attest counters are unsigned 32-bit (§5 assertion step 2).
    assertion_counter bigint NOT NULL DEFAULT 0 CHECK (assertion_counter BETWEEN 0 AND 4294967295),
    app_profile text NOT NULL CHECK (octet_length(app_profile) BETWEEN 1 AND 128),
    -- §5 attestation step 6: kept for later fraud-metric use; optional.
    attestation_receipt bytea CHECK (octet_length(attestation_receipt) BETWEEN 1 AND 16384),
    -- §7 token custody envelope bytes (`<key id>.<base64url>`); never the plaintext token.
    encrypted_endpoint bytea NOT NULL CHECK (octet_length(encrypted_endpoint) BETWEEN 1 AND 2048),
    -- §7 keyed HMAC-SHA-256 fingerprint of (profile, token).
    endpoint_fingerprint bytea NOT NULL CHECK (octet_length(endpoint_fingerprint) = 32),
    endpoint_epoch bigint NOT NULL CHECK (endpoint_epoch >= 1),
    -- §4.7 step 5: APNs said the endpoint of this epoch is gone. Dead only while it equals
    -- endpoint_epoch; a rotation moves endpoint_epoch past it. invalid_at may be unknown (null).
    dead_endpoint_epoch bigint,
    dead_endpoint_invalid_at timestamptz,
    -- §4.6: a revoked installation stays as a tombstone until expires_at so a retry is idempotent.
    revoked_at timestamptz,
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    CHECK (dead_endpoint_epoch BETWEEN 1 AND endpoint_epoch),
    CHECK (dead_endpoint_invalid_at IS NULL OR dead_endpoint_epoch IS NOT NULL)
);
-- §4.2: one live installation per App Attest key and per (profile, endpoint fingerprint).
CREATE UNIQUE INDEX installations_live_key_id ON installations (app_attest_key_id) WHERE revoked_at IS NULL;
CREATE UNIQUE INDEX installations_live_endpoint ON installations (app_profile, endpoint_fingerprint)
    WHERE revoked_at IS NULL;
CREATE INDEX installations_expires_at ON installations (expires_at);

-- §4.3, §4.5, §4.7: one row per (installation, relay) holding its current generation. A new
-- generation overwrites the row; a revocation only sets revoked_at, so the row keeps the highest
-- generation ever accepted and "strictly greater than any earlier generation" stays checkable.
-- Deleting an installation (reaper) removes its delegations.
CREATE TABLE delegations (
    installation_handle uuid NOT NULL REFERENCES installations (handle) ON DELETE CASCADE,
    relay_pubkey bytea NOT NULL CHECK (octet_length(relay_pubkey) = 32),
    -- §7: the id sealed into the endpoint grant; a new generation gets a new id.
    delegation_id uuid NOT NULL UNIQUE,
    generation bigint NOT NULL CHECK (generation >= 1),
    endpoint_epoch bigint NOT NULL CHECK (endpoint_epoch >= 1),
    not_before timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (installation_handle, relay_pubkey),
    CHECK (not_before < expires_at)
);
CREATE INDEX delegations_expires_at ON delegations (expires_at);

-- §4.7 step 3, §6: a NIP-98 event id is burned once per relay.
CREATE TABLE nip98_replays (
    relay_pubkey bytea NOT NULL CHECK (octet_length(relay_pubkey) = 32),
    auth_event_id bytea NOT NULL CHECK (octet_length(auth_event_id) = 32),
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (relay_pubkey, auth_event_id)
);
CREATE INDEX nip98_replays_expires_at ON nip98_replays (expires_at);

-- §4.7 step 4: a relay's request id is reserved once until the request's expires_at (released
-- again after transient APNs outcomes).
CREATE TABLE delivery_reservations (
    relay_pubkey bytea NOT NULL CHECK (octet_length(relay_pubkey) = 32),
    request_id uuid NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (relay_pubkey, request_id)
);
CREATE INDEX delivery_reservations_expires_at ON delivery_reservations (expires_at);

-- §4.7 step 6: fixed-window endpoint quota; the window starts at the first admission after the
-- previous window ended. The reaper deletes rows whose window ended.
CREATE TABLE endpoint_quota_windows (
    endpoint_fingerprint bytea PRIMARY KEY CHECK (octet_length(endpoint_fingerprint) = 32),
    window_started_at timestamptz NOT NULL,
    admitted_count integer NOT NULL CHECK (admitted_count >= 0)
);
CREATE INDEX endpoint_quota_windows_window_started_at ON endpoint_quota_windows (window_started_at);
