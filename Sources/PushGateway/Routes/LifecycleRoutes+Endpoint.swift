import GatewayAPI
import GatewayLifecycle
import PushAttest
import PushHTTP

extension LifecycleRoutes {
    /// `POST /v1/installations/endpoint` (docs/protocol.md §4.4): a new APNs or FCM token and the next epoch.
    func rotateEndpoint(_ request: Request) -> Response {
        respond { () throws(LifecycleError) in try rotation(request) }
    }

    private func rotation(_ request: Request) throws(LifecycleError) -> Response {
        let now = Now(unixMilliseconds: clock.unixMilliseconds())
        let (rotate, asserted): (RotateEndpointRequest, AssertedRequest) = try parseAsserted(request)
        try performAsserted(asserted, now: now) { installation in
            installation.isLive(at: now.seconds) && installation.endpointEpoch == rotate.endpointEpoch
        } accepts: { installation in
            // §1: the installation's profile's provider decides the endpoint format; another is a 400.
            endpoint(rotate.endpoint, profile: configuration.profile(id: installation.appProfile)) != nil
        } apply: { store, installation in
            guard let token = endpoint(rotate.endpoint, profile: configuration.profile(id: installation.appProfile))
            else {
                throw LifecycleError(.invalidRequest)
            }
            let fingerprint = keys.fingerprinter.fingerprint(
                profileID: installation.appProfile,
                token: fingerprintInput(token, profile: configuration.profile(id: installation.appProfile)))
            // §4.4: the token of another live installation of the profile is refused with the same
            // 404 as any authority failure.
            if try store.endpointHeldByAnother(
                profile: installation.appProfile, fingerprint: fingerprint, handle: installation.handle,
                now: now.seconds)
            {
                throw LifecycleError(.notAuthorized)
            }
            // The epoch moves on, so every grant sealed to the old epoch stops opening a delivery.
            try store.rotateEndpoint(
                installation.handle, encryptedEndpoint: try keys.tokens.seal(token),
                fingerprint: fingerprint, epoch: rotate.newEndpointEpoch)
        }
        return .json(status: 200, #"{"status":"rotated"}"#)
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
