import GatewayCredentials
import PushCrypto

extension LifecycleFlows {
    /// §4.3: writes the delegation of (installation, `relay`) and returns its sealed endpoint grant.
    /// `takeToken` takes the source's lifecycle token once the request's own rules passed (§1).
    package func delegate(
        relayPublicKey relay: [UInt8], endpointEpoch: Int64, generation: Int64, notBefore: Int64, expiresAt: Int64,
        proof: DeviceAssertion, now: LifecycleInstant, takeToken: () throws(LifecycleError) -> Void
    ) throws(LifecycleError) -> String {
        guard notBefore <= now.seconds + Self.maximumNotBeforeLeadSeconds,
            expiresAt <= now.seconds + configuration.maxGrantLifetimeSeconds
        else { throw LifecycleError(.invalidRequest) }
        return try performAsserted(proof, now: now, takeToken: takeToken) { installation in
            // §4.3 authority: live, at the stated epoch, and never outliving the installation.
            installation.isLive(at: now.seconds) && installation.endpointEpoch == endpointEpoch
                && expiresAt <= installation.expiresAt
        } apply: { store, installation in
            // Generation strictly greater than any earlier one for (installation, relay).
            if let current = try store.lockDelegationGeneration(installation: installation.handle, relay: relay),
                current >= generation
            {
                throw LifecycleError(.notAuthorized)
            }
            let grant = EndpointGrant(
                delegationID: try CanonicalUUID.version4(), relayPublicKey: relay, appProfile: installation.appProfile,
                endpointEpoch: endpointEpoch, generation: generation, expiresAt: expiresAt)
            let sealed = try grant.sealed(with: keys.grants)
            guard try store.upsertDelegation(grant, installation: installation.handle, notBefore: notBefore)
            else { throw LifecycleError(.notAuthorized) }
            return sealed
        }
    }

    /// §4.5: revokes the current generation of (installation, relay); revoking it again succeeds.
    package func revokeDelegation(
        relayPublicKey relay: [UInt8], generation: Int64, proof: DeviceAssertion, now: LifecycleInstant,
        takeToken: () throws(LifecycleError) -> Void
    ) throws(LifecycleError) {
        try performAsserted(proof, now: now, takeToken: takeToken) { installation in
            installation.isLive(at: now.seconds)
        } apply: { store, installation in
            guard try store.lockDelegationGeneration(installation: installation.handle, relay: relay) == generation
            else { throw LifecycleError(.notAuthorized) }
            try store.revokeDelegation(installation: installation.handle, relay: relay, now: now.seconds)
        }
    }

    /// §4.4: a new token under the installation's profile's provider and the next epoch.
    package func rotateEndpoint(
        _ endpointText: String, endpointEpoch: Int64, newEndpointEpoch: Int64, proof: DeviceAssertion,
        now: LifecycleInstant, takeToken: () throws(LifecycleError) -> Void
    ) throws(LifecycleError) {
        try performAsserted(proof, now: now, takeToken: takeToken) { installation in
            installation.isLive(at: now.seconds) && installation.endpointEpoch == endpointEpoch
        } accepts: { installation in
            // §1: the installation's profile's provider decides the endpoint format; another is a 400.
            endpoint(endpointText, profile: configuration.profile(id: installation.appProfile)) != nil
        } apply: { store, installation in
            let profile = configuration.profile(id: installation.appProfile)
            guard let token = endpoint(endpointText, profile: profile) else { throw LifecycleError(.invalidRequest) }
            let fingerprint = keys.fingerprinter.fingerprint(
                profileID: installation.appProfile, token: fingerprintInput(token, profile: profile))
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
                installation.handle, encryptedEndpoint: try keys.tokens.seal(token), fingerprint: fingerprint,
                epoch: newEndpointEpoch)
        }
    }

    /// §4.6: tombstones the installation at the new epoch and revokes every delegation; a retry of
    /// the same revocation succeeds again.
    package func revokeInstallation(
        endpointEpoch: Int64, newEndpointEpoch: Int64, proof: DeviceAssertion, now: LifecycleInstant,
        takeToken: () throws(LifecycleError) -> Void
    ) throws(LifecycleError) {
        try performAsserted(proof, now: now, takeToken: takeToken) { installation in
            // §1: a live installation at the stated epoch, or (a retry) the unexpired tombstone this
            // very revocation left, whose epoch is `new_endpoint_epoch`.
            guard now.seconds < installation.expiresAt else { return false }
            return installation.isRevoked
                ? installation.endpointEpoch == newEndpointEpoch : installation.endpointEpoch == endpointEpoch
        } apply: { store, installation in
            guard !installation.isRevoked else { return }
            // The tombstone keeps the row until its expiry and takes the new epoch, so every grant
            // stops opening.
            try store.revokeInstallation(installation.handle, epoch: newEndpointEpoch, now: now.seconds)
        }
    }
}
