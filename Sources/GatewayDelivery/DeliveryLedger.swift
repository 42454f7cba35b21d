import GatewayAPI
import GatewayConfiguration
import GatewayCredentials
import PushNostr
import PushPostgres
import PushSystem

/// One delivery the gateway's own checks let through (docs/protocol.md §4.7, §4.8), with its
/// opened grant.
package struct AdmissionItem: Sendable {
    let grant: EndpointGrant
    /// Its request id and expiry are what the admission reserves.
    let delivery: DeliveryRequest

    package init(grant: EndpointGrant, delivery: DeliveryRequest) {
        self.grant = grant
        self.delivery = delivery
    }
}

/// Everything the admission transaction needs to know about one authenticated delivery request.
/// `package`: the delivery benchmark runs the same admission directly on PostgreSQL.
package struct AdmissionRequest: Sendable {
    let item: AdmissionItem
    /// The NIP-98 signer, already checked to equal the grant's relay, and its event, burned here.
    let authorization: NIP98Authorization
    /// The gateway's Unix time in seconds for every time comparison of this request.
    let now: Int64
    /// When the request's 408 is due, in Unix milliseconds of the real-time clock; the database
    /// refuses to begin the admission after it by its own clock.
    let deadlineUnixMilliseconds: Int64

    package init(
        item: AdmissionItem, authorization: NIP98Authorization, now: Int64, deadlineUnixMilliseconds: Int64
    ) {
        self.item = item
        self.authorization = authorization
        self.now = now
        self.deadlineUnixMilliseconds = deadlineUnixMilliseconds
    }

    /// A request's 408 instant (`Request.deadline`) on the real-time clock (not an injected protocol
    /// clock: it is compared with the database server's clock, docs/protocol.md §1).
    package static func deadline(_ deadline: MonotonicInstant) -> Int64 {
        SystemWallClock.unixMilliseconds(at: deadline)
    }
}

/// What the admission transaction decided (docs/protocol.md §4.7).
package enum AdmissionDecision: Sendable, Equatable {
    /// Any authority, replay, reservation or quota failure; nothing was written.
    case refused
    /// Step 5: the epoch's endpoint is dead. Nothing was written (the burn and the reservation
    /// rolled back), no quota charged and nothing is sent.
    case deadEndpoint(invalidAtSeconds: Int64?)
    /// The request's deadline had passed by the database's clock before the admission began
    /// (docs/protocol.md §1: work not begun by the 408 never begins); nothing was written.
    case late
    /// Committed: the send may begin.
    case admitted(AdmittedDelivery)

    var isAdmitted: Bool {
        if case .admitted = self { return true }
        return false
    }
}

/// An admitted delivery: what the send and the bookkeeping after it need.
package struct AdmittedDelivery: Sendable, Equatable {
    let installationHandle: String
    /// The token custody envelope as stored (`<key id>.<base64url>` text bytes).
    let sealedToken: [UInt8]
    /// The provider the installation stored at enrollment (docs/protocol.md "Platforms and
    /// providers"), read under the admission's row lock; a delivery whose profile now names
    /// another provider is a configuration fault.
    let provider: String
}

/// The delivery rows of the shared database (docs/decisions/0030-schema.md): admission in one
/// transaction, and the bookkeeping after the APNs answer.
package struct DeliveryLedger: Sendable {
    let pool: PostgresPool
    let quotaMaximum: Int64
    let quotaWindowSeconds: Int64

    /// How long a burned NIP-98 event id is kept after its `created_at` (docs/decisions/0080).
    static let replayRetentionSeconds: Int64 = 120

    /// docs/protocol.md §4.7 admission: the migration's `admit_delivery_with_provider` function is the whole READ
    /// COMMITTED transaction. Its row locks (installation, then delegation) serialize it against
    /// revocations and rotations, which lock in the same order; its commit is the instant the send
    /// begins (docs/decisions/0191). It is called with the protocol's FunctionCall message, so
    /// PostgreSQL parses and plans no statement for it (docs/decisions/0300), inside a transaction
    /// whose `SET LOCAL` statement timeout bounds it (docs/decisions/0341). Throws only for storage
    /// failures (→ 503).
    package func admit(_ request: AdmissionRequest) throws -> AdmissionDecision {
        do {
            return try admitOnce(request)
        } catch let failure as PostgresError where failure.isUndefinedFunction {
            // A migration recreated the function since this session resolved it; the failed call ran
            // nothing and rolled its transaction back, and the session now resolves it afresh.
            return try admitOnce(request)
        }
    }

    private func admitOnce(_ request: AdmissionRequest) throws -> AdmissionDecision {
        // The verifier accepted created_at within [now − 60, now + 30], so the sum cannot overflow.
        let replayExpiresAt = request.authorization.createdAt + Self.replayRetentionSeconds
        do {
            return try pool.withConnection { connection in
                try connection.withTransaction(isolation: .readCommitted) { transaction in
                    let record = try transaction.callFunction(
                        Self.admitDelivery,
                        arguments: [
                            .bytes(request.item.grant.delegationID.bytes),
                            .bytes(request.authorization.relayPublicKey.bytes),
                            .text(request.item.grant.appProfile), .int64(request.item.grant.endpointEpoch),
                            .int64(request.item.grant.generation), .bytes(request.authorization.eventID),
                            .int64(replayExpiresAt),
                            .bytes(request.item.delivery.requestID.bytes), .int64(request.item.delivery.expiresAt),
                            .int64(request.now),
                            .int64(quotaWindowSeconds), .int64(quotaMaximum),
                            .int64(request.deadlineUnixMilliseconds), .int64(pool.lockTimeoutMilliseconds),
                        ])
                    let decision = try Self.decision(record)
                    if decision.isAdmitted { try Self.requireTimeToCommit(request.deadlineUnixMilliseconds) }
                    return decision
                }
            }
        } catch let failure as DeliveryError where failure.code == .pastDeadlineBeforeCommit {
            return .late
        } catch let failure as PostgresError
            where failure.isLockTimeout
            && SystemWallClock().unixMilliseconds() >= request.deadlineUnixMilliseconds
        {
            // The lock wait ran into the deadline the function set as its bound: the 408 is out and
            // nothing was written.
            return .late
        } catch let failure as PostgresError where failure.sqlState == Self.refusedAfterWrite {
            // A write the checks under the installation lock promised failed; the statement's
            // rollback undid the others, so this is an ordinary refusal.
            return .refused
        }
    }

    /// `admit_delivery_with_provider`'s OUT parameters o_outcome, o_handle, o_encrypted_endpoint,
    /// o_dead_invalid_at, o_provider. A decoding failure throws inside the admission's transaction,
    /// so nothing it wrote commits.
    private static func decision(_ record: PostgresRecord?) throws(PostgresError) -> AdmissionDecision {
        guard let record, record.fields.count == 5, let outcome = try record.string(0) else {
            throw PostgresError(code: .decoding, message: "admit_delivery_with_provider returned no outcome")
        }
        switch outcome {
        case "admitted":
            guard let handle = try record.string(1), let sealedToken = try record.bytes(2),
                let provider = try record.string(4)
            else {
                throw PostgresError(code: .decoding, message: "admit_delivery_with_provider admitted without a row")
            }
            return .admitted(AdmittedDelivery(installationHandle: handle, sealedToken: sealedToken, provider: provider))
        case "dead":
            return .deadEndpoint(invalidAtSeconds: try record.int64(3))
        case "late":
            return .late
        default:
            return .refused
        }
    }

    /// The admission function of migration 0009: migration 0004's `admit_delivery`, which the
    /// previous release calls, plus the installation's provider.
    static let admitDelivery = PostgresFunction(
        signature:
            "admit_delivery_with_provider(uuid, bytea, text, bigint, bigint, bytea, bigint, uuid, bigint, bigint, "
            + "bigint, bigint, bigint, bigint)")

    /// The SQLSTATE the admission functions raise to roll back a write that a later step refused.
    static let refusedAfterWrite = "PGW01"

    /// Throws inside an admission transaction to roll it back when the 408 is due before the COMMIT
    /// could go out.
    static func requireTimeToCommit(_ deadlineUnixMilliseconds: Int64) throws(DeliveryError) {
        guard SystemWallClock().unixMilliseconds() < deadlineUnixMilliseconds else {
            throw DeliveryError(.pastDeadlineBeforeCommit)
        }
    }

    /// One statement in its own transaction, so the configured statement and lock timeouts bound it
    /// (docs/decisions/0341).
    private func runBounded(_ sql: String, _ parameters: [PostgresParameter]) throws {
        try pool.withConnection { connection in
            try connection.withTransaction(isolation: .readCommitted) { transaction in
                _ = try transaction.query(sql, parameters)
            }
        }
    }

    /// After a transient or configuration outcome: the relay may retry the same request id with a
    /// fresh NIP-98 event (docs/protocol.md §4.7).
    package func releaseReservation(relayPublicKey: [UInt8], requestID: CanonicalUUID) throws {
        try runBounded(
            "DELETE FROM delivery_reservations WHERE relay_pubkey = $1 AND request_id = $2::uuid",
            [.bytes(relayPublicKey), .text(requestID.text)])
    }

    /// After APNs said the token is gone: marks the installation's endpoint of `epoch` dead, so
    /// every later delivery on that epoch answers 410 without a send. A rotation that already moved
    /// the installation to a new epoch is left alone.
    package func markEndpointDead(installationHandle: String, epoch: Int64, invalidAtSeconds: Int64?) throws {
        try runBounded(
            """
            UPDATE installations
            SET dead_endpoint_epoch = $2::bigint, dead_endpoint_invalid_at = to_timestamp($3::bigint)
            WHERE handle = $1::uuid AND endpoint_epoch = $2::bigint
            """,
            [.text(installationHandle), .int64(epoch), invalidAtSeconds.map { .int64($0) } ?? .null])
    }
}

extension DeliveryLedger {
    /// The ledger with the configured per-endpoint quota (docs/protocol.md §4.7), for the gateway and
    /// the delivery benchmark alike.
    package init(pool: PostgresPool, configuration: GatewayConfiguration) {
        self.init(
            pool: pool, quotaMaximum: configuration.endpointQuotaMax,
            quotaWindowSeconds: configuration.endpointQuotaWindowSeconds)
    }
}
