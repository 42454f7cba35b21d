import Foundation

extension PushGatewayClient {
    /// Enrolls this install with its device token (docs/protocol.md §4.2) and stores the
    /// installation. The App Attest key is generated once and kept until Apple has attested it, so
    /// every retry before that (no challenge, Apple's `serverUnavailable`, …) uses the same key;
    /// `serverUnavailable` is retried with the same key and `clientDataHash` while the challenge lives.
    /// Once attested, the same body is sent again after a transient failure while its challenge lives;
    /// after that (or a `404`) only a new key can enroll (docs/decisions/0203).
    public func enroll(endpoint: String) async throws -> Installation {
        try Self.checkEndpoint(endpoint)
        var state = try store.load()
        if let installation = state.installation, installation.expiresAt > configuration.now() {
            throw PushGatewayClientError.alreadyEnrolled
        }
        guard appAttest.isSupported else { throw PushGatewayClientError.appAttestUnsupported }
        state.installation = nil
        state.delegations = [:]
        state.pendingRotation = nil
        var budget = RetryBudget(configuration.retry)
        var refusals = 0
        var refusedKeys = 0
        while true {
            let keyID: String
            if let stored = state.keyID, !state.keyAttested {
                keyID = stored
            } else {
                keyID = try await generateKey()
                state.keyID = keyID
                state.keyAttested = false
                try store.save(state)
            }
            let issued = try await challenge(&budget)
            let request = LifecycleRequest.enroll(
                challenge: issued.challenge, keyID: keyID, appProfile: configuration.appProfile, endpoint: endpoint,
                expiresAt: configuration.now() + configuration.installationLifetime)
            let attestation: Data
            do {
                let clientDataHash = request.transcript(origin: configuration.origin).clientDataHash
                guard let attested = try await attest(keyID, clientDataHash, until: issued.usableUntil, &budget) else {
                    continue  // Apple stayed unavailable past the challenge: same key, fresh challenge.
                }
                attestation = attested
            } catch AppAttestError.invalidKey {
                refusedKeys += 1
                guard refusedKeys < 2 else { throw PushGatewayClientError.keyLost }
                state.keyID = nil
                try store.save(state)
                continue
            }
            state.keyAttested = true
            try store.save(state)

            let body = request.body(proof: attestation)
            sending: while true {
                switch try await exchange(.enroll, body) {
                case .answered(let response):
                    let answer = try response.decode(EnrollmentResponse.self, expectedStatus: 201)
                    let installation = Installation(
                        handle: answer.installationHandle, appProfile: configuration.appProfile, endpoint: endpoint,
                        endpointEpoch: answer.endpointEpoch, expiresAt: answer.expiresAt)
                    state.installation = installation
                    try store.save(state)
                    return installation
                case .transient(let failure, _):
                    try await budget.wait(after: failure)
                    // The attestation signed this challenge; once it is too old only a new key can go on.
                    if configuration.now() >= issued.usableUntil { break sending }
                case .refused(let rejection) where rejection.status == 404 && rejection.code == .notAuthorized:
                    refusals += 1
                    guard refusals < 2 else { throw PushGatewayClientError.notAuthorized }
                    break sending
                case .refused(let rejection): throw PushGatewayClientError.rejected(rejection)
                }
            }
        }
    }

    private func generateKey() async throws -> String {
        do {
            return try await appAttest.generateKey()
        } catch AppAttestError.unsupported {
            throw PushGatewayClientError.appAttestUnsupported
        }
    }

    /// `attestKey`, retried with the same key and hash while Apple answers `serverUnavailable` and
    /// the challenge is young enough; nil when it is not any more.
    private func attest(
        _ keyID: String, _ clientDataHash: Data, until usableUntil: Int64, _ budget: inout RetryBudget
    ) async throws -> Data? {
        while true {
            do {
                return try await appAttest.attestKey(keyID, clientDataHash: clientDataHash)
            } catch AppAttestError.serverUnavailable {
                try await budget.wait(after: .unavailable(retryAfterSeconds: nil))
                if configuration.now() >= usableUntil { return nil }
            } catch AppAttestError.unsupported {
                throw PushGatewayClientError.appAttestUnsupported
            }
        }
    }
}
