import GatewayAPI
import GatewayLifecycle
import PushAttest
import PushHTTP

extension LifecycleRoutes {
    /// `POST /v1/delegations/revoke` (docs/protocol.md §4.5).
    func revokeDelegation(_ request: Request) -> Response {
        respond { () throws(LifecycleError) in
            let (revoke, proof): (RevokeDelegationRequest, DeviceAssertion) = try parseAsserted(request)
            try flows.revokeDelegation(
                relayPublicKey: revoke.relayPublicKey.value.bytes, generation: revoke.generation, proof: proof,
                now: Now(unixMilliseconds: clock.unixMilliseconds())
            ) { () throws(LifecycleError) in try takeLifecycleToken(request) }
            return .json(status: 200, Self.revoked)
        }
    }

    /// `POST /v1/installations/revoke` (docs/protocol.md §4.6).
    func revokeInstallation(_ request: Request) -> Response {
        respond { () throws(LifecycleError) in
            let (revoke, proof): (RevokeInstallationRequest, DeviceAssertion) = try parseAsserted(request)
            try flows.revokeInstallation(
                endpointEpoch: revoke.endpointEpoch, newEndpointEpoch: revoke.newEndpointEpoch, proof: proof,
                now: Now(unixMilliseconds: clock.unixMilliseconds())
            ) { () throws(LifecycleError) in try takeLifecycleToken(request) }
            return .json(status: 200, Self.revoked)
        }
    }

    private static let revoked = #"{"status":"revoked"}"#
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
