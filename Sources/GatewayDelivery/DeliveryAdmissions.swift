import GatewayCredentials

/// The database side of a delivery (docs/protocol.md §4.7, §4.8): the admission transaction and the
/// bookkeeping after the push. `DeliveryLedger` is it on PostgreSQL; the pipeline sees only this
/// (docs/decisions/0750). Every call may block, so the pipeline makes them on workers only.
package protocol DeliveryAdmissions: Sendable {
    /// One delivery's admission transaction. Throws only for storage failures (→ 503).
    func admit(_ request: AdmissionRequest) throws -> AdmissionDecision

    /// A batch's one admission transaction: one decision per item, in request order. Throws only for
    /// storage failures (→ 503, nothing admitted).
    func admitBatch(_ request: BatchAdmissionRequest) throws -> [AdmissionDecision]

    /// After a transient or configuration outcome: the relay may retry the same request id.
    func releaseReservation(relayPublicKey: [UInt8], requestID: CanonicalUUID) throws

    /// After the push service said the token is gone: the installation's endpoint of `epoch` is dead.
    func markEndpointDead(installationHandle: String, epoch: Int64, invalidAtSeconds: Int64?) throws
}

extension DeliveryLedger: DeliveryAdmissions {}
