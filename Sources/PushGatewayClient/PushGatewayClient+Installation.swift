import Foundation

extension PushGatewayClient {
    /// Moves the installation to a new device token (docs/protocol.md §4.4) and returns the relays
    /// to delegate to again: every grant of the old epoch stops working. The rotation is recorded
    /// before it is sent; if its answer is lost, a `404` at the old epoch means it took effect, and
    /// the client confirms that by rotating once more from the next epoch.
    @discardableResult
    public func rotateEndpoint(to endpoint: String) async throws -> [String] {
        try Self.checkEndpoint(endpoint)
        var (state, installation, keyID) = try enrolledState()
        var epoch = installation.endpointEpoch
        var rotatedEarlierFrom = state.pendingRotation?.fromEpoch
        _ = try await assertionCall(
            .rotateEndpoint, keyID: keyID, expectedStatus: 200, StatusResponse.self,
            prepare: { challenge in
                state.pendingRotation = PendingRotation(fromEpoch: epoch, endpoint: endpoint)
                try store.save(state)
                return .rotateEndpoint(
                    challenge: challenge, installationHandle: installation.handle, endpointEpoch: epoch,
                    endpoint: endpoint)
            },
            afterNotAuthorized: { earlierOutcomeUnknown in
                guard earlierOutcomeUnknown || rotatedEarlierFrom == epoch else { return false }
                rotatedEarlierFrom = nil
                epoch += 1
                return true
            })
        installation.endpoint = endpoint
        installation.endpointEpoch = epoch + 1
        state.installation = installation
        state.pendingRotation = nil
        for relay in state.delegations.keys { state.delegations[relay]?.grant = nil }
        try store.save(state)
        return state.relaysToDelegateAgain
    }

    /// Revokes the installation (docs/protocol.md §4.6): every grant dies with it. Repeating it is
    /// harmless. The stored state is cleared, key included (Apple attests a key only once), so the
    /// next ``register(endpoint:)`` enrolls anew.
    public func revokeInstallation() async throws {
        try await finishPendingRotation()
        let (_, installation, keyID) = try enrolledState()
        _ = try await assertionCall(
            .revokeInstallation, keyID: keyID, expectedStatus: 200, StatusResponse.self
        ) { challenge in
            .revokeInstallation(
                challenge: challenge, installationHandle: installation.handle,
                endpointEpoch: installation.endpointEpoch)
        }
        try store.save(InstallationState())
    }

    /// Settles a rotation whose answer never arrived (the app was killed, or the call gave up), so
    /// that the other calls use the epoch the gateway has.
    func finishPendingRotation() async throws {
        guard let pending = try store.load().pendingRotation else { return }
        try await rotateEndpoint(to: pending.endpoint)
    }
}
