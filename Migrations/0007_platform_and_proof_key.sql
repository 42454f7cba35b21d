-- push-gateway schema, version 7: installations are tagged with their platform and carry a
-- platform-neutral proof key (docs/protocol.md §3, §4.2a; docs/decisions/0450-platform-and-proof-key.md).
-- An expand step (Migrations/README.md): nothing the previous release reads or writes changes.
--
-- 1. platform: 'ios' (App Attest, APNs) or 'android' (Key Attestation, FCM); every existing row,
--    and every row the previous release inserts, is 'ios' by the default.
-- 2. proof_key_id, proof_public_key, proof_counter: the key the lifecycle proofs of §4.3–§4.6
--    verify with. iOS rows hold the App Attest key and counter; Android rows the attested Keystore
--    key and no counter (NULL: §3, the single-use challenge makes each proof unrepeatable).
--    Existing rows are backfilled from the App Attest columns.
-- 3. The App Attest columns stay written for every row (an Android row holds its key there too,
--    counter 0), so their NOT NULL constraints and the live key-id index keep holding and the
--    previous release can read any row. A later contract step drops them.
-- 4. A trigger copies the App Attest columns into the proof columns of every 'ios' row written,
--    so a row the previous release inserts, or whose counter it advances, keeps its proof key
--    and counter current while both releases run.

ALTER TABLE installations
    ADD COLUMN platform text NOT NULL DEFAULT 'ios' CHECK (platform IN ('ios', 'android')),
    ADD COLUMN proof_key_id bytea CHECK (octet_length(proof_key_id) = 32),
    ADD COLUMN proof_public_key bytea
        CHECK (octet_length(proof_public_key) = 65 AND get_byte(proof_public_key, 0) = 4),
    ADD COLUMN proof_counter bigint CHECK (proof_counter BETWEEN 0 AND 4294967295),
    -- An iOS proof always has a counter, an Android one never.
    ADD CONSTRAINT installations_proof_counter_by_platform
        CHECK (proof_counter IS NULL OR platform = 'ios'),
    ADD CONSTRAINT installations_android_proof_key
        CHECK (platform = 'ios' OR (proof_key_id IS NOT NULL AND proof_public_key IS NOT NULL));

UPDATE installations
SET proof_key_id = app_attest_key_id, proof_public_key = app_attest_public_key, proof_counter = assertion_counter;

CREATE FUNCTION installations_ios_proof_key() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    IF NEW.platform = 'ios' THEN
        NEW.proof_key_id := NEW.app_attest_key_id;
        NEW.proof_public_key := NEW.app_attest_public_key;
        NEW.proof_counter := NEW.assertion_counter;
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER installations_ios_proof_key BEFORE INSERT OR UPDATE ON installations
    FOR EACH ROW EXECUTE FUNCTION installations_ios_proof_key();

-- PUBLIC keeps EXECUTE on the trigger function: readiness asks that the runtime role may execute
-- every gateway function, and a runtime role the previous release's migrate granted must stay
-- ready without a new grant. Called outside a trigger, a trigger function only raises an error.
DO $$
BEGIN
    EXECUTE format('ALTER FUNCTION installations_ios_proof_key() SET search_path = pg_catalog, %I, pg_temp',
        current_schema());
END
$$;
