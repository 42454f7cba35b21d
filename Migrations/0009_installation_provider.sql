-- push-gateway schema, version 9: each installation stores its provider, and the admission returns
-- it (docs/protocol.md "Platforms and providers", §4.2a, §4.7; docs/decisions/0820-installation-provider.md).
-- An expand step (Migrations/README.md): nothing the previous release reads or writes changes.
--
-- 1. provider: the push service the installation is woken through, an open lowercase name
--    (`apns`, `fcm`, `webpush`, …). Existing rows are backfilled from their platform (ios → apns,
--    android → fcm: the only providers before this version).
-- 2. A row inserted without a provider (by the previous release, or by a writer that leaves the
--    choice to the platform) gets its platform's default by a BEFORE INSERT trigger, so the
--    column is NOT NULL from this version on without a default the previous release must know.
-- 3. admit_delivery_with_provider and admit_delivery_batch_with_provider: the same arguments and
--    the same decisions as admit_delivery and admit_delivery_batch, plus each admitted
--    installation's provider. The old functions stay for the previous release; a contract step
--    drops them one release later.

ALTER TABLE installations
    ADD COLUMN provider text CHECK (provider COLLATE "C" ~ '^[a-z][a-z0-9_-]{0,31}$');

UPDATE installations SET provider = CASE platform WHEN 'ios' THEN 'apns' WHEN 'android' THEN 'fcm' END;

CREATE FUNCTION installations_default_provider() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    IF NEW.provider IS NULL THEN
        NEW.provider := CASE NEW.platform WHEN 'ios' THEN 'apns' WHEN 'android' THEN 'fcm' END;
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER installations_default_provider BEFORE INSERT ON installations
    FOR EACH ROW EXECUTE FUNCTION installations_default_provider();

-- After the backfill, and checked after the BEFORE INSERT trigger has run, so it holds for every
-- writer.
ALTER TABLE installations ALTER COLUMN provider SET NOT NULL;

-- §4.7 admission with the admitted installation's provider: admit_delivery's body as migration
-- 0004 left it, unchanged but for o_provider, which step 1's read fills from the locked row (set
-- only with 'admitted', like o_handle). A copy rather than a call of admit_delivery: the call
-- cost about 35 µs of PostgreSQL CPU per admission more, the copy less than the noise between runs
-- (decision 0820). AdmissionWithProviderEquivalenceTests runs both on random states.
CREATE FUNCTION admit_delivery_with_provider(
    p_delegation_id uuid, p_relay_pubkey bytea, p_app_profile text, p_endpoint_epoch bigint,
    p_generation bigint, p_auth_event_id bytea, p_replay_expires_at bigint, p_request_id uuid,
    p_request_expires_at bigint, p_now bigint, p_quota_window_seconds bigint, p_quota_maximum bigint,
    p_deadline_unix_ms bigint, p_lock_timeout_ms bigint,
    OUT o_outcome text, OUT o_handle uuid, OUT o_encrypted_endpoint bytea, OUT o_dead_invalid_at bigint,
    OUT o_provider text
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
    v_provider text;
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
           i.dead_endpoint_invalid_at, i.provider
    INTO v_handle, v_sealed_token, v_fingerprint, v_dead_epoch, v_dead_at, v_provider
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
    o_provider := v_provider;
END
$$;

-- §4.8 batch admission with each admitted installation's provider; arguments, rows and outcomes as
-- admit_delivery_batch (migrations 0003, 0006), which it calls, one row per item in request order.
-- A call rather than a copy: per item it costs one primary-key read, within the noise of the
-- measurement (decision 0820). The provider is read only for an admitted item (o_handle is set
-- only then), with the statement's snapshot: the installation was committed before the delegation
-- the grant names, hence before this call, and no statement changes a provider.
CREATE FUNCTION admit_delivery_batch_with_provider(
    p_relay_pubkey bytea, p_auth_event_id bytea, p_replay_expires_at bigint,
    p_delegation_ids uuid[], p_app_profiles text[], p_endpoint_epochs bigint[], p_generations bigint[],
    p_request_ids uuid[], p_request_expires_at bigint[],
    p_now bigint, p_quota_window_seconds bigint, p_quota_maximum bigint,
    p_deadline_unix_ms bigint, p_lock_timeout_ms bigint
)
RETURNS TABLE (o_item integer, o_outcome text, o_handle uuid, o_encrypted_endpoint bytea, o_dead_invalid_at bigint,
               o_provider text)
LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    RETURN QUERY
    SELECT b.o_item, b.o_outcome, b.o_handle, b.o_encrypted_endpoint, b.o_dead_invalid_at,
           (SELECT i.provider FROM installations i WHERE i.handle = b.o_handle)
    FROM admit_delivery_batch(
        p_relay_pubkey, p_auth_event_id, p_replay_expires_at, p_delegation_ids, p_app_profiles, p_endpoint_epochs,
        p_generations, p_request_ids, p_request_expires_at, p_now, p_quota_window_seconds, p_quota_maximum,
        p_deadline_unix_ms, p_lock_timeout_ms) AS b
    ORDER BY b.o_item;
END
$$;

-- Functions are executable by PUBLIC by default; only the runtime role may call the admissions.
-- SECURITY INVOKER functions check EXECUTE against the caller, and readiness (of this release and
-- the previous one) asks that the runtime role may execute every gateway function, so every role
-- that may call admit_delivery gets the new ones here, in this transaction, without
-- `migrate --runtime-role` (which grants them too). PUBLIC keeps EXECUTE on the trigger function,
-- as on 0007's: called outside a trigger it only raises an error.
REVOKE ALL ON FUNCTION admit_delivery_with_provider(uuid, bytea, text, bigint, bigint, bytea, bigint, uuid, bigint,
    bigint, bigint, bigint, bigint, bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION admit_delivery_batch_with_provider(bytea, bytea, bigint, uuid[], text[], bigint[], bigint[],
    uuid[], bigint[], bigint, bigint, bigint, bigint, bigint) FROM PUBLIC;
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
        EXECUTE format('GRANT EXECUTE ON FUNCTION admit_delivery_with_provider(uuid, bytea, text, bigint, bigint, '
            'bytea, bigint, uuid, bigint, bigint, bigint, bigint, bigint, bigint) TO %I', v_role);
        EXECUTE format('GRANT EXECUTE ON FUNCTION admit_delivery_batch_with_provider(bytea, bytea, bigint, uuid[], '
            'text[], bigint[], bigint[], uuid[], bigint[], bigint, bigint, bigint, bigint, bigint) TO %I', v_role);
    END LOOP;
END
$$;

DO $$
BEGIN
    EXECUTE format('ALTER FUNCTION installations_default_provider() SET search_path = pg_catalog, %I, pg_temp',
        current_schema());
    EXECUTE format('ALTER FUNCTION admit_delivery_with_provider(uuid, bytea, text, bigint, bigint, bytea, bigint, '
        'uuid, bigint, bigint, bigint, bigint, bigint, bigint) SET search_path = pg_catalog, %I, pg_temp',
        current_schema());
    EXECUTE format('ALTER FUNCTION admit_delivery_batch_with_provider(bytea, bytea, bigint, uuid[], text[], '
        'bigint[], bigint[], uuid[], bigint[], bigint, bigint, bigint, bigint, bigint) '
        'SET search_path = pg_catalog, %I, pg_temp', current_schema());
END
$$;
