import GatewayAPI
import GatewayLifecycle
import PushAttest
import PushHTTP

extension LifecycleRoutes {
    /// `POST /v1/installations/endpoint` (docs/protocol.md §4.4): a new APNs or FCM token and the next epoch.
    func rotateEndpoint(_ request: Request) -> Response {
        respond { () throws(LifecycleError) in
            let (rotate, proof): (RotateEndpointRequest, DeviceAssertion) = try parseAsserted(request)
            try flows.rotateEndpoint(
                rotate.endpoint, endpointEpoch: rotate.endpointEpoch, newEndpointEpoch: rotate.newEndpointEpoch,
                proof: proof, now: Now(unixMilliseconds: clock.unixMilliseconds())
            ) { () throws(LifecycleError) in try takeLifecycleToken(request) }
            return .json(status: 200, #"{"status":"rotated"}"#)
        }
    }
}

extension RotateEndpointRequest: AssertedRouteBody {
    func transcript(origin: String) -> AppAttestTranscript {
        .rotateEndpoint(
            origin: origin, challengeID: proof.challengeID.text, challenge: proof.challenge.text,
            installationHandle: proof.installationHandle.text, endpointEpoch: endpointEpoch,
            newEndpointEpoch: newEndpointEpoch, endpoint: endpoint)
    }
}
