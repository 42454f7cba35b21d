import GatewayAPI
import GatewayCredentials
import GatewayLifecycle
import PushAttest
import PushHTTP
import PushJSON

extension LifecycleRoutes {
    /// §4.3: `not_before` may lie at most this far ahead.
    static let maximumNotBeforeLeadSeconds: Int64 = 300

    /// `POST /v1/delegations` (docs/protocol.md §4.3).
    func delegate(_ request: Request) -> Response {
        respond { () throws(LifecycleError) in try delegation(request) }
    }

    private func delegation(_ request: Request) throws(LifecycleError) -> Response {
        let now = Now(unixMilliseconds: clock.unixMilliseconds())
        let (delegate, asserted): (DelegateRequest, AssertedRequest) = try parseAsserted(request)
        guard delegate.notBefore <= now.seconds + Self.maximumNotBeforeLeadSeconds,
            delegate.expiresAt <= now.seconds + configuration.maxGrantLifetimeSeconds
        else { throw LifecycleError(.invalidRequest) }
        let relay = delegate.relayPublicKey.value.bytes

        let grant = try performAsserted(asserted, now: now) { installation in
            // §4.3 authority: live, at the stated epoch, and never outliving the installation.
            installation.isLive(at: now.seconds) && installation.endpointEpoch == delegate.endpointEpoch
                && delegate.expiresAt <= installation.expiresAt
        } apply: { store, installation in
            // Generation strictly greater than any earlier one for (installation, relay).
            if let current = try store.lockDelegationGeneration(installation: installation.handle, relay: relay),
                current >= delegate.generation
            {
                throw LifecycleError(.notAuthorized)
            }
            let grant = EndpointGrant(
                delegationID: try CanonicalUUID.version4(), relayPublicKey: relay, appProfile: installation.appProfile,
                endpointEpoch: delegate.endpointEpoch, generation: delegate.generation, expiresAt: delegate.expiresAt)
            let sealed = try grant.sealed(with: keys.grants)
            guard try store.upsertDelegation(grant, installation: installation.handle, notBefore: delegate.notBefore)
            else { throw LifecycleError(.notAuthorized) }
            return sealed
        }

        var writer = JSONWriter(reservingCapacity: 64 + grant.utf8.count)
        writer.beginObject()
        writer.member("endpoint_grant", grant)
        writer.endObject()
        return .json(status: 201, writer.bytes)
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
