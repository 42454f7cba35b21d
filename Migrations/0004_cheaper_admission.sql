-- push-gateway schema, version 4: admit_delivery (0002) and admit_delivery_batch (0003) with the
-- same arguments, results, lock order and outcomes, but less work for PostgreSQL on the admitted
-- path, and the reservation and quota charge they both make in one internal function. Rationale
-- and measurements: docs/decisions/0260-cheaper-admission.md.
--
-- CREATE OR REPLACE keeps each function's owner and EXECUTE grants, so the runtime role keeps
-- calling them without a new grant, and a replica of the previous release calls the new bodies.

-- The §4.7 steps 4 and 6 of one admitted item: when the endpoint's quota window has room, reserve
-- (relay, request id) and charge the quota, and, given an event id, burn it (step 3). Returns
-- false, having written nothing, when the quota is exhausted or the reservation is held. Raises
-- PGW01 when a write after the reservation fails, so the statement rolls back and the gateway
-- refuses. The caller holds the installation lock, under which the endpoint's quota row changes
-- only by this function and a replay's burn is already committed (decision 0191).
CREATE FUNCTION admission_reserve_and_charge(
    p_relay_pubkey bytea, p_request_id uuid, p_request_expires_at bigint, p_endpoint_fingerprint bytea,
    p_now timestamptz, p_quota_window interval, p_quota_maximum bigint,
    p_auth_event_id bytea, p_replay_expires_at bigint
)
RETURNS boolean
LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    -- Step 4: the insert itself decides, since (relay, request id) is not serialized by the
    -- installation lock; an expired reservation (not yet reaped) is taken over. Step 6's check is
    -- part of it, so an exhausted quota writes nothing and costs no statement of its own.
    INSERT INTO delivery_reservations AS r (relay_pubkey, request_id, expires_at)
    SELECT p_relay_pubkey, p_request_id, to_timestamp(p_request_expires_at)
    WHERE NOT EXISTS (
        SELECT 1 FROM endpoint_quota_windows q
        WHERE q.endpoint_fingerprint = p_endpoint_fingerprint AND q.window_started_at + p_quota_window > p_now
          AND q.admitted_count >= p_quota_maximum)
    ON CONFLICT (relay_pubkey, request_id) DO UPDATE SET expires_at = EXCLUDED.expires_at
    WHERE r.expires_at < p_now;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    -- Step 6's charge: a fixed window that restarts at the first admission after it ended.
    INSERT INTO endpoint_quota_windows AS q (endpoint_fingerprint, window_started_at, admitted_count)
    VALUES (p_endpoint_fingerprint, p_now, 1)
    ON CONFLICT (endpoint_fingerprint) DO UPDATE SET
      window_started_at = CASE WHEN q.window_started_at + p_quota_window <= EXCLUDED.window_started_at
                          THEN EXCLUDED.window_started_at ELSE q.window_started_at END,
      admitted_count = CASE WHEN q.window_started_at + p_quota_window <= EXCLUDED.window_started_at
                       THEN 1 ELSE q.admitted_count + 1 END
    WHERE q.window_started_at + p_quota_window <= EXCLUDED.window_started_at
       OR q.admitted_count < p_quota_maximum;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'admission refused after a write' USING ERRCODE = 'PGW01';
    END IF;
    -- Step 3's burn, for a single delivery (a batch burns its event once, before its items).
    IF p_auth_event_id IS NOT NULL THEN
        INSERT INTO nip98_replays (relay_pubkey, auth_event_id, expires_at)
        VALUES (p_relay_pubkey, p_auth_event_id, to_timestamp(p_replay_expires_at))
        ON CONFLICT DO NOTHING;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'admission refused after a write' USING ERRCODE = 'PGW01';
        END IF;
    END IF;
    RETURN true;
END
$$;

-- Internal to the two admission functions: not for PUBLIC. SECURITY INVOKER functions check
-- EXECUTE on what they call against the caller, so every role that may call admit_delivery gets
-- it here, in this transaction; a replica of the previous release, already running as that role,
-- therefore never meets the new body without the grant. `migrate --runtime-role` grants it too.
REVOKE ALL ON FUNCTION admission_reserve_and_charge(bytea, uuid, bigint, bytea, timestamptz, interval, bigint,
    bytea, bigint) FROM PUBLIC;
DO $$
DECLARE
    v_role name;
BEGIN
    FOR v_role IN
        SELECT r.rolname FROM pg_proc p CROSS JOIN LATERAL aclexplode(p.proacl) a JOIN pg_roles r ON r.oid = a.grantee
        WHERE p.oid = 'admit_delivery(uuid, bytea, text, bigint, bigint, bytea, bigint, uuid, bigint, bigint, bigint, '
                      'bigint, bigint, bigint)'::regprocedure
          AND a.privilege_type = 'EXECUTE' AND NOT pg_has_role(r.oid, p.proowner, 'MEMBER')
    LOOP
        EXECUTE format('GRANT EXECUTE ON FUNCTION admission_reserve_and_charge(bytea, uuid, bigint, bytea, '
            'timestamptz, interval, bigint, bytea, bigint) TO %I', v_role);
    END LOOP;
END
$$;

-- §4.7 admission; arguments and outcomes as in migration 0002.
CREATE OR REPLACE FUNCTION admit_delivery(
    p_delegation_id uuid, p_relay_pubkey bytea, p_app_profile text, p_endpoint_epoch bigint,
    p_generation bigint, p_auth_event_id bytea, p_replay_expires_at bigint, p_request_id uuid,
    p_request_expires_at bigint, p_now bigint, p_quota_window_seconds bigint, p_quota_maximum bigint,
    p_deadline_unix_ms bigint, p_lock_timeout_ms bigint,
    OUT o_outcome text, OUT o_handle uuid, OUT o_encrypted_endpoint bytea, OUT o_dead_invalid_at bigint
)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_now timestamptz := to_timestamp(p_now);
    -- Milliseconds left until the deadline by this server's clock.
    v_left_ms double precision := p_deadline_unix_ms - extract(epoch FROM clock_timestamp()) * 1000;
    v_setting text;
    v_handle uuid;
    v_sealed_token bytea;
    v_fingerprint bytea;
    v_dead_epoch bigint;
    v_dead_at timestamptz;
BEGIN
    -- §1: work not begun when the 408 is sent never begins; time queued in a pooler counts.
    IF v_left_ms < 0 THEN
        o_outcome := 'late';
        RETURN;
    END IF;
    -- §12: no session setting survives a transaction-mode pooler, so the lock waits below are
    -- bounded for this transaction only, by the lock timeout (0: none) and the time left.
    v_setting := set_config('lock_timeout', greatest(1, least(
        CASE WHEN p_lock_timeout_ms > 0 THEN p_lock_timeout_ms ELSE 2147483647 END, ceil(v_left_ms)))::bigint::text,
        true);

    -- Step 1: the delegation's installation, live, unexpired, at the grant's epoch and profile.
    -- FOR UPDATE re-checks the conditions on the newest row version after waiting for a
    -- revocation or rotation, which lock in the same order (installation, then delegation).
    -- The profile test is written `IS TRUE` so it is no index condition: without statistics
    -- (a young table) the planner otherwise reads the partial index installations_live_endpoint,
    -- every live installation of the profile, instead of the one primary-key row (decision 0260).
    SELECT i.handle, i.encrypted_endpoint, i.endpoint_fingerprint, i.dead_endpoint_epoch,
           i.dead_endpoint_invalid_at
    INTO v_handle, v_sealed_token, v_fingerprint, v_dead_epoch, v_dead_at
    FROM installations i
    WHERE i.handle = (SELECT d.installation_handle FROM delegations d WHERE d.delegation_id = p_delegation_id)
      AND i.revoked_at IS NULL AND i.expires_at > v_now
      AND i.endpoint_epoch = p_endpoint_epoch AND (i.app_profile = p_app_profile) IS TRUE
    FOR UPDATE OF i;
    IF NOT FOUND THEN
        o_outcome := 'refused';
        RETURN;
    END IF;

    -- Step 2: the delegation row still carries exactly this grant and is in its time window.
    PERFORM 1 FROM delegations d
    WHERE d.installation_handle = v_handle AND d.relay_pubkey = p_relay_pubkey
      AND d.delegation_id = p_delegation_id AND d.endpoint_epoch = p_endpoint_epoch
      AND d.generation = p_generation AND d.revoked_at IS NULL
      AND d.not_before <= v_now AND d.expires_at >= v_now
    FOR UPDATE;
    IF NOT FOUND THEN
        o_outcome := 'refused';
        RETURN;
    END IF;

    -- The lock waits above may have used up the time.
    IF clock_timestamp() > to_timestamp(p_deadline_unix_ms / 1000.0) THEN
        o_outcome := 'late';
        RETURN;
    END IF;

    -- Step 5: a dead endpoint writes nothing. Steps 3 and 4 are still judged (a burned event or a
    -- live reservation is the same 404 as on a live endpoint), by reading only.
    IF v_dead_epoch = p_endpoint_epoch THEN
        IF EXISTS (
            SELECT 1 FROM nip98_replays r WHERE r.relay_pubkey = p_relay_pubkey AND r.auth_event_id = p_auth_event_id
        ) OR EXISTS (
            SELECT 1 FROM delivery_reservations r
            WHERE r.relay_pubkey = p_relay_pubkey AND r.request_id = p_request_id AND r.expires_at >= v_now
        ) THEN
            o_outcome := 'refused';
        ELSE
            o_outcome := 'dead';
            o_dead_invalid_at := floor(extract(epoch FROM v_dead_at))::bigint;
        END IF;
        RETURN;
    END IF;

    -- Steps 4, 6 and 3, without the separate replay and quota reads of migration 0002. A replay
    -- carries the same body, hence the same request id, so it is refused at the reservation
    -- without a write unless that reservation was released after a transient outcome; its burn
    -- then conflicts and rolls the admission back (decision 0260).
    IF NOT admission_reserve_and_charge(
        p_relay_pubkey, p_request_id, p_request_expires_at, v_fingerprint, v_now,
        make_interval(secs => p_quota_window_seconds), p_quota_maximum, p_auth_event_id, p_replay_expires_at)
    THEN
        o_outcome := 'refused';
        RETURN;
    END IF;

    o_outcome := 'admitted';
    o_handle := v_handle;
    o_encrypted_endpoint := v_sealed_token;
END
$$;

-- §4.8 batch admission; arguments, results and lock order as in migration 0003.
CREATE OR REPLACE FUNCTION admit_delivery_batch(
    p_relay_pubkey bytea, p_auth_event_id bytea, p_replay_expires_at bigint,
    p_delegation_ids uuid[], p_app_profiles text[], p_endpoint_epochs bigint[], p_generations bigint[],
    p_request_ids uuid[], p_request_expires_at bigint[],
    p_now bigint, p_quota_window_seconds bigint, p_quota_maximum bigint,
    p_deadline_unix_ms bigint, p_lock_timeout_ms bigint
)
RETURNS TABLE (o_item integer, o_outcome text, o_handle uuid, o_encrypted_endpoint bytea, o_dead_invalid_at bigint)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_now timestamptz := to_timestamp(p_now);
    v_window interval := make_interval(secs => p_quota_window_seconds);
    v_items integer := coalesce(cardinality(p_delegation_ids), 0);
    v_setting text;
    v_key integer;
    v_handle uuid;
    v_endpoint bytea;
    v_fingerprint bytea;
    v_dead_epoch bigint;
    v_dead_at timestamptz;
BEGIN
    -- The lock waits below are bounded for this transaction only (§12), as in admit_delivery (at
    -- least 1 ms, so a request already late fails its first wait at once).
    v_setting := set_config('lock_timeout', greatest(1, least(
        CASE WHEN p_lock_timeout_ms > 0 THEN p_lock_timeout_ms ELSE 2147483647 END,
        ceil(p_deadline_unix_ms - extract(epoch FROM clock_timestamp()) * 1000)))::bigint::text, true);

    -- §4.8: every installation row of the batch, then every delegation row, each set in ascending
    -- key order, so no cycle of waits can form with single deliveries, revocations and rotations.
    -- The rows are re-read per item below; a plain read after the lock sees the newest version.
    PERFORM 1 FROM installations i
    WHERE i.handle IN (SELECT d.installation_handle FROM delegations d WHERE d.delegation_id = ANY (p_delegation_ids))
    ORDER BY i.handle
    FOR UPDATE OF i;
    PERFORM 1 FROM delegations d
    WHERE d.delegation_id = ANY (p_delegation_ids)
    ORDER BY d.installation_handle, d.relay_pubkey
    FOR UPDATE OF d;
    -- Two batches inserting the same two request ids in opposite orders would deadlock: a
    -- transaction-level advisory lock per (relay, request id), in ascending key order, orders them.
    FOR v_key IN
        SELECT DISTINCT hashtext(encode(p_relay_pubkey, 'hex') || r.id::text)
        FROM unnest(p_request_ids) AS r(id) ORDER BY 1
    LOOP
        PERFORM pg_advisory_xact_lock(17, v_key);
    END LOOP;

    -- §1, judged after the lock waits: 'late' for every item and nothing written.
    o_outcome := CASE WHEN clock_timestamp() > to_timestamp(p_deadline_unix_ms / 1000.0) THEN 'late' END;
    IF o_outcome IS NULL THEN
        -- The burn, once for the batch; it stays whenever the transaction commits.
        INSERT INTO nip98_replays (relay_pubkey, auth_event_id, expires_at)
        VALUES (p_relay_pubkey, p_auth_event_id, to_timestamp(p_replay_expires_at))
        ON CONFLICT DO NOTHING;
        o_outcome := CASE WHEN NOT FOUND THEN 'refused' END;
    END IF;
    IF o_outcome IS NOT NULL THEN
        RETURN QUERY SELECT s.i, o_outcome, NULL::uuid, NULL::bytea, NULL::bigint FROM generate_series(1, v_items) AS s(i);
        RETURN;
    END IF;

    -- The items in request order; one that fails a check writes nothing and the next goes on.
    FOR v_item IN 1 .. v_items LOOP
        o_item := v_item;
        o_outcome := 'refused';
        o_handle := NULL;
        o_encrypted_endpoint := NULL;
        o_dead_invalid_at := NULL;

        -- §4.7 steps 1–2 on the locked rows; the profile test as in admit_delivery, so the
        -- installation is found by its primary key.
        SELECT i.handle, i.encrypted_endpoint, i.endpoint_fingerprint, i.dead_endpoint_epoch,
               i.dead_endpoint_invalid_at
        INTO v_handle, v_endpoint, v_fingerprint, v_dead_epoch, v_dead_at
        FROM delegations d JOIN installations i ON i.handle = d.installation_handle
        WHERE d.delegation_id = p_delegation_ids[v_item] AND d.relay_pubkey = p_relay_pubkey
          AND d.endpoint_epoch = p_endpoint_epochs[v_item] AND d.generation = p_generations[v_item]
          AND d.revoked_at IS NULL AND d.not_before <= v_now AND d.expires_at >= v_now
          AND i.revoked_at IS NULL AND i.expires_at > v_now
          AND i.endpoint_epoch = p_endpoint_epochs[v_item] AND (i.app_profile = p_app_profiles[v_item]) IS TRUE;
        IF NOT FOUND THEN
            NULL;
        ELSIF v_dead_epoch = p_endpoint_epochs[v_item] THEN
            -- Step 5: a dead endpoint writes nothing; a live reservation is still the same 404.
            IF NOT EXISTS (
                SELECT 1 FROM delivery_reservations r
                WHERE r.relay_pubkey = p_relay_pubkey AND r.request_id = p_request_ids[v_item]
                  AND r.expires_at >= v_now
            ) THEN
                o_outcome := 'dead';
                o_dead_invalid_at := floor(extract(epoch FROM v_dead_at))::bigint;
            END IF;
        ELSIF admission_reserve_and_charge(
            p_relay_pubkey, p_request_ids[v_item], p_request_expires_at[v_item], v_fingerprint, v_now, v_window,
            p_quota_maximum, NULL, NULL)
        THEN
            -- Earlier items of this batch are visible to the next item's checks.
            o_outcome := 'admitted';
            o_handle := v_handle;
            o_encrypted_endpoint := v_endpoint;
        END IF;
        RETURN NEXT;
    END LOOP;
END
$$;
