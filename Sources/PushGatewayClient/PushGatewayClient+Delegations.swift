import Foundation

extension PushGatewayClient {
    /// Delegates to the relay `relayPubkey` (64 lowercase hex) and returns the grant to hand to it
    /// (docs/protocol.md §4.3). Every attempt uses the next generation, saved before it is sent, so
    /// a retry after a lost answer never reuses one; the new grant replaces the relay's previous
    /// one. `expiresAt` defaults to now + ``Configuration/grantLifetime`` and is cut to the
    /// installation's expiry.
    public func delegate(relayPubkey: String, expiresAt: Int64? = nil) async throws -> Grant {
        try Self.checkRelayPubkey(relayPubkey)
        try await finishPendingRotation()
        var (state, installation, keyID) = try enrolledState()
        let now = configuration.now()
        // A minute back, so that a device clock a little ahead of the gateway's is still valid.
        let notBefore = now - 60
        let grantExpiry = min(expiresAt ?? now + configuration.grantLifetime, installation.expiresAt)
        guard grantExpiry > now else { throw PushGatewayClientError.invalidArgument("expiresAt") }
        var generation: Int64 = 0
        let answer = try await assertionCall(.delegate, keyID: keyID, expectedStatus: 201, DelegationResponse.self) {
            challenge in
            generation = (state.delegations[relayPubkey]?.lastSentGeneration ?? 0) + 1
            state.delegations[relayPubkey, default: RelayDelegation(lastSentGeneration: 0, grant: nil)]
                .lastSentGeneration = generation
            try store.save(state)
            return .delegate(
                challenge: challenge, installationHandle: installation.handle,
                endpointEpoch: installation.endpointEpoch, generation: generation, relayPubkey: relayPubkey,
                notBefore: notBefore, expiresAt: grantExpiry)
        }
        let grant = Grant(
            endpointGrant: answer.endpointGrant, generation: generation, endpointEpoch: installation.endpointEpoch,
            notBefore: notBefore, expiresAt: grantExpiry)
        state.delegations[relayPubkey]?.grant = grant
        try store.save(state)
        return grant
    }

    /// Revokes the relay's current delegation (docs/protocol.md §4.5); repeating it is harmless.
    /// When a delegation's answer was lost, the generation sent last is tried first, then the one of
    /// the stored grant.
    public func revokeDelegation(relayPubkey: String) async throws {
        try Self.checkRelayPubkey(relayPubkey)
        try await finishPendingRotation()
        var (state, installation, keyID) = try enrolledState()
        guard let delegation = state.delegations[relayPubkey] else { throw PushGatewayClientError.unknownRelay }
        var candidates = [delegation.lastSentGeneration]
        if let granted = delegation.grant?.generation, granted != delegation.lastSentGeneration {
            candidates.append(granted)
        }
        var candidate = 0
        _ = try await assertionCall(
            .revokeDelegation, keyID: keyID, expectedStatus: 200, StatusResponse.self,
            prepare: { challenge in
                .revokeDelegation(
                    challenge: challenge, installationHandle: installation.handle, relayPubkey: relayPubkey,
                    generation: candidates[candidate])
            },
            afterNotAuthorized: { _ in
                guard candidate + 1 < candidates.count else { return false }
                candidate += 1
                return true
            })
        state.delegations[relayPubkey]?.grant = nil
        try store.save(state)
    }
}
