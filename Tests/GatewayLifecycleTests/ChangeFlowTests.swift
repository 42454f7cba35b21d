import GatewayCredentials
import PushCrypto
import PushTestSupport
import Testing

@testable import GatewayLifecycle

@Suite("Delegation, rotation and revocation (docs/protocol.md §4.3–§4.6) over an in-memory store", .testBodyThreads)
struct ChangeFlowTests {
    static let relay = AssertedOperation.relay
    typealias Key = InMemoryLifecycleDatabase.DelegationKey

    func delegate(
        _ harness: LifecycleHarness, _ installation: LifecycleHarness.Seeded, generation: Int64, epoch: Int64 = 1,
        notBeforeIn: Int64 = 0, expiresIn: Int64 = 600
    ) throws -> String {
        try harness.flows.delegate(
            relayPublicKey: Self.relay, endpointEpoch: epoch, generation: generation,
            notBefore: harness.now.seconds + notBeforeIn, expiresAt: harness.now.seconds + expiresIn,
            proof: try harness.proof(installation), now: harness.now, takeToken: {})
    }

    // MARK: §4.3 delegation

    @Test("a delegation stores its generation, epoch and window and answers a grant that opens to them")
    func delegationWritesTheRowAndSealsTheGrant() throws {
        let harness = try LifecycleHarness()
        let installation = try harness.seed(epoch: 1)

        let sealed = try delegate(harness, installation, generation: 3, notBeforeIn: 10)

        let grant = try #require(EndpointGrant.open(sealed, with: harness.keys.grants))
        #expect(grant.relayPublicKey == Self.relay && grant.appProfile == LifecycleHarness.androidProfile)
        #expect(grant.endpointEpoch == 1 && grant.generation == 3 && grant.expiresAt == harness.now.seconds + 600)
        let row = try #require(
            harness.database.tables.delegations[Key(installation: installation.handle, relay: Self.relay)])
        #expect(row.delegationID == grant.delegationID && row.generation == 3 && row.endpointEpoch == 1)
        #expect(row.notBefore == harness.now.seconds + 10 && row.revokedAt == nil)
    }

    @Test("a higher generation replaces the delegation with a new id and unrevokes it")
    func higherGenerationReplaces() throws {
        let harness = try LifecycleHarness()
        let installation = try harness.seed()
        let key = Key(installation: installation.handle, relay: Self.relay)
        _ = try delegate(harness, installation, generation: 1)
        let first = try #require(harness.database.tables.delegations[key])
        harness.database.seed { $0.delegations[key]?.revokedAt = 1 }

        _ = try delegate(harness, installation, generation: 2)

        let replaced = try #require(harness.database.tables.delegations[key])
        #expect(replaced.generation == 2 && replaced.delegationID != first.delegationID && replaced.revokedAt == nil)
    }

    @Test(
        "a generation not above the stored one is not_authorized and the stored delegation stays",
        arguments: [1, 2] as [Int64])
    func staleGenerationIsRefused(_ generation: Int64) throws {
        let harness = try LifecycleHarness()
        let installation = try harness.seed()
        _ = try delegate(harness, installation, generation: 2)

        harness.expectRefusal(.notAuthorized) { try delegate(harness, installation, generation: generation) }
    }

    @Test("a delegation at another epoch, or outliving the installation, is not_authorized")
    func delegationAuthority() throws {
        let harness = try LifecycleHarness()
        let installation = try harness.seed(epoch: 2, expiresIn: 300)

        #expect(throws: LifecycleError(.notAuthorized)) { try delegate(harness, installation, generation: 1, epoch: 1) }
        #expect(throws: LifecycleError(.notAuthorized)) {
            try delegate(harness, installation, generation: 1, epoch: 2, expiresIn: 301)
        }
        #expect(harness.database.tables.delegations.isEmpty && harness.database.tables.consumedChallenges.isEmpty)
        _ = try delegate(harness, installation, generation: 1, epoch: 2, expiresIn: 300)
    }

    @Test(
        "not_before over 300 s ahead or an expiry past the grant lifetime is invalid_request before the token is taken")
    func delegationWindowIsARequestRule() throws {
        let harness = try LifecycleHarness()
        let installation = try harness.seed()
        let lifetime = harness.configuration.maxGrantLifetimeSeconds
        for (notBeforeIn, expiresIn) in [(301, 600), (0, lifetime + 1)] as [(Int64, Int64)] {
            #expect(throws: LifecycleError(.invalidRequest)) {
                _ = try harness.flows.delegate(
                    relayPublicKey: Self.relay, endpointEpoch: 1, generation: 1,
                    notBefore: harness.now.seconds + notBeforeIn, expiresAt: harness.now.seconds + expiresIn,
                    proof: try harness.proof(installation), now: harness.now
                ) { () throws(LifecycleError) in throw LifecycleError(.rateLimited, retryAfterSeconds: 1) }
            }
        }
        #expect(harness.database.tables.consumedChallenges.isEmpty)
    }

    // MARK: §4.5 delegation revocation

    @Test("revoking the current generation marks it revoked; revoking it again succeeds and keeps the first time")
    func delegationRevocationIsIdempotent() throws {
        let harness = try LifecycleHarness()
        let installation = try harness.seed()
        let key = Key(installation: installation.handle, relay: Self.relay)
        _ = try delegate(harness, installation, generation: 1)
        harness.database.seed { $0.delegations[key]?.revokedAt = harness.now.seconds - 30 }

        try AssertedOperation.revokeDelegation.run(harness, try harness.proof(installation))

        #expect(harness.database.tables.delegations[key]?.revokedAt == harness.now.seconds - 30)
        harness.database.seed { $0.delegations[key]?.revokedAt = nil }
        try AssertedOperation.revokeDelegation.run(harness, try harness.proof(installation))
        #expect(harness.database.tables.delegations[key]?.revokedAt == harness.now.seconds)
    }

    @Test("revoking a generation that is not the current one, or no delegation at all, is not_authorized")
    func delegationRevocationOfAnotherGeneration() throws {
        let harness = try LifecycleHarness()
        let installation = try harness.seed()
        #expect(throws: LifecycleError(.notAuthorized)) {
            try AssertedOperation.revokeDelegation.run(harness, try harness.proof(installation))
        }
        _ = try delegate(harness, installation, generation: 2)

        harness.expectRefusal(.notAuthorized) {
            try AssertedOperation.revokeDelegation.run(harness, try harness.proof(installation))
        }
    }

    // MARK: §4.4 rotation

    @Test("rotation seals the new token, moves the fingerprint and bumps the epoch")
    func rotationBumpsTheEpoch() throws {
        let harness = try LifecycleHarness()
        let installation = try harness.seed(endpoint: "token-old")

        try AssertedOperation.rotateEndpoint.run(harness, try harness.proof(installation))

        let row = try #require(harness.database.tables.installations[installation.handle])
        #expect(row.endpointEpoch == 2)
        #expect(harness.keys.tokens.open(row.encryptedEndpoint) == Array("token-rotated".utf8))
        #expect(
            row.endpointFingerprint == harness.fingerprint("token-rotated", profileID: LifecycleHarness.androidProfile))
        #expect(row.provider == "fcm")
    }

    @Test("a token another live installation of the profile holds is not_authorized and nothing changes")
    func rotationToAHeldToken() throws {
        let harness = try LifecycleHarness()
        let installation = try harness.seed(endpoint: "token-old")
        _ = try harness.seed(endpoint: "token-rotated")

        harness.expectRefusal(.notAuthorized) {
            try AssertedOperation.rotateEndpoint.run(harness, try harness.proof(installation))
        }
    }

    @Test("a token an expired installation holds is taken over and the expired row is deleted")
    func rotationTakesOverAnExpiredHolder() throws {
        let harness = try LifecycleHarness()
        let installation = try harness.seed(endpoint: "token-old")
        let expired = try harness.seed(endpoint: "token-rotated", expiresIn: -1)

        try AssertedOperation.rotateEndpoint.run(harness, try harness.proof(installation))

        #expect(harness.database.tables.installations[expired.handle] == nil)
        #expect(harness.database.tables.installations[installation.handle]?.endpointEpoch == 2)
    }

    @Test("a token the profile's provider does not accept is invalid_request before the proof is checked")
    func rotationToAnotherProvidersToken() throws {
        let harness = try LifecycleHarness()
        let installation = try harness.seed()

        harness.expectRefusal(.invalidRequest) {
            try harness.flows.rotateEndpoint(
                "not-a-token", endpointEpoch: 1, newEndpointEpoch: 2, proof: try harness.proof(installation),
                now: harness.now, takeToken: {})
        }
        #expect(harness.stages.stages.isEmpty)
    }

    @Test("a rotation at a stale epoch is not_authorized")
    func rotationAtAStaleEpoch() throws {
        let harness = try LifecycleHarness()
        let installation = try harness.seed(epoch: 3)
        #expect(throws: LifecycleError(.notAuthorized)) {
            try AssertedOperation.rotateEndpoint.run(harness, try harness.proof(installation))
        }
        #expect(harness.database.tables.installations[installation.handle]?.endpointEpoch == 3)
    }

    // MARK: §4.6 installation revocation

    @Test("revocation tombstones the installation at the new epoch and revokes every delegation")
    func revocationTombstones() throws {
        let harness = try LifecycleHarness()
        let installation = try harness.seed()
        _ = try delegate(harness, installation, generation: 1)

        try AssertedOperation.revokeInstallation.run(harness, try harness.proof(installation))

        let row = try #require(harness.database.tables.installations[installation.handle])
        #expect(row.revokedAt == harness.now.seconds && row.endpointEpoch == 2)
        #expect(
            harness.database.tables.delegations[Key(installation: installation.handle, relay: Self.relay)]?.revokedAt
                == harness.now.seconds)
    }

    @Test("the same revocation again succeeds on the tombstone and changes nothing but the consumed challenge")
    func revocationRetry() throws {
        let harness = try LifecycleHarness()
        let installation = try harness.seed()
        try AssertedOperation.revokeInstallation.run(harness, try harness.proof(installation))
        let before = harness.database.tables

        let retry = try harness.proof(installation)
        try AssertedOperation.revokeInstallation.run(harness, retry)

        var expected = before
        expected.consumedChallenges[retry.challenge.id] = LifecycleFlows.consumedChallengeExpiry(retry.challenge.id)
        #expect(harness.database.tables == expected)
    }

    @Test("a revocation at a stale epoch, or of a tombstone at another new epoch, is not_authorized")
    func revocationAtAStaleEpoch() throws {
        let harness = try LifecycleHarness()
        let stale = try harness.seed(epoch: 4)
        let tombstone = try harness.seed(epoch: 7, revokedAt: harness.now.seconds - 10)
        let before = harness.database.tables

        for installation in [stale, tombstone] {
            #expect(throws: LifecycleError(.notAuthorized)) {
                try AssertedOperation.revokeInstallation.run(harness, try harness.proof(installation))
            }
        }
    }
}
