import Foundation
import PushPostgres
import PushTestSupport
import Testing

/// Each new body of `admit_delivery_batch` against the one it replaced, on random small states:
/// migration 0005's set-based body against 0004's one-by-one body (every item's outcome and the
/// tables afterwards the same, docs/decisions/0310-set-based-batch-admission.md), and 0006's body
/// against 0005's (every item's outcome, the reservations and quotas the same; the event burned
/// exactly when an item was admitted, docs/decisions/0340-admitting-batch-burns-and-pinned-search-path.md).
@Suite("each migration's batch admission against the one it replaced", .tags(.postgres), .testBodyThreads)
struct BatchAdmissionEquivalenceTests {
    static let scenarios: Int64 = 1_500
    /// Fixed, so that a reported scenario comes back on the next run.
    static let seed = 0.31

    /// The `CREATE OR REPLACE FUNCTION admit_delivery_batch(` … `$$;` block of the repository's
    /// migration `file`, the function renamed to `name`.
    static func body(of file: String, renamedTo name: String) throws -> String {
        let path = MigratedTestDatabase.repositoryMigrations + "/" + file
        let migration = try String(contentsOfFile: path, encoding: .utf8)
        let head = "CREATE OR REPLACE FUNCTION admit_delivery_batch("
        let start = try #require(migration.range(of: head))
        let end = try #require(migration.range(of: "\n$$;", range: start.upperBound..<migration.endIndex))
        return "CREATE OR REPLACE FUNCTION \(name)(" + migration[start.upperBound..<end.upperBound]
    }

    /// Per scenario, in a subtransaction rolled back afterwards: 1–5 installations with their
    /// delegations, quota windows and reservations drawn at random, a batch of 1–8 items drawn at
    /// random; the functions `p_before` and `p_after` each run on that state in a rolled-back
    /// subtransaction, and their results and the reservation and quota tables are compared, and
    /// the replay table: the same in both, or with `p_burn_when_admitted` for `p_after` the event's
    /// row there exactly when it was burned before or an item was admitted, and no other new row.
    /// A difference raises with the scenario; otherwise one row of counts: the items by outcome (the
    /// same in both), the scenarios 0005 admits as one set (no request id twice, room in every
    /// quota) or one by one (a request id twice, or an endpoint whose quota the batch would
    /// exhaust), the scenarios where `p_before` raised, and those on a fresh event where `p_after`
    /// admitted nothing (`unburned`) or something (`burned`).
    static let differential = #"""
        CREATE FUNCTION batch_admission_differential(p_before text, p_after text, p_burn_when_admitted boolean,
                                                     p_scenarios integer, p_seed double precision)
        RETURNS TABLE (scenarios integer, admitted integer, dead integer, refused integer, late integer,
                       set_based integer, repeated_ids integer, quota_bound integer, errors integer,
                       unburned integer, burned integer)
        LANGUAGE plpgsql
        AS $$
        DECLARE
            v_relay bytea := sha256('relay'::bytea);
            v_now bigint;
            v_installations integer;
            v_items integer;
            v_ids uuid[];
            v_profiles text[];
            v_epochs bigint[];
            v_generations bigint[];
            v_request_ids uuid[];
            v_request_expiry bigint[];
            v_maximum bigint;
            v_event bytea;
            v_bodies text[] := ARRAY[p_before, p_after];
            -- Per body (before, after): the items' results, the tables afterwards, the replay rows
            -- and whether the event's is one of them.
            v_results text[];
            v_tables text[];
            v_replays bigint[];
            v_burns boolean[];
            v_result text;
            v_table text;
            v_counts integer[];
            v_replay_count bigint;
            v_burn boolean;
            v_replays_before bigint;
            v_burned_before boolean;
            v_differ boolean;
            v_fresh boolean;
            v_distinct boolean;
            v_room boolean;
            v_state text := $q$
                SELECT coalesce((SELECT string_agg(format('%s/%s', request_id, expires_at), ',' ORDER BY request_id)
                                 FROM delivery_reservations), '')
                    || '|' || coalesce((SELECT string_agg(format('%s/%s/%s', endpoint_fingerprint, window_started_at,
                                                                 admitted_count), ',' ORDER BY endpoint_fingerprint)
                                        FROM endpoint_quota_windows), '')
            $q$;
            v_call text := $q$
                SELECT string_agg(format('%s:%s:%s:%s:%s', o_item, o_outcome, o_handle, o_encrypted_endpoint,
                                         o_dead_invalid_at), ' ' ORDER BY o_item),
                       ARRAY[count(*) FILTER (WHERE o_outcome = 'admitted'), count(*) FILTER (WHERE o_outcome = 'dead'),
                             count(*) FILTER (WHERE o_outcome = 'refused'), count(*) FILTER (WHERE o_outcome = 'late')]
                FROM body($1, $2, $3 + 120, $4, $5, $6, $7, $8, $9, $3, 10, $10, ($3 + 20) * 1000, 0)
            $q$;
        BEGIN
            PERFORM setseed(p_seed);
            scenarios := 0; admitted := 0; dead := 0; refused := 0; late := 0;
            set_based := 0; repeated_ids := 0; quota_bound := 0; errors := 0; unburned := 0; burned := 0;
            FOR v_scenario IN 1 .. p_scenarios LOOP
                BEGIN
                    v_now := extract(epoch FROM clock_timestamp())::bigint;
                    -- 1–5 installations, some revoked (sharing installation 1's fingerprint), expired, of
                    -- another profile, rotated or dead; one delegation each, some revoked, not yet valid,
                    -- expired or of another generation or epoch; some endpoints with a live or ended window.
                    v_installations := 1 + floor(random() * 5)::integer;
                    FOR k IN 1 .. v_installations LOOP
                        INSERT INTO installations (handle, app_attest_key_id, app_attest_public_key, app_profile,
                            encrypted_endpoint, endpoint_fingerprint, endpoint_epoch, expires_at, revoked_at,
                            dead_endpoint_epoch, dead_endpoint_invalid_at)
                        SELECT md5('i' || k)::uuid, sha256(('k' || k)::bytea),
                               '\x04'::bytea || sha256(('x' || k)::bytea) || sha256(('y' || k)::bytea),
                               CASE WHEN random() < 0.1 THEN 'q' ELSE 'p' END, convert_to('k1.' || k, 'UTF8'),
                               sha256(('f' || CASE WHEN s.revoked THEN 1 ELSE k END)::bytea), s.epoch,
                               to_timestamp(v_now + CASE WHEN random() < 0.1 THEN -5 ELSE 3600 END),
                               CASE WHEN s.revoked THEN now() END, s.dead_epoch,
                               CASE WHEN s.dead_epoch IS NOT NULL AND random() < 0.5 THEN to_timestamp(v_now - 100.7) END
                        FROM (SELECT random() < 0.1 AS revoked, e.epoch,
                                     CASE WHEN random() < 0.3 THEN 1 + floor(random() * e.epoch)::integer END AS dead_epoch
                              FROM (SELECT 1 + (random() < 0.1)::integer AS epoch) AS e) AS s;
                        INSERT INTO delegations (installation_handle, relay_pubkey, delegation_id, generation, endpoint_epoch,
                            not_before, expires_at, revoked_at)
                        SELECT md5('i' || k)::uuid, v_relay, md5('d' || k)::uuid, 1 + (random() < 0.1)::integer,
                               1 + (random() < 0.1)::integer, to_timestamp(v_now + CASE WHEN r.w < 0.1 THEN 10 ELSE -60 END),
                               to_timestamp(v_now + CASE WHEN r.w >= 0.1 AND r.w < 0.2 THEN -1 ELSE 3600 END),
                               CASE WHEN random() < 0.1 THEN now() END
                        FROM (SELECT random() AS w) AS r;
                        IF random() < 0.6 THEN
                            INSERT INTO endpoint_quota_windows (endpoint_fingerprint, window_started_at, admitted_count)
                            VALUES (sha256(('f' || k)::bytea),
                                    to_timestamp(v_now - CASE WHEN random() < 0.3 THEN 20 ELSE 2 END),
                                    floor(random() * 4)::integer)
                            ON CONFLICT DO NOTHING;
                        END IF;
                    END LOOP;
                    -- A pool of six request ids, some already reserved (held or expired).
                    FOR k IN 1 .. 6 LOOP
                        IF random() < 0.15 THEN
                            INSERT INTO delivery_reservations (relay_pubkey, request_id, expires_at)
                            VALUES (v_relay, md5('r' || k)::uuid,
                                    to_timestamp(v_now + CASE WHEN random() < 0.5 THEN -3 ELSE 60 END));
                        END IF;
                    END LOOP;
                    -- 1–8 items: unknown delegations, wrong profiles, epochs and generations, request ids
                    -- from the pool (repeated, held) or fresh, a few already expired.
                    v_items := 1 + floor(random() * 8)::integer;
                    v_fresh := random() < 0.4;
                    SELECT array_agg(md5('d' || (1 + floor(random() * (v_installations + 1))::integer))::uuid ORDER BY g),
                           array_agg(CASE WHEN random() < 0.05 THEN 'q' ELSE 'p' END ORDER BY g),
                           array_agg(1 + (random() < 0.05)::integer::bigint ORDER BY g),
                           array_agg(1 + (random() < 0.05)::integer::bigint ORDER BY g),
                           array_agg(CASE WHEN NOT v_fresh AND random() < 0.5
                                     THEN md5('r' || (1 + floor(random() * 6)::integer))::uuid
                                     ELSE md5('n' || v_scenario || '.' || g)::uuid END ORDER BY g),
                           array_agg(v_now + CASE WHEN random() < 0.05 THEN -2 ELSE 60 END ORDER BY g)
                    INTO v_ids, v_profiles, v_epochs, v_generations, v_request_ids, v_request_expiry
                    FROM generate_series(1, v_items) AS g;
                    v_maximum := CASE WHEN random() < 0.5 THEN 1000 ELSE floor(random() * 5)::integer END;
                    v_event := sha256(CASE WHEN random() < 0.05 THEN 'burned' ELSE 'event ' || v_scenario END::bytea);
                    INSERT INTO nip98_replays (relay_pubkey, auth_event_id, expires_at)
                    VALUES (v_relay, sha256('burned'::bytea), to_timestamp(v_now + 60)) ON CONFLICT DO NOTHING;

                    -- Which path 0005 takes, judged from the inputs: no request id twice, and room in every
                    -- live endpoint's window for all the items that pass steps 1–2 on it.
                    SELECT count(DISTINCT r) = v_items INTO v_distinct FROM unnest(v_request_ids) AS r;
                    SELECT coalesce(bool_and(g.k + coalesce(q.admitted_count, 0) <= v_maximum), true) INTO v_room
                    FROM (SELECT i.endpoint_fingerprint AS f, count(*) AS k
                          FROM unnest(v_ids, v_profiles, v_epochs, v_generations) AS x(id, profile, epoch, generation)
                          JOIN delegations d ON d.delegation_id = x.id
                          JOIN installations i ON i.handle = d.installation_handle
                          WHERE (d.relay_pubkey, d.endpoint_epoch, d.generation, i.endpoint_epoch, i.app_profile)
                                = (v_relay, x.epoch, x.generation, x.epoch, x.profile)
                            AND d.revoked_at IS NULL AND i.revoked_at IS NULL
                            AND to_timestamp(v_now) BETWEEN d.not_before AND d.expires_at
                            AND i.expires_at > to_timestamp(v_now)
                            AND i.dead_endpoint_epoch IS DISTINCT FROM i.endpoint_epoch
                          GROUP BY 1) AS g
                    LEFT JOIN endpoint_quota_windows q
                      ON q.endpoint_fingerprint = g.f AND q.window_started_at + interval '10 seconds' > to_timestamp(v_now);

                    SELECT count(*), coalesce(bool_or(auth_event_id = v_event), false)
                    INTO v_replays_before, v_burned_before FROM nip98_replays;

                    -- Each body on the same state, each in a subtransaction rolled back after reading the
                    -- results and the tables; an error is a result too.
                    FOR v_body IN 1 .. 2 LOOP
                        BEGIN
                            EXECUTE replace(v_call, 'body(', v_bodies[v_body] || '(')
                            INTO v_result, v_counts
                            USING v_relay, v_event, v_now, v_ids, v_profiles, v_epochs, v_generations, v_request_ids,
                                  v_request_expiry, v_maximum;
                            EXECUTE v_state INTO v_table;
                            SELECT count(*), coalesce(bool_or(auth_event_id = v_event), false)
                            INTO v_replay_count, v_burn FROM nip98_replays;
                            RAISE EXCEPTION 'undo' USING ERRCODE = 'PGX01';
                        EXCEPTION
                            WHEN SQLSTATE 'PGX01' THEN NULL;
                            WHEN OTHERS THEN
                                v_result := 'error ' || SQLSTATE || ': ' || SQLERRM;
                                v_table := NULL;
                                v_counts := NULL;
                                v_replay_count := NULL;
                                v_burn := NULL;
                        END;
                        v_results[v_body] := v_result;
                        v_tables[v_body] := v_table;
                        v_replays[v_body] := v_replay_count;
                        v_burns[v_body] := v_burn;
                    END LOOP;
                    v_differ := v_results[1] IS DISTINCT FROM v_results[2] OR v_tables[1] IS DISTINCT FROM v_tables[2]
                        OR CASE WHEN NOT p_burn_when_admitted THEN v_replays[1] IS DISTINCT FROM v_replays[2]
                                WHEN v_counts IS NULL THEN false
                                -- The event's row exactly when it was burned before or an item was admitted,
                                -- and no other row written.
                                ELSE v_burns[2] IS DISTINCT FROM (v_burned_before OR v_counts[1] > 0)
                                     OR v_replays[2] <> v_replays_before + (v_burns[2] AND NOT v_burned_before)::integer
                           END;
                    IF v_differ THEN
                        RAISE EXCEPTION E'% and % differ in scenario % (seed %)\ndelegations %\nprofiles %\nepochs %\n'
                            'generations %\nrequest ids %\nrequest expiry (now %) %\nquota maximum %\nbefore: %\nafter: %\n'
                            'tables before: %\ntables after: %\nreplay rows (burned) at the start: % (%), before: % (%), '
                            'after: % (%)',
                            p_before, p_after, v_scenario, p_seed, v_ids, v_profiles, v_epochs, v_generations,
                            v_request_ids, v_now, v_request_expiry, v_maximum, v_results[1], v_results[2], v_tables[1],
                            v_tables[2], v_replays_before, v_burned_before, v_replays[1], v_burns[1], v_replays[2],
                            v_burns[2];
                    END IF;
                    IF NOT v_burned_before AND v_counts IS NOT NULL AND v_counts[4] = 0 THEN
                        unburned := unburned + (v_counts[1] = 0)::integer;
                        burned := burned + (v_counts[1] > 0)::integer;
                    END IF;
                    scenarios := scenarios + 1;
                    admitted := admitted + coalesce(v_counts[1], 0);
                    dead := dead + coalesce(v_counts[2], 0);
                    refused := refused + coalesce(v_counts[3], 0);
                    late := late + coalesce(v_counts[4], 0);
                    errors := errors + (v_results[1] LIKE 'error %')::integer;
                    -- A burned event refuses every item before either path.
                    IF v_event <> sha256('burned'::bytea) THEN
                        set_based := set_based + (v_distinct AND v_room)::integer;
                        repeated_ids := repeated_ids + (NOT v_distinct)::integer;
                        quota_bound := quota_bound + (v_distinct AND NOT v_room)::integer;
                    END IF;
                    RAISE EXCEPTION 'undo' USING ERRCODE = 'PGX02';
                EXCEPTION WHEN SQLSTATE 'PGX02' THEN NULL;
                END;
            END LOOP;
            RETURN NEXT;
        END
        $$;
        """#

    /// Runs the differential of `after` (a migration's body under its own name, or a live
    /// function) against `before` and returns its counts by column name.
    static func differentialCounts(
        before: (file: String, name: String), after: (file: String, name: String)?, burnWhenAdmitted: Bool
    ) throws -> [String: Int64] {
        var setup = [try Self.body(of: before.file, renamedTo: before.name)]
        if let after { setup.append(try Self.body(of: after.file, renamedTo: after.name)) }
        let migrated = try MigratedTestDatabase()
        let admin = try PostgresConnection(configuration: migrated.database.configuration(statementTimeout: .zero))
        return try differentialCounts(
            before: before.name, after: after?.name ?? "admit_delivery_batch", burnWhenAdmitted: burnWhenAdmitted,
            setup: setup, on: admin)
    }

    /// Runs the differential of the function `after` against `before`, both batch-shaped and
    /// created by the `setup` scripts (or by the migrations), as `admin` of a migrated database.
    static func differentialCounts(
        before: String, after: String, burnWhenAdmitted: Bool, setup: [String], on admin: PostgresConnection
    ) throws -> [String: Int64] {
        for script in setup { try admin.executeScript(script) }
        try admin.executeScript(Self.differential)
        let counts = try admin.query(
            """
            SELECT * FROM batch_admission_differential($1::text, $2::text, $3::boolean, $4::integer,
                                                       $5::double precision)
            """,
            [
                .text(before), .text(after), .bool(burnWhenAdmitted),
                .int64(Self.scenarios), .text(String(Self.seed)),
            ])
        let names = [
            "scenarios", "admitted", "dead", "refused", "late", "set_based", "repeated_ids", "quota_bound", "errors",
            "unburned", "burned",
        ]
        var byName: [String: Int64] = [:]
        for name in names { byName[name] = try counts.int64(row: 0, column: counts.columnIndex(name)) }
        return byName
    }

    @Test(
        "migration 0005's batch admission gives every item the outcome and leaves the tables as 0004's did, over 1,500 random states"
    )
    func version5AgainstVersion4() throws {
        let counts: [String: Int64]
        do {
            counts = try Self.differentialCounts(
                before: ("0004_cheaper_admission.sql", "admit_delivery_batch_v4"),
                after: ("0005_set_based_batch_admission.sql", "admit_delivery_batch_v5"), burnWhenAdmitted: false)
        } catch let error as PostgresError {
            Issue.record("\(error.message)")
            return
        }
        #expect(counts["scenarios"] == Self.scenarios)
        #expect(counts["errors"] == 0)
        for name in ["admitted", "dead", "refused", "set_based", "repeated_ids", "quota_bound"] {
            #expect(counts[name] ?? 0 > 0, "\(name)")
        }
    }

    @Test(
        "migration 0006's batch admission gives every item 0005's outcome and leaves reservations and quotas as 0005 did, burning the event exactly when an item is admitted, over 1,500 random states"
    )
    func version6AgainstVersion5() throws {
        let counts: [String: Int64]
        do {
            counts = try Self.differentialCounts(
                before: ("0005_set_based_batch_admission.sql", "admit_delivery_batch_v5"), after: nil,
                burnWhenAdmitted: true)
        } catch let error as PostgresError {
            Issue.record("\(error.message)")
            return
        }
        #expect(counts["scenarios"] == Self.scenarios)
        #expect(counts["errors"] == 0)
        // Both sides of the rule were met: fresh events that admitted nothing and wrote nothing,
        // and fresh events burned with their admitted items.
        #expect(counts["unburned"] ?? 0 > 0)
        #expect(counts["burned"] ?? 0 > 0)
        for name in ["admitted", "dead", "refused", "set_based", "repeated_ids", "quota_bound"] {
            #expect(counts[name] ?? 0 > 0, "\(name)")
        }
    }
}
