import Foundation
import PushPostgres
import PushTestSupport
import Testing

@testable import PushGateway

@Suite("gateway schema constraints", .tags(.postgres), .testBodyThreads)
struct MigrateSchemaTests {
    /// Column values of one installation row; tests change one field at a time.
    struct Installation {
        var handle = UUID().uuidString.lowercased()
        var keyID = [UInt8](repeating: 0x11, count: 32)
        var publicKey = [0x04] + [UInt8](repeating: 0x22, count: 64)
        var counter: Int64 = 0
        var profile = "buzz-ios-production"
        var fingerprint = [UInt8](repeating: 0x33, count: 32)
        var epoch: Int64 = 1
        var deadEpoch: Int64?

        func insert(_ connection: PostgresConnection) throws {
            try connection.query(
                """
                INSERT INTO installations (handle, app_attest_key_id, app_attest_public_key, assertion_counter,
                    app_profile, encrypted_endpoint, endpoint_fingerprint, endpoint_epoch, dead_endpoint_epoch,
                    expires_at)
                VALUES ($1::uuid, $2, $3, $4, $5, $6, $7, $8, $9, now() + interval '1 day')
                """,
                [
                    .text(handle), .bytes(keyID), .bytes(publicKey), .int64(counter), .text(profile),
                    .bytes(Array("k1.c2VhbGVk".utf8)), .bytes(fingerprint), .int64(epoch),
                    deadEpoch.map { .int64($0) } ?? .null,
                ])
        }
    }

    private func withSchema(_ body: (PostgresConnection) throws -> Void) throws {
        try TemporaryDatabase.with { database in
            let outcome = MigrateTestSupport.migrate(database)
            #expect(outcome.exitCode == 0, "\(outcome.standardError)")
            try body(try database.connect())
        }
    }

    private func expectViolation(_ sqlState: String, _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("expected SQLSTATE \(sqlState), but the statement succeeded")
        } catch let error as PostgresError {
            #expect(error.sqlState == sqlState, "\(error)")
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test("a second live installation with the same App Attest key fails with 23505 until the first is revoked")
    func oneLiveInstallationPerKey() throws {
        try withSchema { connection in
            let first = Installation()
            try first.insert(connection)
            var second = Installation()
            second.fingerprint = [UInt8](repeating: 0x44, count: 32)
            let error = try #require(throws: PostgresError.self) { try second.insert(connection) }
            #expect(error.isUniqueViolation)
            #expect(error.constraintName == "installations_live_key_id")
            try connection.query(
                "UPDATE installations SET revoked_at = now() WHERE handle = $1::uuid", [.text(first.handle)])
            try second.insert(connection)
        }
    }

    @Test("a second live installation with the same profile and endpoint fingerprint fails until the first is revoked")
    func oneLiveInstallationPerEndpoint() throws {
        try withSchema { connection in
            let first = Installation()
            try first.insert(connection)
            var second = Installation()
            second.keyID = [UInt8](repeating: 0x55, count: 32)
            let error = try #require(throws: PostgresError.self) { try second.insert(connection) }
            #expect(error.constraintName == "installations_live_endpoint")
            var otherProfile = second
            otherProfile.handle = UUID().uuidString.lowercased()
            otherProfile.profile = "buzz-ios-sandbox"
            otherProfile.keyID = [UInt8](repeating: 0x66, count: 32)
            try otherProfile.insert(connection)
            try connection.query(
                "UPDATE installations SET revoked_at = now() WHERE handle = $1::uuid", [.text(first.handle)])
            try second.insert(connection)
        }
    }

    @Test("CHECK constraints refuse wrong sizes, negative counters and epochs below 1")
    func installationChecks() throws {
        try withSchema { connection in
            var candidates: [Installation] = []
            var shortKey = Installation()
            shortKey.keyID = [UInt8](repeating: 1, count: 31)
            candidates.append(shortKey)
            var compressedKey = Installation()
            compressedKey.publicKey = [0x02] + [UInt8](repeating: 1, count: 64)
            candidates.append(compressedKey)
            var shortPublicKey = Installation()
            shortPublicKey.publicKey = [0x04] + [UInt8](repeating: 1, count: 32)
            candidates.append(shortPublicKey)
            var negativeCounter = Installation()
            negativeCounter.counter = -1
            candidates.append(negativeCounter)
            var hugeCounter = Installation()
            hugeCounter.counter = 4_294_967_296
            candidates.append(hugeCounter)
            var zeroEpoch = Installation()
            zeroEpoch.epoch = 0
            candidates.append(zeroEpoch)
            var longFingerprint = Installation()
            longFingerprint.fingerprint = [UInt8](repeating: 1, count: 33)
            candidates.append(longFingerprint)
            var deadInFuture = Installation()
            deadInFuture.deadEpoch = 2
            candidates.append(deadInFuture)
            var emptyProfile = Installation()
            emptyProfile.profile = ""
            candidates.append(emptyProfile)
            for candidate in candidates {
                expectViolation("23514") { try candidate.insert(connection) }
            }
            var valid = Installation()
            valid.epoch = 3
            valid.deadEpoch = 3
            valid.counter = 4_294_967_295
            try valid.insert(connection)
        }
    }

    @Test("delegations keep one row per installation and relay, check their sizes, and go with their installation")
    func delegationRules() throws {
        try withSchema { connection in
            let installation = Installation()
            try installation.insert(connection)
            func insertDelegation(
                relay: [UInt8], generation: Int64, epoch: Int64 = 1, lifetime: String = "1 hour"
            )
                throws
            {
                try connection.query(
                    """
                    INSERT INTO delegations (installation_handle, relay_pubkey, delegation_id, generation,
                        endpoint_epoch, not_before, expires_at)
                    VALUES ($1::uuid, $2, $3::uuid, $4, $5, now(), now() + $6::interval)
                    """,
                    [
                        .text(installation.handle), .bytes(relay), .text(UUID().uuidString.lowercased()),
                        .int64(generation), .int64(epoch), .text(lifetime),
                    ])
            }
            let relay = [UInt8](repeating: 0xaa, count: 32)
            try insertDelegation(relay: relay, generation: 1)
            expectViolation("23505") { try insertDelegation(relay: relay, generation: 2) }
            expectViolation("23514") { try insertDelegation(relay: [UInt8](repeating: 1, count: 33), generation: 1) }
            expectViolation("23514") { try insertDelegation(relay: [UInt8](repeating: 2, count: 32), generation: 0) }
            expectViolation("23514") {
                try insertDelegation(relay: [UInt8](repeating: 3, count: 32), generation: 1, epoch: 0)
            }
            expectViolation("23514") {
                try insertDelegation(relay: [UInt8](repeating: 4, count: 32), generation: 1, lifetime: "0 seconds")
            }
            try connection.query("DELETE FROM installations WHERE handle = $1::uuid", [.text(installation.handle)])
            #expect(try connection.query("SELECT count(*) FROM delegations").int64(row: 0, column: 0) == 0)
        }
    }

    @Test("replay keys make a second consumption of a challenge, NIP-98 event or request id fail with 23505")
    func replayKeys() throws {
        try withSchema { connection in
            let relay = PostgresParameter.bytes([UInt8](repeating: 0xbb, count: 32))
            let statements: [(String, [PostgresParameter])] = [
                (
                    "INSERT INTO consumed_challenges VALUES ($1::uuid, now())",
                    [.text("0190f5a2-7b8c-7d1e-8f00-0123456789ab")]
                ),
                (
                    "INSERT INTO nip98_replays VALUES ($1, $2, now())",
                    [relay, .bytes([UInt8](repeating: 0xcc, count: 32))]
                ),
                (
                    "INSERT INTO delivery_reservations VALUES ($1, $2::uuid, now())",
                    [relay, .text("0190f5a2-7b8c-7d1e-8f00-0123456789ac")]
                ),
                (
                    "INSERT INTO endpoint_quota_windows VALUES ($1, now(), 1)",
                    [.bytes([UInt8](repeating: 0xdd, count: 32))]
                ),
            ]
            for (sql, parameters) in statements {
                try connection.query(sql, parameters)
                expectViolation("23505") { try connection.query(sql, parameters) }
            }
            expectViolation("23514") {
                try connection.query(
                    "INSERT INTO nip98_replays VALUES ($1, $2, now())",
                    [relay, .bytes([UInt8](repeating: 1, count: 31))])
            }
            expectViolation("23514") {
                try connection.query(
                    "INSERT INTO endpoint_quota_windows VALUES ($1, now(), -1)",
                    [.bytes([UInt8](repeating: 0xee, count: 32))])
            }
        }
    }
}
