import GatewayAPI
import GatewayLifecycle
import PushAttest
import PushHTTP
import PushJSON

extension LifecycleRoutes {
    /// `POST /v1/delegations` (docs/protocol.md §4.3).
    func delegate(_ request: Request) -> Response {
        respond { () throws(LifecycleError) in
            let (delegate, proof): (DelegateRequest, DeviceAssertion) = try parseAsserted(request)
            let grant = try flows.delegate(
                relayPublicKey: delegate.relayPublicKey.value.bytes, endpointEpoch: delegate.endpointEpoch,
                generation: delegate.generation, notBefore: delegate.notBefore, expiresAt: delegate.expiresAt,
                proof: proof, now: Now(unixMilliseconds: clock.unixMilliseconds())
            ) { () throws(LifecycleError) in try takeLifecycleToken(request) }

            var writer = JSONWriter(reservingCapacity: 64 + grant.utf8.count)
            writer.beginObject()
            writer.member("endpoint_grant", grant)
            writer.endObject()
            return .json(status: 201, writer.bytes)
        }
    }
}

extension DelegateRequest: AssertedRouteBody {
    func transcript(origin: String) -> AppAttestTranscript {
        .delegate(
            origin: origin, challengeID: proof.challengeID.text, challenge: proof.challenge.text,
            installationHandle: proof.installationHandle.text, endpointEpoch: endpointEpoch, generation: generation,
            relayPubkey: relayPublicKey.text, notBefore: notBefore, expiresAt: expiresAt)
    }
}
