-- push-gateway schema, version 6: a batch that admits nothing writes nothing, and every gateway
-- function resolves names in the gateway's schema whoever calls it. Rationale:
-- docs/decisions/0340-admitting-batch-burns.md and 0342-pinned-search-path-and-no-temp.md.
--
-- 1. admit_delivery_batch (0005) with the same arguments, results, lock order and per-item
--    outcomes, but the NIP-98 event is burned only when at least one item is admitted; before
--    the items it is only read (an event already burned still refuses every item). A relay can
--    no longer grow nip98_replays with batches to dead endpoints or revoked delegations
--    (docs/protocol.md §4.8).
-- 2. Each function's search_path is pinned to pg_catalog, the schema this migration runs in, and
--    pg_temp last, so neither a caller's search_path (a schema named like the runtime role comes
--    first in the default "$user", public) nor a temporary table can change which tables and
--    functions its body uses.
-- 3. PUBLIC loses TEMPORARY on this database, so the runtime role cannot create temporary
--    tables (readiness checks it, decision 0182). Only this database's ACL changes; the owner and
--    superusers keep TEMPORARY.
--
-- CREATE OR REPLACE keeps the owner and the EXECUTE grant, so the runtime role keeps calling the
-- batch function without a new grant, and a replica of the previous release calls the new body.
-- It replaces the function's settings too, so the pins come after it.

-- §4.8 batch admission; arguments, results and lock order as in migration 0003, the body as in 0005
-- but for the burn.
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
    -- Per item, in request order (NULL handle: the item fails steps 1–2).
    v_handles uuid[];
    v_endpoints bytea[];
    v_fingerprints bytea[];
    v_dead boolean[];
    -- Per dead item: a live reservation of its request id existed before this batch wrote any.
    v_held boolean[];
    v_dead_at bigint[];
    -- The items that passed steps 1–2 on a live endpoint, in request order.
    v_candidates integer[];
    -- No request id twice and room in every endpoint's quota for all its candidates.
    v_independent boolean;
    v_group integer[];
    v_reserved integer[];
    v_admitted integer[] := '{}';
    v_charged boolean;
BEGIN
    -- The lock waits below are bounded for this transaction only (§12), as in admit_delivery (at
    -- least 1 ms, so a request already late fails its first wait at once).
    v_setting := set_config('lock_timeout', greatest(1, least(
        CASE WHEN p_lock_timeout_ms > 0 THEN p_lock_timeout_ms ELSE 2147483647 END,
        ceil(p_deadline_unix_ms - extract(epoch FROM clock_timestamp()) * 1000)))::bigint::text, true);

    -- §4.8: every installation row of the batch, then every delegation row, each set in ascending
    -- key order, so no cycle of waits can form with single deliveries, revocations and rotations.
    -- Nothing else writes them until this transaction ends, so one read below serves every item.
    -- The ids as a subquery, not `= ANY (array)`: where the planner scans a small table, `= ANY`
    -- compares every row with every id, the semi-join hashes them (decision 0310).
    PERFORM 1 FROM installations i
    WHERE i.handle IN (SELECT d.installation_handle FROM delegations d
                       WHERE d.delegation_id IN (SELECT unnest(p_delegation_ids)))
    ORDER BY i.handle
    FOR UPDATE OF i;
    PERFORM 1 FROM delegations d
    WHERE d.delegation_id IN (SELECT unnest(p_delegation_ids))
    ORDER BY d.installation_handle, d.relay_pubkey
    FOR UPDATE OF d;
    -- Two batches inserting the same two request ids in opposite orders would deadlock: a
    -- transaction-level advisory lock per (relay, request id), in ascending key order (the sorted
    -- subquery is scanned in order, so one statement takes them one after another).
    PERFORM pg_advisory_xact_lock(17, k.key)
    FROM (SELECT DISTINCT hashtext(encode(p_relay_pubkey, 'hex') || r.id::text) AS key
          FROM unnest(p_request_ids) AS r(id) ORDER BY 1) AS k;

    -- §1, judged after the lock waits: 'late' for every item and nothing written. §4.8: an event
    -- already burned refuses every item, judged by reading; the burn itself waits for an admitted
    -- item (below).
    o_outcome := CASE
        WHEN clock_timestamp() > to_timestamp(p_deadline_unix_ms / 1000.0) THEN 'late'
        WHEN EXISTS (SELECT 1 FROM nip98_replays r
                     WHERE r.relay_pubkey = p_relay_pubkey AND r.auth_event_id = p_auth_event_id) THEN 'refused'
    END;
    IF o_outcome IS NOT NULL THEN
        RETURN QUERY SELECT s.i, o_outcome, NULL::uuid, NULL::bytea, NULL::bigint FROM generate_series(1, v_items) AS s(i);
        RETURN;
    END IF;

    -- §4.7 steps 1–2 for every item in one statement, each item's rows found by their keys (LIMIT
    -- keeps the lookup per item, so a young table's statistics cannot turn it into a join of
    -- whole tables; the profile test as in admit_delivery). Also step 5's reservation read for a
    -- dead endpoint, and whether the items are independent: then no item's reservation or charge
    -- can change another's outcome, and the order of the writes does not matter.
    WITH items AS (
        SELECT x.n, m.handle, m.encrypted_endpoint, m.endpoint_fingerprint, coalesce(m.dead, false) AS dead,
               m.held, m.dead_at
        FROM generate_series(1, v_items) AS x(n)
        LEFT JOIN LATERAL (
            SELECT i.handle, i.encrypted_endpoint, i.endpoint_fingerprint,
                   i.dead_endpoint_epoch = i.endpoint_epoch AS dead,
                   CASE WHEN i.dead_endpoint_epoch = i.endpoint_epoch THEN EXISTS (
                       SELECT 1 FROM delivery_reservations r
                       WHERE r.relay_pubkey = p_relay_pubkey AND r.request_id = p_request_ids[x.n]
                         AND r.expires_at >= v_now) END AS held,
                   floor(extract(epoch FROM i.dead_endpoint_invalid_at))::bigint AS dead_at
            FROM delegations d JOIN installations i ON i.handle = d.installation_handle
            WHERE d.delegation_id = p_delegation_ids[x.n] AND d.relay_pubkey = p_relay_pubkey
              AND d.endpoint_epoch = p_endpoint_epochs[x.n] AND d.generation = p_generations[x.n]
              AND d.revoked_at IS NULL AND d.not_before <= v_now AND d.expires_at >= v_now
              AND i.revoked_at IS NULL AND i.expires_at > v_now
              AND i.endpoint_epoch = p_endpoint_epochs[x.n] AND (i.app_profile = p_app_profiles[x.n]) IS TRUE
            LIMIT 1
        ) AS m ON true
    )
    SELECT array_agg(t.handle ORDER BY t.n), array_agg(t.encrypted_endpoint ORDER BY t.n),
           array_agg(t.endpoint_fingerprint ORDER BY t.n), array_agg(t.dead ORDER BY t.n),
           array_agg(t.held ORDER BY t.n), array_agg(t.dead_at ORDER BY t.n),
           coalesce(array_agg(t.n ORDER BY t.n) FILTER (WHERE t.handle IS NOT NULL AND NOT t.dead), '{}'),
           count(DISTINCT p_request_ids[t.n]) = v_items AND coalesce((
               SELECT bool_and(g.k + coalesce(q.admitted_count, 0) <= p_quota_maximum)
               FROM (SELECT c.endpoint_fingerprint AS f, count(*) AS k FROM items c
                     WHERE c.handle IS NOT NULL AND NOT c.dead GROUP BY 1) AS g
               LEFT JOIN endpoint_quota_windows q
                 ON q.endpoint_fingerprint = g.f AND q.window_started_at + v_window > v_now), true)
    INTO v_handles, v_endpoints, v_fingerprints, v_dead, v_held, v_dead_at, v_candidates, v_independent
    FROM items t;

    -- Steps 4 and 6: all candidates in one group when independent, else one group per candidate
    -- in request order, so earlier items are visible to later ones (the quota shared in request
    -- order, a request id twice). A failing candidate writes nothing and the others go on.
    FOR v_step IN 1 .. CASE WHEN v_independent THEN least(1, cardinality(v_candidates))
                       ELSE cardinality(v_candidates) END LOOP
        v_group := CASE WHEN v_independent THEN v_candidates ELSE v_candidates[v_step:v_step] END;
        -- The reservation decides by itself (an expired one is taken over); an exhausted quota,
        -- which an independent group cannot meet, writes nothing.
        WITH reserved AS (
            INSERT INTO delivery_reservations AS r (relay_pubkey, request_id, expires_at)
            SELECT p_relay_pubkey, p_request_ids[c.n], to_timestamp(p_request_expires_at[c.n])
            FROM unnest(v_group) AS c(n)
            WHERE v_independent OR NOT EXISTS (
                SELECT 1 FROM endpoint_quota_windows q
                WHERE q.endpoint_fingerprint = v_fingerprints[c.n] AND q.window_started_at + v_window > v_now
                  AND q.admitted_count >= p_quota_maximum)
            ORDER BY c.n
            ON CONFLICT (relay_pubkey, request_id) DO UPDATE SET expires_at = EXCLUDED.expires_at
            WHERE r.expires_at < v_now
            RETURNING r.request_id
        )
        SELECT coalesce(array_agg(c.n ORDER BY c.n), '{}') INTO v_reserved
        FROM unnest(v_group) AS c(n) JOIN reserved w ON w.request_id = p_request_ids[c.n];
        CONTINUE WHEN cardinality(v_reserved) = 0;
        -- Step 6's charge of the reserved items, per endpoint: a fixed window that restarts at the
        -- first admission after it ended. Should it ever fail against the checks, raising rolls
        -- the whole batch back and the gateway refuses every item.
        WITH wanted AS (
            SELECT v_fingerprints[c.n] AS f, count(*) AS k FROM unnest(v_reserved) AS c(n) GROUP BY 1
        ), charged AS (
            INSERT INTO endpoint_quota_windows AS q (endpoint_fingerprint, window_started_at, admitted_count)
            SELECT w.f, v_now, w.k FROM wanted w
            ON CONFLICT (endpoint_fingerprint) DO UPDATE SET
              window_started_at = CASE WHEN q.window_started_at + v_window <= EXCLUDED.window_started_at
                                  THEN EXCLUDED.window_started_at ELSE q.window_started_at END,
              admitted_count = CASE WHEN q.window_started_at + v_window <= EXCLUDED.window_started_at
                               THEN EXCLUDED.admitted_count ELSE q.admitted_count + EXCLUDED.admitted_count END
            WHERE q.window_started_at + v_window <= EXCLUDED.window_started_at
               OR q.admitted_count + EXCLUDED.admitted_count <= p_quota_maximum
            RETURNING 1
        )
        SELECT (SELECT count(*) FROM charged) = (SELECT count(*) FROM wanted) INTO v_charged;
        IF NOT v_charged THEN
            RAISE EXCEPTION 'admission refused after a write' USING ERRCODE = 'PGW01';
        END IF;
        v_admitted := v_admitted || v_reserved;
    END LOOP;

    -- §4.8: the burn, once, and only when an item was admitted, so a batch that admits nothing
    -- writes nothing. Another batch with this event carries the same body, hence the same request
    -- ids, so the advisory locks above made it commit before the read; should the burn conflict
    -- all the same, raising rolls the whole batch back and the gateway refuses every item.
    IF cardinality(v_admitted) > 0 THEN
        INSERT INTO nip98_replays (relay_pubkey, auth_event_id, expires_at)
        VALUES (p_relay_pubkey, p_auth_event_id, to_timestamp(p_replay_expires_at))
        ON CONFLICT DO NOTHING;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'admission refused after a write' USING ERRCODE = 'PGW01';
        END IF;
    END IF;

    -- Step 5: a dead endpoint writes nothing; a live reservation, also one an earlier item of this
    -- batch made, is still the same 404.
    RETURN QUERY
    SELECT x.n, s.outcome, CASE WHEN s.outcome = 'admitted' THEN v_handles[x.n] END,
           CASE WHEN s.outcome = 'admitted' THEN v_endpoints[x.n] END,
           CASE WHEN s.outcome = 'dead' THEN v_dead_at[x.n] END
    FROM generate_series(1, v_items) AS x(n)
    CROSS JOIN LATERAL (SELECT CASE
        WHEN x.n = ANY (v_admitted) THEN 'admitted'
        WHEN v_dead[x.n] AND NOT v_held[x.n] AND NOT EXISTS (
            SELECT 1 FROM unnest(v_admitted) AS j(n)
            WHERE j.n < x.n AND p_request_ids[j.n] = p_request_ids[x.n] AND p_request_expires_at[j.n] >= p_now)
        THEN 'dead'
        ELSE 'refused' END AS outcome) AS s;
END
$$;

DO $$
BEGIN
    EXECUTE format('ALTER FUNCTION admit_delivery(uuid, bytea, text, bigint, bigint, bytea, bigint, uuid, bigint, '
        'bigint, bigint, bigint, bigint, bigint) SET search_path = pg_catalog, %I, pg_temp', current_schema());
    EXECUTE format('ALTER FUNCTION admission_reserve_and_charge(bytea, uuid, bigint, bytea, timestamptz, interval, '
        'bigint, bytea, bigint) SET search_path = pg_catalog, %I, pg_temp', current_schema());
    EXECUTE format('ALTER FUNCTION admit_delivery_batch(bytea, bytea, bigint, uuid[], text[], bigint[], bigint[], '
        'uuid[], bigint[], bigint, bigint, bigint, bigint, bigint) SET search_path = pg_catalog, %I, pg_temp',
        current_schema());
    EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', current_database());
END
$$;
