import PushPostgres

/// Everything the admission transaction needs to know about one authenticated delivery request.
/// `package`: the delivery benchmark runs the same admission directly on PostgreSQL.
package struct AdmissionRequest: Sendable {
    let grant: EndpointGrant
    /// The NIP-98 signer, already checked to equal the grant's relay.
    let relayPublicKey: [UInt8]
    let authEventID: [UInt8]
    let authEventCreatedAt: Int64
    let requestID: CanonicalUUID
    let requestExpiresAt: Int64
    /// The gateway's Unix time in seconds for every time comparison of this request.
    let now: Int64

    package init(
        grant: EndpointGrant, relayPublicKey: [UInt8], authEventID: [UInt8], authEventCreatedAt: Int64,
        requestID: CanonicalUUID, requestExpiresAt: Int64, now: Int64
    ) {
        self.grant = grant
        self.relayPublicKey = relayPublicKey
        self.authEventID = authEventID
        self.authEventCreatedAt = authEventCreatedAt
        self.requestID = requestID
        self.requestExpiresAt = requestExpiresAt
        self.now = now
    }
}

/// What the admission transaction decided (PROTOCOL.md §4.7).
package enum AdmissionDecision: Sendable, Equatable {
    /// Any authority, replay, reservation or quota failure; nothing was written.
    case refused
    /// Step 5: the epoch's endpoint is dead. Nothing was written (the burn and the reservation
    /// rolled back), no quota charged and nothing is sent.
    case deadEndpoint(invalidAtSeconds: Int64?)
    /// Committed: the send may begin.
    case admitted(AdmittedDelivery)
}

/// An admitted delivery: what the send and the bookkeeping after it need.
package struct AdmittedDelivery: Sendable, Equatable {
    let installationHandle: String
    /// The token custody envelope as stored (`<key id>.<base64url>` text bytes).
    let sealedToken: [UInt8]
}

/// The delivery rows of the shared database (docs/decisions/0030-schema.md): admission in one
/// transaction, and the bookkeeping after the APNs answer.
package struct DeliveryLedger: Sendable {
    let pool: PostgresPool
    let quotaMaximum: Int64
    let quotaWindowSeconds: Int64

    package init(pool: PostgresPool, quotaMaximum: Int64, quotaWindowSeconds: Int64) {
        self.pool = pool
        self.quotaMaximum = quotaMaximum
        self.quotaWindowSeconds = quotaWindowSeconds
    }

    /// How long a burned NIP-98 event id is kept after its `created_at` (docs/decisions/0080).
    static let replayRetentionSeconds: Int64 = 120

    /// PROTOCOL.md §4.7 admission: one READ COMMITTED transaction whose row locks (installation, then
    /// delegation) serialize it against revocations and rotations, which lock in the same order.
    /// Its commit is the instant the send begins. Throws only for storage failures (→ 503).
    package func admit(_ request: AdmissionRequest) throws -> AdmissionDecision {
        try pool.withConnection { connection in
            do {
                return try connection.withTransaction(isolation: .readCommitted) { transaction in
                    try admit(request, in: transaction)
                }
            } catch is Refusal {
                // withTransaction rolled everything back: no event burned, nothing reserved or charged.
                return .refused
            } catch let dead as DeadEndpoint {
                // §4.7 step 5: the dead path writes nothing, so a relay hammering it grows no table.
                return .deadEndpoint(invalidAtSeconds: dead.invalidAtSeconds)
            }
        }
    }

    /// The admission steps in order; throwing `Refusal` rolls the transaction back.
    private func admit(_ request: AdmissionRequest, in transaction: PostgresConnection) throws -> AdmissionDecision {
        let installation = try lockInstallation(request, in: transaction)
        try lockDelegation(request, installationHandle: installation.handle, in: transaction)
        try burnEvent(request, in: transaction)
        try reserveRequest(request, in: transaction)
        if installation.deadEndpointEpoch == request.grant.endpointEpoch {
            throw DeadEndpoint(invalidAtSeconds: installation.deadEndpointInvalidAt)
        }
        try chargeQuota(fingerprint: installation.fingerprint, now: request.now, in: transaction)
        return .admitted(
            AdmittedDelivery(installationHandle: installation.handle, sealedToken: installation.sealedToken))
    }

    /// An authority, replay, reservation or quota check failed.
    private struct Refusal: Error {}

    /// Step 5 found the epoch's endpoint dead: thrown so that steps 3–4 roll back.
    private struct DeadEndpoint: Error {
        let invalidAtSeconds: Int64?
    }

    private struct LockedInstallation {
        let handle: String
        let sealedToken: [UInt8]
        let fingerprint: [UInt8]
        let deadEndpointEpoch: Int64?
        let deadEndpointInvalidAt: Int64?
    }

    /// Step 1: the installation the delegation belongs to, live, unexpired and at the grant's epoch
    /// and profile. `FOR UPDATE` re-evaluates the conditions on the newest row version after waiting
    /// for a concurrent revocation or rotation, so one that committed first is always seen.
    private func lockInstallation(
        _ request: AdmissionRequest, in transaction: PostgresConnection
    ) throws -> LockedInstallation {
        let result = try transaction.query(
            """
            SELECT handle, encrypted_endpoint, endpoint_fingerprint, dead_endpoint_epoch, dead_endpoint_invalid_at
            FROM installations
            WHERE handle = (SELECT installation_handle FROM delegations WHERE delegation_id = $1::uuid)
              AND revoked_at IS NULL AND expires_at > to_timestamp($2::bigint)
              AND endpoint_epoch = $3::bigint AND app_profile = $4::text
            FOR UPDATE
            """,
            [
                .text(request.grant.delegationID.text), .int64(request.now), .int64(request.grant.endpointEpoch),
                .text(request.grant.appProfile),
            ], resultFormat: .binary)
        guard result.rowCount == 1, let handle = try result.string(row: 0, column: 0),
            let sealedToken = try result.bytes(row: 0, column: 1),
            let fingerprint = try result.bytes(row: 0, column: 2)
        else { throw Refusal() }
        return LockedInstallation(
            handle: handle, sealedToken: sealedToken, fingerprint: fingerprint,
            deadEndpointEpoch: try result.int64(row: 0, column: 3),
            deadEndpointInvalidAt: try result.unixSeconds(row: 0, column: 4))
    }

    /// Step 2: the delegation row still carries exactly this grant (same id, relay, epoch and
    /// generation), is unrevoked and `not_before <= now <= expires_at`.
    private func lockDelegation(
        _ request: AdmissionRequest, installationHandle: String, in transaction: PostgresConnection
    ) throws {
        let result = try transaction.query(
            """
            SELECT 1 FROM delegations
            WHERE installation_handle = $1::uuid AND relay_pubkey = $2 AND delegation_id = $3::uuid
              AND endpoint_epoch = $4::bigint AND generation = $5::bigint AND revoked_at IS NULL
              AND not_before <= to_timestamp($6::bigint) AND expires_at >= to_timestamp($6::bigint)
            FOR UPDATE
            """,
            [
                .text(installationHandle), .bytes(request.relayPublicKey), .text(request.grant.delegationID.text),
                .int64(request.grant.endpointEpoch), .int64(request.grant.generation), .int64(request.now),
            ])
        guard result.rowCount == 1 else { throw Refusal() }
    }

    /// Step 3: `(relay, event id)` is admitted once. A concurrent insert of the same key waits for
    /// the other transaction and then conflicts, so two racing requests cannot both pass.
    private func burnEvent(_ request: AdmissionRequest, in transaction: PostgresConnection) throws {
        // The verifier accepted created_at within [now − 60, now + 30], so the sum cannot overflow.
        let expiresAt = request.authEventCreatedAt + Self.replayRetentionSeconds
        let result = try transaction.query(
            """
            INSERT INTO nip98_replays (relay_pubkey, auth_event_id, expires_at)
            VALUES ($1, $2, to_timestamp($3::bigint))
            ON CONFLICT DO NOTHING
            """,
            [.bytes(request.relayPublicKey), .bytes(request.authEventID), .int64(expiresAt)])
        guard result.affectedRowCount == 1 else { throw Refusal() }
    }

    /// Step 4: `(relay, request_id)` is reserved until the request's `expires_at`. A reservation
    /// whose time has passed (not yet reaped) no longer counts and is taken over.
    private func reserveRequest(_ request: AdmissionRequest, in transaction: PostgresConnection) throws {
        let result = try transaction.query(
            """
            INSERT INTO delivery_reservations AS r (relay_pubkey, request_id, expires_at)
            VALUES ($1, $2::uuid, to_timestamp($3::bigint))
            ON CONFLICT (relay_pubkey, request_id) DO UPDATE SET expires_at = EXCLUDED.expires_at
            WHERE r.expires_at < to_timestamp($4::bigint)
            """,
            [
                .bytes(request.relayPublicKey), .text(request.requestID.text), .int64(request.requestExpiresAt),
                .int64(request.now),
            ])
        guard result.affectedRowCount == 1 else { throw Refusal() }
    }

    /// Step 6: a fixed window per endpoint fingerprint that starts at the first admission after the
    /// previous window ended; at most `quotaMaximum` admissions per window, never refunded.
    private func chargeQuota(fingerprint: [UInt8], now: Int64, in transaction: PostgresConnection) throws {
        let result = try transaction.query(
            """
            INSERT INTO endpoint_quota_windows AS q (endpoint_fingerprint, window_started_at, admitted_count)
            VALUES ($1, to_timestamp($2::bigint), 1)
            ON CONFLICT (endpoint_fingerprint) DO UPDATE SET
              window_started_at = CASE
                WHEN q.window_started_at + make_interval(secs => $3::bigint) <= EXCLUDED.window_started_at
                THEN EXCLUDED.window_started_at ELSE q.window_started_at END,
              admitted_count = CASE
                WHEN q.window_started_at + make_interval(secs => $3::bigint) <= EXCLUDED.window_started_at
                THEN 1 ELSE q.admitted_count + 1 END
            WHERE q.window_started_at + make_interval(secs => $3::bigint) <= EXCLUDED.window_started_at
               OR q.admitted_count < $4::bigint
            """,
            [.bytes(fingerprint), .int64(now), .int64(quotaWindowSeconds), .int64(quotaMaximum)])
        guard result.affectedRowCount == 1 else { throw Refusal() }
    }

    /// After a transient or configuration outcome: the relay may retry the same request id with a
    /// fresh NIP-98 event (PROTOCOL.md §4.7).
    func releaseReservation(relayPublicKey: [UInt8], requestID: CanonicalUUID) throws {
        _ = try pool.withConnection { connection in
            try connection.query(
                "DELETE FROM delivery_reservations WHERE relay_pubkey = $1 AND request_id = $2::uuid",
                [.bytes(relayPublicKey), .text(requestID.text)])
        }
    }

    /// After APNs said the token is gone: marks the installation's endpoint of `epoch` dead, so
    /// every later delivery on that epoch answers 410 without a send. A rotation that already moved
    /// the installation to a new epoch is left alone.
    func markEndpointDead(installationHandle: String, epoch: Int64, invalidAtSeconds: Int64?) throws {
        _ = try pool.withConnection { connection in
            try connection.query(
                """
                UPDATE installations
                SET dead_endpoint_epoch = $2::bigint, dead_endpoint_invalid_at = to_timestamp($3::bigint)
                WHERE handle = $1::uuid AND endpoint_epoch = $2::bigint
                """,
                [.text(installationHandle), .int64(epoch), invalidAtSeconds.map { .int64($0) } ?? .null])
        }
    }
}
