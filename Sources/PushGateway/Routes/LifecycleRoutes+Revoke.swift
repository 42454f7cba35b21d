import GatewayAPI
import GatewayLifecycle
import PushAttest
import PushHTTP

extension LifecycleRoutes {
    /// `POST /v1/delegations/revoke` (docs/protocol.md §4.5).
    func revokeDelegation(_ request: Request) -> Response {
        respond { () throws(LifecycleError) in try delegationRevocation(request) }
    }

    /// `POST /v1/installations/revoke` (docs/protocol.md §4.6).
    func revokeInstallation(_ request: Request) -> Response {
        respond { () throws(LifecycleError) in try installationRevocation(request) }
    }

    private static let revoked = #"{"status":"revoked"}"#

    private func delegationRevocation(_ request: Request) throws(LifecycleError) -> Response {
        let now = Now(unixMilliseconds: clock.unixMilliseconds())
        let (revoke, asserted): (RevokeDelegationRequest, AssertedRequest) = try parseAsserted(request)
        let relay = revoke.relayPublicKey.value.bytes

        try performAsserted(asserted, now: now) { installation in
            installation.isLive(at: now.seconds)
        } apply: { store, installation in
            // Only the current generation of the pair; revoking it again succeeds (idempotent).
            guard
                try store.lockDelegationGeneration(installation: installation.handle, relay: relay)
                    == revoke.generation
            else { throw LifecycleError(.notAuthorized) }
            try store.revokeDelegation(installation: installation.handle, relay: relay, now: now.seconds)
        }
        return .json(status: 200, Self.revoked)
    }

    private func installationRevocation(_ request: Request) throws(LifecycleError) -> Response {
        let now = Now(unixMilliseconds: clock.unixMilliseconds())
        let (revoke, asserted): (RevokeInstallationRequest, AssertedRequest) = try parseAsserted(request)

        try performAsserted(asserted, now: now) { installation in
            // §1: a live installation at the stated epoch, or (a retry) the unexpired tombstone this
            // very revocation left, whose epoch is `new_endpoint_epoch`.
            guard now.seconds < installation.expiresAt else { return false }
            return installation.isRevoked
                ? installation.endpointEpoch == revoke.newEndpointEpoch
                : installation.endpointEpoch == revoke.endpointEpoch
        } apply: { store, installation in
            guard !installation.isRevoked else { return }
            // The tombstone keeps the row until its expiry and takes the new epoch, so every grant
            // stops opening; every delegation is marked revoked too.
            try store.revokeInstallation(installation.handle, epoch: revoke.newEndpointEpoch, now: now.seconds)
        }
        return .json(status: 200, Self.revoked)
    }
}

extension RevokeDelegationRequest: AssertedRouteBody {
    func transcript(origin: String) -> AppAttestTranscript {
        .revokeDelegation(
            origin: origin, challengeID: proof.challengeID.text, challenge: proof.challenge.text,
            installationHandle: proof.installationHandle.text, relayPubkey: relayPublicKey.text,
            generation: generation)
    }
}

extension RevokeInstallationRequest: AssertedRouteBody {
    func transcript(origin: String) -> AppAttestTranscript {
        .revokeInstallation(
            origin: origin, challengeID: proof.challengeID.text, challenge: proof.challenge.text,
            installationHandle: proof.installationHandle.text, endpointEpoch: endpointEpoch,
            newEndpointEpoch: newEndpointEpoch)
    }
}
