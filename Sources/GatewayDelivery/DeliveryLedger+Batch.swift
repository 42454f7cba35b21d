import GatewayCredentials
import PushNostr
import PushPostgres
import PushSystem

/// Everything the batch admission transaction needs: one NIP-98 event for every item.
package struct BatchAdmissionRequest: Sendable {
    /// The NIP-98 signer, already checked to equal every item's grant relay, and its event.
    let authorization: NIP98Authorization
    /// In request order.
    let items: [AdmissionItem]
    /// The gateway's Unix time in seconds for every time comparison of this request.
    let now: Int64
    /// As `AdmissionRequest.deadlineUnixMilliseconds`: the database begins nothing after it.
    let deadlineUnixMilliseconds: Int64
}

extension DeliveryLedger {
    /// docs/protocol.md §4.8 admission: migration 0009's `admit_delivery_batch_with_provider`
    /// function (migration 0006's `admit_delivery_batch` plus each admitted installation's provider)
    /// is the whole READ COMMITTED transaction for every item (docs/decisions/0220), bounded by its `SET LOCAL`
    /// statement timeout (docs/decisions/0341). Returns one decision per item, in request order.
    /// Throws only for storage failures (→ 503, nothing admitted).
    package func admitBatch(_ request: BatchAdmissionRequest) throws -> [AdmissionDecision] {
        let items = request.items
        guard !items.isEmpty else { return [] }
        // The verifier accepted created_at within [now − 60, now + 30], so the sum cannot overflow.
        let replayExpiresAt = request.authorization.createdAt + Self.replayRetentionSeconds
        do {
            return try pool.withConnection { connection in
                try connection.withTransaction(isolation: .readCommitted) { transaction in
                    let result = try transaction.query(
                        """
                        SELECT o_item, o_outcome, o_handle, o_encrypted_endpoint, o_dead_invalid_at, o_provider
                        FROM admit_delivery_batch_with_provider($1, $2, $3::bigint, $4::uuid[], $5::text[],
                                                                $6::bigint[], $7::bigint[], $8::uuid[], $9::bigint[],
                                                                $10::bigint, $11::bigint, $12::bigint, $13::bigint,
                                                                $14::bigint)
                        """,
                        [
                            .bytes(request.authorization.relayPublicKey.bytes), .bytes(request.authorization.eventID),
                            .int64(replayExpiresAt),
                            .uuidArray(items.map(\.grant.delegationID.bytes)),
                            .textArray(items.map(\.grant.appProfile)), .int64Array(items.map(\.grant.endpointEpoch)),
                            .int64Array(items.map(\.grant.generation)),
                            .uuidArray(items.map(\.delivery.requestID.bytes)),
                            .int64Array(items.map(\.delivery.expiresAt)), .int64(request.now),
                            .int64(quotaWindowSeconds), .int64(quotaMaximum), .int64(request.deadlineUnixMilliseconds),
                            .int64(pool.lockTimeoutMilliseconds),
                        ], resultFormat: .binary)
                    let decisions = try Self.decisions(result, count: items.count)
                    if decisions.contains(where: \.isAdmitted) {
                        try Self.requireTimeToCommit(request.deadlineUnixMilliseconds)
                    }
                    return decisions
                }
            }
        } catch let failure as DeliveryError where failure.code == .pastDeadlineBeforeCommit {
            return Array(repeating: .late, count: items.count)
        } catch let failure as PostgresError
            where failure.isLockTimeout
            && SystemWallClock().unixMilliseconds() >= request.deadlineUnixMilliseconds
        {
            // The lock wait ran into the deadline: the 408 is out and nothing was written.
            return Array(repeating: .late, count: items.count)
        } catch let failure as PostgresError where failure.sqlState == Self.refusedAfterWrite {
            // A charge (or the burn) the checks promised failed; the statement's rollback undid every write.
            return Array(repeating: .refused, count: items.count)
        }
    }

    /// `admit_delivery_batch_with_provider`'s rows: one per item, in request order. A decoding
    /// failure throws inside the admission's transaction, so nothing it wrote commits.
    private static func decisions(_ result: PostgresResult, count: Int) throws(PostgresError) -> [AdmissionDecision] {
        guard result.rowCount == count else {
            throw PostgresError(
                code: .decoding, message: "admit_delivery_batch_with_provider returned another number of items")
        }
        var decisions: [AdmissionDecision] = []
        decisions.reserveCapacity(count)
        for row in 0..<count {
            guard try result.int64(row: row, column: 0) == Int64(row + 1),
                let outcome = try result.string(row: row, column: 1)
            else {
                throw PostgresError(
                    code: .decoding, message: "admit_delivery_batch_with_provider returned items out of order")
            }
            switch outcome {
            case "admitted":
                guard let handle = try result.string(row: row, column: 2),
                    let sealedToken = try result.bytes(row: row, column: 3),
                    let provider = try result.string(row: row, column: 5)
                else {
                    throw PostgresError(
                        code: .decoding, message: "admit_delivery_batch_with_provider admitted without a row")
                }
                decisions.append(
                    .admitted(
                        AdmittedDelivery(installationHandle: handle, sealedToken: sealedToken, provider: provider)))
            case "dead":
                decisions.append(.deadEndpoint(invalidAtSeconds: try result.int64(row: row, column: 4)))
            case "late":
                decisions.append(.late)
            default:
                decisions.append(.refused)
            }
        }
        return decisions
    }
}
