-- push-gateway schema, version 3: the PROTOCOL.md §4.8 batch admission as one server-side function,
-- so up to 100 deliveries signed by one NIP-98 event are admitted in one transaction and one round
-- trip. Rationale and the lock order: docs/decisions/0220-batch-admission-function.md.
--
-- Called as a single statement outside any explicit transaction, like admit_delivery (migration
-- 0002): the call is the transaction and its commit is the instant the sends may begin.
-- SECURITY INVOKER (the default); `migrate` grants the runtime role EXECUTE and nothing more.
--
-- The item arrays are parallel, one element per item the gateway's own checks let through, in
-- request order. One row per item comes back, o_item counting from 1, with admit_delivery's
-- outcomes: 'admitted' (o_handle, o_encrypted_endpoint set; request reserved, quota charged),
-- 'refused', 'dead' (nothing written for the item, o_dead_invalid_at set) or 'late' (every item:
-- the deadline had passed by this server's clock and nothing was written).
CREATE FUNCTION admit_delivery_batch(
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
    v_deadline timestamptz := to_timestamp(p_deadline_unix_ms / 1000.0);
    v_window interval := make_interval(secs => p_quota_window_seconds);
    v_items integer := coalesce(cardinality(p_delegation_ids), 0);
    v_key integer;
    v_handle uuid;
    v_endpoint bytea;
    v_fingerprint bytea;
    v_dead_epoch bigint;
    v_dead_at timestamptz;
BEGIN
    -- The lock waits below are bounded for this transaction only (§12: no session state), as in
    -- admit_delivery: by the lock timeout and by the time left until the deadline (at least 1 ms,
    -- so a request already late fails its first wait at once).
    PERFORM set_config('lock_timeout', greatest(1, least(
        CASE WHEN p_lock_timeout_ms > 0 THEN p_lock_timeout_ms ELSE 2147483647 END,
        ceil(extract(epoch FROM v_deadline - clock_timestamp()) * 1000)))::bigint::text, true);

    -- §4.8: every installation row of the batch, then every delegation row, each set in ascending
    -- key order. A single delivery, a revocation and a rotation hold at most one installation and
    -- take it before its delegation, so no cycle of waits can form. The rows are re-read per item
    -- below; a plain read after the lock sees the newest committed version.
    PERFORM 1 FROM installations i
    WHERE i.handle IN (SELECT d.installation_handle FROM delegations d WHERE d.delegation_id = ANY (p_delegation_ids))
    ORDER BY i.handle
    FOR UPDATE OF i;
    PERFORM 1 FROM delegations d
    WHERE d.delegation_id = ANY (p_delegation_ids)
    ORDER BY d.installation_handle, d.relay_pubkey
    FOR UPDATE OF d;
    -- Reservations are not covered by the installation locks (a relay may use one request id for
    -- several installations), and two batches inserting the same two ids in opposite orders would
    -- deadlock. A transaction-level advisory lock per (relay, request id), taken in ascending key
    -- order, orders them; single deliveries need none, since they wait on nothing after reserving.
    FOR v_key IN
        SELECT DISTINCT hashtext(encode(p_relay_pubkey, 'hex') || r.id::text)
        FROM unnest(p_request_ids) AS r(id) ORDER BY 1
    LOOP
        PERFORM pg_advisory_xact_lock(17, v_key);
    END LOOP;

    -- §1: work not begun when the 408 is sent never begins (judged by this server's clock, after
    -- the lock waits): 'late' for every item and nothing written.
    o_outcome := CASE WHEN clock_timestamp() > v_deadline THEN 'late' END;
    IF o_outcome IS NULL THEN
        -- The burn, once for the batch. A concurrent use of the same event waits on this insert
        -- and then finds it; the burn stays whenever the transaction commits, even if no item is
        -- admitted.
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

        -- §4.7 steps 1–2 on the locked rows.
        SELECT i.handle, i.encrypted_endpoint, i.endpoint_fingerprint, i.dead_endpoint_epoch,
               i.dead_endpoint_invalid_at
        INTO v_handle, v_endpoint, v_fingerprint, v_dead_epoch, v_dead_at
        FROM delegations d JOIN installations i ON i.handle = d.installation_handle
        WHERE d.delegation_id = p_delegation_ids[v_item] AND d.relay_pubkey = p_relay_pubkey
          AND d.endpoint_epoch = p_endpoint_epochs[v_item] AND d.generation = p_generations[v_item]
          AND d.revoked_at IS NULL AND d.not_before <= v_now AND d.expires_at >= v_now
          AND i.revoked_at IS NULL AND i.expires_at > v_now
          AND i.endpoint_epoch = p_endpoint_epochs[v_item] AND i.app_profile = p_app_profiles[v_item];
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
        ELSIF NOT EXISTS (
            -- Step 6 checked before anything is written: the quota row changes only under the
            -- installation lock held here, and earlier items of this batch are visible.
            SELECT 1 FROM endpoint_quota_windows q
            WHERE q.endpoint_fingerprint = v_fingerprint AND q.window_started_at + v_window > v_now
              AND q.admitted_count >= p_quota_maximum
        ) THEN
            -- Step 4, the item's first write, decides by itself (an expired reservation is taken
            -- over).
            INSERT INTO delivery_reservations AS r (relay_pubkey, request_id, expires_at)
            VALUES (p_relay_pubkey, p_request_ids[v_item], to_timestamp(p_request_expires_at[v_item]))
            ON CONFLICT (relay_pubkey, request_id) DO UPDATE SET expires_at = EXCLUDED.expires_at
            WHERE r.expires_at < v_now;
            IF FOUND THEN
                -- Step 6's charge, which the check above guarantees. Should it ever fail, raising
                -- rolls the whole batch back and the gateway refuses every item.
                INSERT INTO endpoint_quota_windows AS q (endpoint_fingerprint, window_started_at, admitted_count)
                VALUES (v_fingerprint, v_now, 1)
                ON CONFLICT (endpoint_fingerprint) DO UPDATE SET
                  window_started_at = CASE WHEN q.window_started_at + v_window <= EXCLUDED.window_started_at
                                      THEN EXCLUDED.window_started_at ELSE q.window_started_at END,
                  admitted_count = CASE WHEN q.window_started_at + v_window <= EXCLUDED.window_started_at
                                   THEN 1 ELSE q.admitted_count + 1 END
                WHERE q.window_started_at + v_window <= EXCLUDED.window_started_at
                   OR q.admitted_count < p_quota_maximum;
                IF NOT FOUND THEN
                    RAISE EXCEPTION 'admission refused after a write' USING ERRCODE = 'PGW01';
                END IF;
                o_outcome := 'admitted';
                o_handle := v_handle;
                o_encrypted_endpoint := v_endpoint;
            END IF;
        END IF;
        RETURN NEXT;
    END LOOP;
END
$$;

-- Functions are executable by PUBLIC by default; only the runtime role, granted by `migrate`, may
-- call this one.
REVOKE ALL ON FUNCTION admit_delivery_batch(bytea, bytea, bigint, uuid[], text[], bigint[], bigint[], uuid[],
    bigint[], bigint, bigint, bigint, bigint, bigint) FROM PUBLIC;
