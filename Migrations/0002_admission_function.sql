-- push-gateway schema, version 2: the PROTOCOL.md §4.7 admission as one server-side function, so
-- an admission is one round trip and its statements keep their plans in the session's PL/pgSQL
-- plan cache (which also works through a transaction-mode pooler). Rationale and the order of the
-- checks: docs/decisions/0191-admission-function.md.
--
-- Called as a single statement outside any explicit transaction: the call is the transaction, and
-- its commit is the instant the send may begin. SECURITY INVOKER (the default): it runs with the
-- runtime role's own DML rights; `migrate` grants that role EXECUTE and nothing more.
--
-- o_outcome: 'admitted' (o_handle, o_encrypted_endpoint set only then; event burned, request reserved, quota
-- charged), 'refused' (nothing written), 'dead' (step 5: nothing written, o_dead_invalid_at set)
-- or 'late' (the request's deadline had passed by this server's clock: nothing written).
CREATE FUNCTION admit_delivery(
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
    v_deadline timestamptz := to_timestamp(p_deadline_unix_ms / 1000.0);
    v_window interval := make_interval(secs => p_quota_window_seconds);
    v_handle uuid;
    v_sealed_token bytea;
    v_fingerprint bytea;
    v_dead_epoch bigint;
    v_dead_at timestamptz;
    v_window_started timestamptz;
    v_count integer;
BEGIN
    -- §1: work not begun when the 408 is sent never begins. Judged by this server's clock, so
    -- time spent queued in a pooler counts.
    IF clock_timestamp() > v_deadline THEN
        o_outcome := 'late';
        RETURN;
    END IF;
    -- No session setting survives a transaction-mode pooler (§12), so the lock waits below are
    -- bounded here, for this transaction only: by the gateway's lock timeout (0: none) and by the
    -- time left until the deadline.
    PERFORM set_config('lock_timeout', greatest(1, least(
        CASE WHEN p_lock_timeout_ms > 0 THEN p_lock_timeout_ms ELSE 2147483647 END,
        ceil(extract(epoch FROM v_deadline - clock_timestamp()) * 1000)))::bigint::text, true);

    -- Step 1: the delegation's installation, live, unexpired, at the grant's epoch and profile.
    -- FOR UPDATE re-checks the conditions on the newest row version after waiting for a
    -- revocation or rotation, which lock in the same order (installation, then delegation).
    SELECT i.handle, i.encrypted_endpoint, i.endpoint_fingerprint, i.dead_endpoint_epoch,
           i.dead_endpoint_invalid_at
    INTO v_handle, v_sealed_token, v_fingerprint, v_dead_epoch, v_dead_at
    FROM installations i
    WHERE i.handle = (SELECT d.installation_handle FROM delegations d WHERE d.delegation_id = p_delegation_id)
      AND i.revoked_at IS NULL AND i.expires_at > v_now
      AND i.endpoint_epoch = p_endpoint_epoch AND i.app_profile = p_app_profile
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
    IF clock_timestamp() > v_deadline THEN
        o_outcome := 'late';
        RETURN;
    END IF;

    -- Step 3, checked before anything is written: an event id signs one body, hence one grant and
    -- one installation, so every use of it waits for the lock held here and sees the burn of any
    -- use that committed first.
    PERFORM 1 FROM nip98_replays r WHERE r.relay_pubkey = p_relay_pubkey AND r.auth_event_id = p_auth_event_id;
    IF FOUND THEN
        o_outcome := 'refused';
        RETURN;
    END IF;

    -- Step 5: a dead endpoint writes nothing. Step 4 is still judged (a live reservation is the
    -- same 404 as on a live endpoint), without reserving.
    IF v_dead_epoch = p_endpoint_epoch THEN
        PERFORM 1 FROM delivery_reservations r
        WHERE r.relay_pubkey = p_relay_pubkey AND r.request_id = p_request_id AND r.expires_at >= v_now;
        IF FOUND THEN
            o_outcome := 'refused';
        ELSE
            o_outcome := 'dead';
            o_dead_invalid_at := floor(extract(epoch FROM v_dead_at))::bigint;
        END IF;
        RETURN;
    END IF;

    -- Step 6, checked before anything is written: one live installation holds a fingerprint, so
    -- its quota row changes only under the lock held here.
    SELECT q.window_started_at, q.admitted_count INTO v_window_started, v_count
    FROM endpoint_quota_windows q WHERE q.endpoint_fingerprint = v_fingerprint;
    IF FOUND AND v_window_started + v_window > v_now AND v_count >= p_quota_maximum THEN
        o_outcome := 'refused';
        RETURN;
    END IF;

    -- Step 4, the first write: `(relay, request_id)` is not serialized by the installation lock
    -- (one relay may use a request id for several installations), so the insert itself decides.
    -- A reservation whose time has passed (not yet reaped) no longer counts and is taken over.
    INSERT INTO delivery_reservations AS r (relay_pubkey, request_id, expires_at)
    VALUES (p_relay_pubkey, p_request_id, to_timestamp(p_request_expires_at))
    ON CONFLICT (relay_pubkey, request_id) DO UPDATE SET expires_at = EXCLUDED.expires_at
    WHERE r.expires_at < v_now;
    IF NOT FOUND THEN
        o_outcome := 'refused';
        RETURN;
    END IF;

    -- Step 3's burn. The check above ran under the installation lock, so this cannot conflict; if
    -- it ever did, raising rolls the reservation back and the caller refuses.
    INSERT INTO nip98_replays (relay_pubkey, auth_event_id, expires_at)
    VALUES (p_relay_pubkey, p_auth_event_id, to_timestamp(p_replay_expires_at))
    ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'admission refused after a write' USING ERRCODE = 'PGW01';
    END IF;

    -- Step 6's charge: a fixed window that restarts at the first admission after it ended.
    INSERT INTO endpoint_quota_windows AS q (endpoint_fingerprint, window_started_at, admitted_count)
    VALUES (v_fingerprint, v_now, 1)
    ON CONFLICT (endpoint_fingerprint) DO UPDATE SET
      window_started_at = CASE WHEN q.window_started_at + v_window <= EXCLUDED.window_started_at
                          THEN EXCLUDED.window_started_at ELSE q.window_started_at END,
      admitted_count = CASE WHEN q.window_started_at + v_window <= EXCLUDED.window_started_at
                       THEN 1 ELSE q.admitted_count + 1 END
    WHERE q.window_started_at + v_window <= EXCLUDED.window_started_at OR q.admitted_count < p_quota_maximum;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'admission refused after a write' USING ERRCODE = 'PGW01';
    END IF;

    o_outcome := 'admitted';
    o_handle := v_handle;
    o_encrypted_endpoint := v_sealed_token;
END
$$;

-- Functions are executable by PUBLIC by default; only the runtime role, granted by `migrate`, may
-- call this one.
REVOKE ALL ON FUNCTION admit_delivery(uuid, bytea, text, bigint, bigint, bytea, bigint, uuid, bigint, bigint,
    bigint, bigint, bigint, bigint) FROM PUBLIC;
