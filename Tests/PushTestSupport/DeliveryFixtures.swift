import PushPostgres

/// Direct SQL for delivery tests: installations and delegations as the lifecycle routes would have
/// written them (schema of Migrations/0001_initial.sql), plus the revocations, rotations and
/// dead-endpoint marks tests race against deliveries. Values arrive already sealed: this module
/// does not know the gateway's keys.
public enum DeliveryFixtures {
    /// Inserts a live installation whose custody envelope is `sealedToken` (the envelope text's
    /// bytes) with the keyed `fingerprint`, at `endpointEpoch`, expiring at `expiresAt` (Unix s).
    public static func insertInstallation(
        _ connection: PostgresConnection, handle: String, appProfile: String, sealedToken: [UInt8],
        fingerprint: [UInt8], endpointEpoch: Int64 = 1, expiresAt: Int64
    ) throws {
        // App Attest material is irrelevant to deliveries; random values of the right shape keep the
        // partial unique index on the key id satisfied.
        let keyID = (0..<32).map { _ in UInt8.random(in: 0...255) }
        let publicKey = [UInt8(4)] + (0..<64).map { _ in UInt8.random(in: 0...255) }
        try connection.query(
            """
            INSERT INTO installations (handle, app_attest_key_id, app_attest_public_key, app_profile,
                encrypted_endpoint, endpoint_fingerprint, endpoint_epoch, expires_at)
            VALUES ($1::uuid, $2, $3, $4, $5, $6, $7::bigint, to_timestamp($8::bigint))
            """,
            [
                .text(handle), .bytes(keyID), .bytes(publicKey), .text(appProfile), .bytes(sealedToken),
                .bytes(fingerprint), .int64(endpointEpoch), .int64(expiresAt),
            ])
    }

    /// Inserts (or, for a new generation, overwrites) the delegation row of (installation, relay).
    public static func upsertDelegation(
        _ connection: PostgresConnection, installationHandle: String, relayPublicKey: [UInt8], delegationID: String,
        generation: Int64, endpointEpoch: Int64, notBefore: Int64, expiresAt: Int64
    ) throws {
        try connection.query(
            """
            INSERT INTO delegations (installation_handle, relay_pubkey, delegation_id, generation, endpoint_epoch,
                not_before, expires_at)
            VALUES ($1::uuid, $2, $3::uuid, $4::bigint, $5::bigint, to_timestamp($6::bigint), to_timestamp($7::bigint))
            ON CONFLICT (installation_handle, relay_pubkey) DO UPDATE SET
                delegation_id = EXCLUDED.delegation_id, generation = EXCLUDED.generation,
                endpoint_epoch = EXCLUDED.endpoint_epoch, not_before = EXCLUDED.not_before,
                expires_at = EXCLUDED.expires_at, revoked_at = NULL
            """,
            [
                .text(installationHandle), .bytes(relayPublicKey), .text(delegationID), .int64(generation),
                .int64(endpointEpoch), .int64(notBefore), .int64(expiresAt),
            ])
    }

    /// Revokes the delegation the way §4.5 does: installation row lock first, then the delegation.
    /// Returns the number of request reservations of that relay that existed when the revocation
    /// held its locks: every delivery admitted before the revocation committed is among them.
    @discardableResult
    public static func revokeDelegation(
        _ connection: PostgresConnection, installationHandle: String, relayPublicKey: [UInt8]
    ) throws -> Int64 {
        try connection.withTransaction(isolation: .readCommitted) { transaction in
            try transaction.query(
                "SELECT 1 FROM installations WHERE handle = $1::uuid FOR UPDATE", [.text(installationHandle)])
            try transaction.query(
                """
                UPDATE delegations SET revoked_at = now()
                WHERE installation_handle = $1::uuid AND relay_pubkey = $2
                """, [.text(installationHandle), .bytes(relayPublicKey)])
            let count = try transaction.query(
                "SELECT count(*) FROM delivery_reservations WHERE relay_pubkey = $1", [.bytes(relayPublicKey)])
            return try count.int64(row: 0, column: 0) ?? -1
        }
    }

    /// Rotates the installation's endpoint the way §4.4 does: installation row lock, then the next
    /// epoch (old grants stop working). Returns the reservations of `relayPublicKey` seen under the
    /// lock, like `revokeDelegation`.
    @discardableResult
    public static func rotateEndpoint(
        _ connection: PostgresConnection, installationHandle: String, relayPublicKey: [UInt8]
    ) throws -> Int64 {
        try connection.withTransaction(isolation: .readCommitted) { transaction in
            try transaction.query(
                "SELECT 1 FROM installations WHERE handle = $1::uuid FOR UPDATE", [.text(installationHandle)])
            try transaction.query(
                "UPDATE installations SET endpoint_epoch = endpoint_epoch + 1 WHERE handle = $1::uuid",
                [.text(installationHandle)])
            let count = try transaction.query(
                "SELECT count(*) FROM delivery_reservations WHERE relay_pubkey = $1", [.bytes(relayPublicKey)])
            return try count.int64(row: 0, column: 0) ?? -1
        }
    }

    /// Sets a column of one installation (`revoked_at`, `expires_at`, epoch, dead marker) directly.
    public static func updateInstallation(
        _ connection: PostgresConnection, handle: String, set assignment: String, _ parameters: [PostgresParameter] = []
    ) throws {
        try connection.query(
            "UPDATE installations SET \(assignment) WHERE handle = $1::uuid", [.text(handle)] + parameters)
    }

    /// Whether `(relay, request_id)` is currently reserved.
    public static func isReserved(
        _ connection: PostgresConnection, relayPublicKey: [UInt8], requestID: String
    ) throws
        -> Bool
    {
        try connection.query(
            "SELECT 1 FROM delivery_reservations WHERE relay_pubkey = $1 AND request_id = $2::uuid",
            [.bytes(relayPublicKey), .text(requestID)]
        ).rowCount == 1
    }

    /// The dead-endpoint marker of one installation: (epoch, invalid_at as Unix s).
    public static func deadMarker(
        _ connection: PostgresConnection, handle: String
    ) throws -> (
        epoch: Int64?, invalidAt: Int64?
    ) {
        let result = try connection.query(
            """
            SELECT dead_endpoint_epoch, extract(epoch FROM dead_endpoint_invalid_at)::bigint
            FROM installations WHERE handle = $1::uuid
            """, [.text(handle)])
        return (try result.int64(row: 0, column: 0), try result.int64(row: 0, column: 1))
    }

    /// Rows in a table (for "nothing was written" checks).
    public static func count(_ connection: PostgresConnection, table: String) throws -> Int64 {
        try connection.query("SELECT count(*) FROM \(table)").int64(row: 0, column: 0) ?? -1
    }
}
