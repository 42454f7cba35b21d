import GatewayConfiguration
import GatewayCredentials
import PushCrypto
import PushPostgres

/// One `installations` row as the lifecycle routes need it.
package struct InstallationRecord: Equatable {
    package let handle: CanonicalUUID
    package let platform: AppProfile.Platform
    /// The push service stored at enrollment (docs/protocol.md "Platforms and providers"): fixed
    /// for the installation's life, whatever its profile says later.
    package let provider: String
    /// The proof key (docs/protocol.md §3): the App Attest key of an iOS installation, the attested
    /// Keystore key of an Android one.
    package let keyID: [UInt8]
    package let publicKey: P256PublicKey
    /// The App Attest assertion counter; nil for an Android installation, whose proofs have none.
    package let proofCounter: UInt32?
    package let appProfile: String
    package let endpointFingerprint: [UInt8]
    package let endpointEpoch: Int64
    package let isRevoked: Bool
    /// Unix seconds.
    package let expiresAt: Int64

    /// Unrevoked and unexpired at `now` (docs/protocol.md §4.2 "live").
    package func isLive(at now: Int64) -> Bool { !isRevoked && now < expiresAt }
}

/// The key an enrollment's attestation proved, and the App Attest receipt (empty for Android).
package struct AttestedEnrollmentKey {
    package let keyID: [UInt8]
    package let publicKey: P256PublicKey
    let receipt: [UInt8]

    package init(keyID: [UInt8], publicKey: P256PublicKey, receipt: [UInt8]) {
        self.keyID = keyID
        self.publicKey = publicKey
        self.receipt = receipt
    }
}

/// A new installation as enrollment stores it (docs/protocol.md §4.2, §4.2a): never the plaintext token.
package struct NewInstallation {
    package let handle: CanonicalUUID
    package let platform: AppProfile.Platform
    /// The profile's provider, stored for the installation's life; nil leaves it to migration
    /// 0009's trigger, which stores the platform's default (`apns` for ios, `fcm` for android).
    package let provider: String?
    package let key: AttestedEnrollmentKey
    package let appProfile: String
    /// The token custody envelope text (§7).
    let encryptedEndpoint: String
    package let endpointFingerprint: [UInt8]
    package let expiresAt: Int64

    /// A fresh handle for `key`, with the endpoint token sealed for custody and fingerprinted (§7)
    /// over `fingerprintInput` (the provider's part of the endpoint, §8b), the whole endpoint when nil.
    package init(
        platform: AppProfile.Platform, provider: String? = nil, key: AttestedEnrollmentKey, appProfile: String,
        endpoint: [UInt8], fingerprintInput: [UInt8]? = nil, expiresAt: Int64, keys: GatewayKeys
    ) throws {
        handle = try CanonicalUUID.version4()
        self.platform = platform
        self.provider = provider
        self.key = key
        self.appProfile = appProfile
        encryptedEndpoint = try keys.tokens.seal(endpoint)
        endpointFingerprint = keys.fingerprinter.fingerprint(profileID: appProfile, token: fingerprintInput ?? endpoint)
        self.expiresAt = expiresAt
    }
}

/// The authority store: every SQL statement of the lifecycle routes, named and parameterized, run on
/// a connection the caller leases (and, for writes, inside the caller's transaction). Times are the
/// injected wall clock's Unix seconds, passed as parameters rather than `now()`, so one clock decides
/// every expiry. Row locks are always taken installation first, then delegation (docs/protocol.md §4.7).
package struct InstallationStore {
    let connection: PostgresConnection

    package init(connection: PostgresConnection) {
        self.connection = connection
    }

    enum SQL {
        static let installationColumns = """
            handle::text, platform, provider, proof_key_id, proof_public_key, proof_counter, app_profile, \
            endpoint_fingerprint, endpoint_epoch, revoked_at IS NOT NULL, floor(extract(epoch FROM expires_at))::bigint
            """
        /// §4.1: consuming a challenge; the primary key makes a second use fail with 23505.
        static let consumeChallenge = """
            INSERT INTO consumed_challenges (challenge_id, expires_at) VALUES ($1::uuid, to_timestamp($2::bigint))
            """
        static let selectInstallation = "SELECT \(installationColumns) FROM installations WHERE handle = $1::uuid"
        static let lockInstallation = selectInstallation + " FOR UPDATE"
        /// Decision 0030: the partial unique indexes cannot test expiry, so expired rows that would
        /// conflict are deleted first (their delegations cascade).
        static let deleteExpiredConflicts = """
            DELETE FROM installations WHERE expires_at <= to_timestamp($4::bigint) \
            AND (app_attest_key_id = $1 OR (app_profile = $2 AND endpoint_fingerprint = $3))
            """
        /// §4.2: live installations holding the key id or the (profile, fingerprint) pair.
        static let lockLiveConflicts = """
            SELECT \(installationColumns) FROM installations WHERE revoked_at IS NULL \
            AND expires_at > to_timestamp($4::bigint) \
            AND (app_attest_key_id = $1 OR (app_profile = $2 AND endpoint_fingerprint = $3)) FOR UPDATE
            """
        /// Migration 0007 (docs/decisions/0450): the App Attest columns are written for both platforms
        /// while replicas of the previous release may read them; an iOS row's proof columns follow
        /// them by the migration's trigger, an Android row's are written here, without a counter. A
        /// NULL provider is filled with the platform's default by migration 0009's trigger.
        static let insertInstallation = """
            INSERT INTO installations (handle, platform, provider, app_attest_key_id, app_attest_public_key, \
            assertion_counter, proof_key_id, proof_public_key, proof_counter, app_profile, attestation_receipt, \
            encrypted_endpoint, endpoint_fingerprint, endpoint_epoch, expires_at) \
            VALUES ($1::uuid, $9, $10, $2, $3, 0, $2, $3, CASE WHEN $9 = 'ios' THEN 0 END, $4, $5, $6, $7, 1, \
            to_timestamp($8::bigint))
            """
        /// §5 assertion step 4: compare-and-advance (iOS only); the row is already locked, the
        /// condition guards it once more. The App Attest column is the one the previous release reads.
        static let advanceCounter = """
            UPDATE installations SET assertion_counter = $2::bigint, proof_counter = $2::bigint \
            WHERE handle = $1::uuid AND platform = 'ios' AND proof_counter < $2::bigint
            """
        static let lockDelegationGeneration = """
            SELECT generation FROM delegations WHERE installation_handle = $1::uuid AND relay_pubkey = $2 FOR UPDATE
            """
        /// §4.3: a new generation replaces the row (new delegation id, unrevoked again).
        static let upsertDelegation = """
            INSERT INTO delegations (installation_handle, relay_pubkey, delegation_id, generation, endpoint_epoch, \
            not_before, expires_at) VALUES ($1::uuid, $2, $3::uuid, $4::bigint, $5::bigint, to_timestamp($6::bigint), \
            to_timestamp($7::bigint)) ON CONFLICT (installation_handle, relay_pubkey) DO UPDATE SET \
            delegation_id = EXCLUDED.delegation_id, generation = EXCLUDED.generation, \
            endpoint_epoch = EXCLUDED.endpoint_epoch, not_before = EXCLUDED.not_before, \
            expires_at = EXCLUDED.expires_at, revoked_at = NULL, created_at = now() \
            WHERE delegations.generation < EXCLUDED.generation
            """
        /// §4.5: idempotent; an already revoked row keeps its first revocation time.
        static let revokeDelegation = """
            UPDATE delegations SET revoked_at = COALESCE(revoked_at, to_timestamp($3::bigint)) \
            WHERE installation_handle = $1::uuid AND relay_pubkey = $2
            """
        /// §4.4: whether another live installation of the profile holds the fingerprint.
        static let otherLiveEndpointHolder = """
            SELECT 1 FROM installations WHERE app_profile = $1 AND endpoint_fingerprint = $2 \
            AND revoked_at IS NULL AND expires_at > to_timestamp($3::bigint) AND handle <> $4::uuid
            """
        static let deleteExpiredEndpointHolders = """
            DELETE FROM installations WHERE expires_at <= to_timestamp($3::bigint) \
            AND app_profile = $1 AND endpoint_fingerprint = $2
            """
        static let rotateEndpoint = """
            UPDATE installations SET encrypted_endpoint = $2, endpoint_fingerprint = $3, endpoint_epoch = $4::bigint \
            WHERE handle = $1::uuid
            """
        /// §4.6: the tombstone takes the new epoch, so a retry recognizes it.
        static let revokeInstallation = """
            UPDATE installations SET revoked_at = to_timestamp($2::bigint), endpoint_epoch = $3::bigint \
            WHERE handle = $1::uuid
            """
        static let revokeDelegationsOfInstallation = """
            UPDATE delegations SET revoked_at = to_timestamp($2::bigint) \
            WHERE installation_handle = $1::uuid AND revoked_at IS NULL
            """
    }

    /// Inserts the challenge id; a reuse throws the unique violation.
    package func consumeChallenge(_ challengeID: CanonicalUUID, expiresAt: Int64) throws(PostgresError) {
        try connection.query(SQL.consumeChallenge, [.text(challengeID.text), .int64(expiresAt)])
    }

    /// The installation named `handle`, read without a lock (the installation stage of §1).
    package func installation(_ handle: CanonicalUUID) throws(PostgresError) -> InstallationRecord? {
        try Self.records(connection.query(SQL.selectInstallation, [.text(handle.text)])).first
    }

    /// The installation named `handle`, locked until the transaction ends.
    package func lockInstallation(_ handle: CanonicalUUID) throws(PostgresError) -> InstallationRecord? {
        try Self.records(connection.query(SQL.lockInstallation, [.text(handle.text)])).first
    }

    /// Stores `counter`; false when the stored counter is not lower (a lost race).
    package func advanceCounter(_ handle: CanonicalUUID, to counter: UInt32) throws(PostgresError) -> Bool {
        try connection.query(SQL.advanceCounter, [.text(handle.text), .int64(Int64(counter))]).affectedRowCount == 1
    }

    /// Deletes the expired installations that hold `keyID` or (`profile`, `fingerprint`), then
    /// locks and returns the live ones that do.
    package func lockLiveConflicts(
        keyID: [UInt8], profile: String, fingerprint: [UInt8], now: Int64
    ) throws(PostgresError) -> [InstallationRecord] {
        let parameters: [PostgresParameter] = [.bytes(keyID), .text(profile), .bytes(fingerprint), .int64(now)]
        try connection.query(SQL.deleteExpiredConflicts, parameters)
        return try Self.records(connection.query(SQL.lockLiveConflicts, parameters))
    }

    package func insertInstallation(_ installation: NewInstallation) throws(PostgresError) {
        try connection.query(
            SQL.insertInstallation,
            [
                .text(installation.handle.text), .bytes(installation.key.keyID),
                .bytes(installation.key.publicKey.uncompressedPoint), .text(installation.appProfile),
                installation.key.receipt.isEmpty ? .null : .bytes(installation.key.receipt),
                .bytes(Array(installation.encryptedEndpoint.utf8)), .bytes(installation.endpointFingerprint),
                .int64(installation.expiresAt), .text(installation.platform.rawValue),
                installation.provider.map { .text($0) } ?? .null,
            ])
    }

    /// The generation stored for (installation, relay), locked; nil when there is none.
    package func lockDelegationGeneration(installation: CanonicalUUID, relay: [UInt8]) throws(PostgresError) -> Int64? {
        let result = try connection.query(SQL.lockDelegationGeneration, [.text(installation.text), .bytes(relay)])
        guard result.rowCount == 1 else { return nil }
        return try result.int64(row: 0, column: 0)
    }

    /// Writes the delegation `grant` names for `installation` (docs/protocol.md §4.3) over any lower
    /// generation; false when a generation at least as high exists.
    package func upsertDelegation(
        _ grant: EndpointGrant, installation: CanonicalUUID, notBefore: Int64
    ) throws(PostgresError) -> Bool {
        try connection.query(
            SQL.upsertDelegation,
            [
                .text(installation.text), .bytes(grant.relayPublicKey), .text(grant.delegationID.text),
                .int64(grant.generation), .int64(grant.endpointEpoch), .int64(notBefore), .int64(grant.expiresAt),
            ]
        ).affectedRowCount == 1
    }

    package func revokeDelegation(installation: CanonicalUUID, relay: [UInt8], now: Int64) throws(PostgresError) {
        try connection.query(SQL.revokeDelegation, [.text(installation.text), .bytes(relay), .int64(now)])
    }

    /// Deletes expired holders of (`profile`, `fingerprint`); true when another live installation
    /// than `handle` holds it.
    package func endpointHeldByAnother(
        profile: String, fingerprint: [UInt8], handle: CanonicalUUID, now: Int64
    ) throws(PostgresError) -> Bool {
        try connection.query(SQL.deleteExpiredEndpointHolders, [.text(profile), .bytes(fingerprint), .int64(now)])
        let holders = try connection.query(
            SQL.otherLiveEndpointHolder, [.text(profile), .bytes(fingerprint), .int64(now), .text(handle.text)])
        return holders.rowCount > 0
    }

    package func rotateEndpoint(
        _ handle: CanonicalUUID, encryptedEndpoint: String, fingerprint: [UInt8], epoch: Int64
    ) throws(PostgresError) {
        try connection.query(
            SQL.rotateEndpoint,
            [.text(handle.text), .bytes(Array(encryptedEndpoint.utf8)), .bytes(fingerprint), .int64(epoch)])
    }

    /// Marks the installation revoked at `now` with `epoch` and revokes all its delegations.
    package func revokeInstallation(_ handle: CanonicalUUID, epoch: Int64, now: Int64) throws(PostgresError) {
        try connection.query(SQL.revokeInstallation, [.text(handle.text), .int64(now), .int64(epoch)])
        try connection.query(SQL.revokeDelegationsOfInstallation, [.text(handle.text), .int64(now)])
    }

    private static func records(_ result: PostgresResult) throws(PostgresError) -> [InstallationRecord] {
        var records: [InstallationRecord] = []
        for row in 0..<result.rowCount {
            let counter = try result.int64(row: row, column: 5)
            let proofCounter = counter.flatMap(UInt32.init(exactly:))
            guard let handle = try result.string(row: row, column: 0).flatMap(CanonicalUUID.init),
                let platform = try result.string(row: row, column: 1).flatMap(AppProfile.Platform.init(rawValue:)),
                let provider = try result.string(row: row, column: 2),
                let keyID = try result.bytes(row: row, column: 3),
                let point = try result.bytes(row: row, column: 4),
                let publicKey = try? P256PublicKey(uncompressedPoint: point),
                (proofCounter == nil) == (platform == .android), counter == nil || proofCounter != nil,
                let profile = try result.string(row: row, column: 6),
                let fingerprint = try result.bytes(row: row, column: 7),
                let epoch = try result.int64(row: row, column: 8),
                let revoked = try result.bool(row: row, column: 9),
                let expiresAt = try result.int64(row: row, column: 10)
            else { throw PostgresError(code: .decoding, message: "an installations row does not decode") }
            records.append(
                InstallationRecord(
                    handle: handle, platform: platform, provider: provider, keyID: keyID, publicKey: publicKey,
                    proofCounter: proofCounter,
                    appProfile: profile, endpointFingerprint: fingerprint, endpointEpoch: epoch, isRevoked: revoked,
                    expiresAt: expiresAt))
        }
        return records
    }
}
