import Foundation
import PushPostgres
import PushTestSupport
import Testing

/// Migration 0009's admissions against the ones the previous release calls, on the random states of
/// BatchAdmissionEquivalenceTests: `admit_delivery_with_provider` (a copy of `admit_delivery`'s
/// body) and `admit_delivery_batch_with_provider` (a call of `admit_delivery_batch`) give every
/// item the same outcome and leave every table as the old ones, and return exactly the admitted
/// installation's stored provider (docs/decisions/0820-installation-provider.md).
@Suite(
    "migration 0009's admissions decide as the previous release's and return the stored provider", .tags(.postgres),
    .testBodyThreads)
struct AdmissionWithProviderEquivalenceTests {
    /// The batch arguments of `admit_delivery_batch`, for the batch-shaped functions below.
    static let batchArguments = """
        p_relay_pubkey bytea, p_auth_event_id bytea, p_replay_expires_at bigint,
        p_delegation_ids uuid[], p_app_profiles text[], p_endpoint_epochs bigint[], p_generations bigint[],
        p_request_ids uuid[], p_request_expires_at bigint[],
        p_now bigint, p_quota_window_seconds bigint, p_quota_maximum bigint,
        p_deadline_unix_ms bigint, p_lock_timeout_ms bigint
        """
    static let batchResult = """
        RETURNS TABLE (o_item integer, o_outcome text, o_handle uuid, o_encrypted_endpoint bytea,
                       o_dead_invalid_at bigint)
        """

    /// Each installation the scenarios insert gets one of three providers at random (a test trigger
    /// that fires before the migration's default one); each admitted item's provider is counted in a
    /// sequence, which no rollback resets.
    static let randomProviders = """
        CREATE FUNCTION test_random_provider() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            NEW.provider := (ARRAY['apns', 'fcm', 'webpush'])[1 + floor(random() * 3)::integer];
            RETURN NEW;
        END
        $$;
        CREATE TRIGGER installations_aa_random_provider BEFORE INSERT ON installations
            FOR EACH ROW EXECUTE FUNCTION test_random_provider();
        CREATE SEQUENCE admitted_apns;
        CREATE SEQUENCE admitted_fcm;
        CREATE SEQUENCE admitted_webpush;
        -- Raises unless `p_provider` is the stored provider of an admitted item and NULL otherwise.
        CREATE FUNCTION test_check_provider(p_item integer, p_outcome text, p_handle uuid, p_provider text)
        RETURNS void LANGUAGE plpgsql AS $$
        DECLARE
            v_stored text := (SELECT i.provider FROM installations i WHERE i.handle = p_handle AND p_outcome = 'admitted');
        BEGIN
            IF p_provider IS DISTINCT FROM v_stored THEN
                RAISE EXCEPTION 'item % (%) returned provider %, stored %', p_item, p_outcome, p_provider, v_stored;
            END IF;
            IF p_outcome = 'admitted' THEN
                PERFORM nextval('admitted_' || p_provider);
            END IF;
        END
        $$;
        """

    /// `admit_delivery_batch_with_provider`, its provider checked and dropped from the rows.
    static let checkedBatch = """
        CREATE FUNCTION batch_with_provider_checked(\(batchArguments)) \(batchResult)
        LANGUAGE plpgsql AS $$
        DECLARE
            r record;
        BEGIN
            FOR r IN SELECT * FROM admit_delivery_batch_with_provider(p_relay_pubkey, p_auth_event_id,
                p_replay_expires_at, p_delegation_ids, p_app_profiles, p_endpoint_epochs, p_generations, p_request_ids,
                p_request_expires_at, p_now, p_quota_window_seconds, p_quota_maximum, p_deadline_unix_ms,
                p_lock_timeout_ms)
            LOOP
                PERFORM test_check_provider(r.o_item, r.o_outcome, r.o_handle, r.o_provider);
                o_item := r.o_item;
                o_outcome := r.o_outcome;
                o_handle := r.o_handle;
                o_encrypted_endpoint := r.o_encrypted_endpoint;
                o_dead_invalid_at := r.o_dead_invalid_at;
                RETURN NEXT;
            END LOOP;
        END
        $$;
        """

    /// A batch-shaped function `name` that makes one single admission (`single`) per item in
    /// request order, each with its own NIP-98 event (the batch's for the first item), as
    /// consecutive single deliveries would; a PGW01 (a write refused after the checks) rolls that
    /// item back and refuses it, as DeliveryLedger does. With `checked`, the provider is checked.
    static func singleAsBatch(_ name: String, calling single: String, checked: Bool) -> String {
        """
        CREATE FUNCTION \(name)(\(batchArguments)) \(batchResult)
        LANGUAGE plpgsql AS $$
        DECLARE
            r record;
        BEGIN
            FOR n IN 1 .. coalesce(cardinality(p_delegation_ids), 0) LOOP
                o_item := n;
                BEGIN
                    SELECT * INTO r FROM \(single)(p_delegation_ids[n], p_relay_pubkey, p_app_profiles[n],
                        p_endpoint_epochs[n], p_generations[n],
                        CASE WHEN n = 1 THEN p_auth_event_id ELSE sha256(p_auth_event_id || int4send(n)) END,
                        p_replay_expires_at, p_request_ids[n], p_request_expires_at[n], p_now, p_quota_window_seconds,
                        p_quota_maximum, p_deadline_unix_ms, p_lock_timeout_ms);
                    \(checked ? "PERFORM test_check_provider(n, r.o_outcome, r.o_handle, r.o_provider);" : "")
                    o_outcome := r.o_outcome;
                    o_handle := r.o_handle;
                    o_encrypted_endpoint := r.o_encrypted_endpoint;
                    o_dead_invalid_at := r.o_dead_invalid_at;
                EXCEPTION WHEN SQLSTATE 'PGW01' THEN
                    o_outcome := 'refused';
                    o_handle := NULL;
                    o_encrypted_endpoint := NULL;
                    o_dead_invalid_at := NULL;
                END;
                RETURN NEXT;
            END LOOP;
        END
        $$;
        """
    }

    /// The admitted items counted per provider during the last differential of `database`.
    static func admittedPerProvider(
        _ setup: [String], before: String, after: String
    ) throws -> (
        [String: Int64], [String: Int64]
    ) {
        let migrated = try MigratedTestDatabase()
        let admin = try PostgresConnection(configuration: migrated.database.configuration(statementTimeout: .zero))
        let counts = try BatchAdmissionEquivalenceTests.differentialCounts(
            before: before, after: after, burnWhenAdmitted: false, setup: setup, on: admin)
        var providers: [String: Int64] = [:]
        for provider in ["apns", "fcm", "webpush"] {
            let row = try admin.query("SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM admitted_\(provider)")
            providers[provider] = try row.int64(row: 0, column: 0)
        }
        return (counts, providers)
    }

    static func expectMeaningful(_ counts: [String: Int64], _ providers: [String: Int64]) {
        #expect(counts["scenarios"] == BatchAdmissionEquivalenceTests.scenarios)
        #expect(counts["errors"] == 0)
        for name in ["admitted", "dead", "refused"] { #expect(counts[name] ?? 0 > 0, "\(name)") }
        // Every provider came back with admitted items.
        for (provider, count) in providers { #expect(count > 0, "\(provider)") }
    }

    @Test(
        "admit_delivery_with_provider gives every item admit_delivery's outcome, leaves the tables as it does, and returns the stored provider exactly when admitted, over 1,500 random states"
    )
    func singleAdmission() throws {
        let (counts, providers) = try Self.admittedPerProvider(
            [
                Self.randomProviders, Self.singleAsBatch("single_before", calling: "admit_delivery", checked: false),
                Self.singleAsBatch("single_after", calling: "admit_delivery_with_provider", checked: true),
            ], before: "single_before", after: "single_after")
        Self.expectMeaningful(counts, providers)
    }

    @Test(
        "admit_delivery_batch_with_provider gives every item admit_delivery_batch's outcome, leaves the tables as it does, and returns the stored provider exactly when admitted, over 1,500 random states"
    )
    func batchAdmission() throws {
        let (counts, providers) = try Self.admittedPerProvider(
            [Self.randomProviders, Self.checkedBatch], before: "admit_delivery_batch",
            after: "batch_with_provider_checked")
        Self.expectMeaningful(counts, providers)
        for name in ["set_based", "repeated_ids", "quota_bound"] { #expect(counts[name] ?? 0 > 0, "\(name)") }
    }
}
