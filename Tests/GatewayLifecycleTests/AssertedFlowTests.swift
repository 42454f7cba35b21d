import PushCrypto
import PushPostgres
import PushSystem
import PushTestSupport
import Testing

@testable import GatewayCredentials
@testable import GatewayLifecycle

/// The four assertion operations, each as a call the tests can make on any installation.
enum AssertedOperation: String, CaseIterable, CustomTestStringConvertible {
    case delegate, rotateEndpoint, revokeDelegation, revokeInstallation

    var testDescription: String { rawValue }

    static let relay = [UInt8](repeating: 0x52, count: 32)

    /// Runs the operation at the installation's epoch 1 (a revocation of generation 1).
    func run(_ harness: LifecycleHarness, _ proof: DeviceAssertion) throws(LifecycleError) {
        let now = harness.now
        switch self {
        case .delegate:
            _ = try harness.flows.delegate(
                relayPublicKey: Self.relay, endpointEpoch: 1, generation: 1, notBefore: now.seconds,
                expiresAt: now.seconds + 600, proof: proof, now: now, takeToken: {})
        case .rotateEndpoint:
            try harness.flows.rotateEndpoint(
                "token-rotated", endpointEpoch: 1, newEndpointEpoch: 2, proof: proof, now: now, takeToken: {})
        case .revokeDelegation:
            try harness.flows.revokeDelegation(
                relayPublicKey: Self.relay, generation: 1, proof: proof, now: now, takeToken: {})
        case .revokeInstallation:
            try harness.flows.revokeInstallation(
                endpointEpoch: 1, newEndpointEpoch: 2, proof: proof, now: now, takeToken: {})
        }
    }
}

@Suite("Assertion routes' shared checks (docs/protocol.md §1, §4.3–§4.6, §5) over an in-memory store", .testBodyThreads)
struct AssertedFlowTests {
    @Test(
        "an unknown installation handle is not_authorized: no proof is checked, nothing is consumed",
        arguments: AssertedOperation.allCases)
    func unknownInstallation(_ operation: AssertedOperation) throws {
        let harness = try LifecycleHarness()
        let stranger = LifecycleHarness.Seeded(
            handle: try CanonicalUUID.version4(), key: try P256PrivateKey.generate(), platform: .android)

        #expect(throws: LifecycleError(.notAuthorized)) { try operation.run(harness, try harness.proof(stranger)) }
        #expect(harness.database.tables == InMemoryLifecycleDatabase.Tables())
        #expect(harness.stages.stages.isEmpty)
    }

    @Test(
        "an expired installation is not_authorized for every operation and nothing is consumed",
        arguments: AssertedOperation.allCases)
    func expiredInstallation(_ operation: AssertedOperation) throws {
        let harness = try LifecycleHarness()
        let installation = try harness.seed(expiresIn: -1)

        harness.expectRefusal(.notAuthorized) { try operation.run(harness, try harness.proof(installation)) }
    }

    @Test(
        "a revoked installation is not_authorized for delegation, rotation and delegation revocation",
        arguments: [AssertedOperation.delegate, .rotateEndpoint, .revokeDelegation])
    func revokedInstallation(_ operation: AssertedOperation) throws {
        let harness = try LifecycleHarness()
        let installation = try harness.seed(revokedAt: harness.now.seconds - 5)

        harness.expectRefusal(.notAuthorized) { try operation.run(harness, try harness.proof(installation)) }
    }

    @Test("the lifecycle token is taken first: a rate-limited request reads and writes nothing")
    func rateLimitedBeforeAnyLookup() throws {
        let harness = try LifecycleHarness()
        let installation = try harness.seed()
        let before = harness.database.tables

        #expect(throws: LifecycleError(.rateLimited, retryAfterSeconds: 3)) {
            try harness.flows.revokeInstallation(
                endpointEpoch: 1, newEndpointEpoch: 2, proof: try harness.proof(installation), now: harness.now
            ) { () throws(LifecycleError) in throw LifecycleError(.rateLimited, retryAfterSeconds: 3) }
        }
        #expect(harness.database.tables == before && harness.stages.stages.isEmpty)
    }

    @Test("a challenge whose tag does not verify is not_authorized before the installation is read")
    func forgedChallenge() throws {
        let harness = try LifecycleHarness()
        let installation = try harness.seed()
        let issued = try harness.challenge()
        let forged = IssuedChallenge(
            challengeID: issued.challengeID, challenge: issued.challenge.map { $0 ^ 1 }, expiresAt: issued.expiresAt)

        #expect(throws: LifecycleError(.notAuthorized)) {
            try AssertedOperation.revokeInstallation.run(harness, try harness.proof(installation, challenge: forged))
        }
        #expect(harness.database.tables.installations[installation.handle]?.revokedAt == nil)
        #expect(harness.stages.stages.isEmpty)
    }

    @Test("a challenge already consumed is not_authorized, and the App Attest counter does not move")
    func consumedChallenge() throws {
        let harness = try LifecycleHarness()
        let installation = try harness.seed(.ios, counter: 4)
        let issued = try harness.challenge()
        harness.database.seed { $0.consumedChallenges[issued.challengeID] = 1 }

        harness.expectRefusal(.notAuthorized) {
            try AssertedOperation.rotateEndpoint.run(
                harness, try harness.proof(installation, counter: 5, challenge: issued))
        }
        #expect(harness.database.rolledBackTransactions == 1)
    }

    @Test("a device proof that does not verify is invalid_attestation and consumes nothing")
    func proofThatDoesNotVerify() throws {
        let harness = try LifecycleHarness()
        let installation = try harness.seed()

        harness.expectRefusal(.invalidAttestation) {
            try AssertedOperation.revokeInstallation.run(
                harness, try harness.proof(installation, signer: try P256PrivateKey.generate()))
        }
        #expect(harness.stages.stages == [.deviceProof])
    }

    @Test(
        "another key enrolled under the handle between the unlocked read and the lock is not_authorized and rolls back")
    func keyIDChangedBeforeTheLock() throws {
        let harness = try LifecycleHarness()
        let installation = try harness.seed()
        let handle = installation.handle
        harness.database.commitConcurrently { $0.installations[handle]?.keyID = [UInt8](repeating: 9, count: 32) }
        let proof = try harness.proof(installation)

        #expect(throws: LifecycleError(.notAuthorized)) { try AssertedOperation.revokeInstallation.run(harness, proof) }
        #expect(harness.database.tables.consumedChallenges.isEmpty)
        #expect(harness.database.tables.installations[handle]?.revokedAt == nil)
    }

    @Test("an installation revoked between the unlocked read and the lock fails the stage check on the locked row")
    func stageRecheckedOnTheLockedRow() throws {
        let harness = try LifecycleHarness()
        let installation = try harness.seed()
        let handle = installation.handle
        let revokedAt = harness.now.seconds - 1
        harness.database.commitConcurrently { $0.installations[handle]?.revokedAt = revokedAt }

        #expect(throws: LifecycleError(.notAuthorized)) {
            try AssertedOperation.rotateEndpoint.run(harness, try harness.proof(installation))
        }
        #expect(harness.database.tables.consumedChallenges.isEmpty)
        #expect(harness.database.tables.installations[handle]?.endpointEpoch == 1)
    }

    @Test(
        "an App Attest counter not above the locked row's (another request advanced it) is not_authorized and consumes nothing"
    )
    func counterThatDoesNotAdvance() throws {
        let harness = try LifecycleHarness()
        let installation = try harness.seed(.ios, counter: 4)
        let handle = installation.handle
        harness.database.commitConcurrently { $0.installations[handle]?.proofCounter = 5 }

        #expect(throws: LifecycleError(.notAuthorized)) {
            try AssertedOperation.revokeInstallation.run(harness, try harness.proof(installation, counter: 5))
        }
        #expect(harness.database.tables.consumedChallenges.isEmpty)
        #expect(harness.database.tables.installations[handle]?.proofCounter == 5)
        #expect(harness.database.tables.installations[handle]?.revokedAt == nil)
    }

    @Test("a proof that carries no counter for an installation that has one is not_authorized and consumes nothing")
    func missingCounterForAnAppAttestInstallation() throws {
        let harness = try LifecycleHarness()
        let installation = try harness.seed(.ios, counter: 4)
        let proof = try harness.proof(installation)
        let uncounted = DeviceAssertion(
            handle: proof.handle, challenge: proof.challenge, assertion: ([], proof.assertion.transcript),
            deadline: proof.deadline)

        harness.expectRefusal(.notAuthorized) {
            try AssertedOperation.revokeInstallation.run(harness, uncounted)
        }
    }

    @Test("an App Attest counter above the stored one is stored with the change, and the challenge with it")
    func counterAdvancesWithTheChange() throws {
        let harness = try LifecycleHarness()
        let installation = try harness.seed(.ios, counter: 4)
        let proof = try harness.proof(installation, counter: 9)

        try AssertedOperation.revokeInstallation.run(harness, proof)

        let row = try #require(harness.database.tables.installations[installation.handle])
        #expect(row.proofCounter == 9 && row.revokedAt == harness.now.seconds)
        #expect(
            harness.database.tables.consumedChallenges
                == [proof.challenge.id: LifecycleFlows.consumedChallengeExpiry(proof.challenge.id)])
        #expect(harness.stages.stages == [.deviceProof, .transaction])
    }

    @Test(
        "a storage failure inside the transaction answers unavailable, rolls back the challenge and the counter, and logs no handle"
    )
    func storageFailureRollsEverythingBack() throws {
        let harness = try LifecycleHarness()
        let installation = try harness.seed(.ios, counter: 4)
        harness.database.fail(.revokeInstallation, with: PostgresError(code: .unavailable, message: "connection lost"))

        harness.expectRefusal(.unavailable) {
            try AssertedOperation.revokeInstallation.run(harness, try harness.proof(installation, counter: 5))
        }
        #expect(harness.logs.all.count == 1 && harness.logs.all[0].contains("storage or randomness failure"))
        #expect(!harness.logs.all[0].contains(installation.handle.text))
    }

    @Test("a data exception from a statement answers invalid_request and writes nothing")
    func dataExceptionIsInvalidRequest() throws {
        let harness = try LifecycleHarness()
        let installation = try harness.seed()
        harness.database.fail(
            .rotateEndpoint, with: PostgresError(code: .server, sqlState: "22003", message: "out of range"))

        harness.expectRefusal(.invalidRequest) {
            try AssertedOperation.rotateEndpoint.run(harness, try harness.proof(installation))
        }
    }

    @Test("an assertion whose 408 fired before its transaction is late and writes nothing")
    func lateAssertionWritesNothing() throws {
        let harness = try LifecycleHarness()
        let installation = try harness.seed()

        harness.expectRefusal(.late) {
            try AssertedOperation.revokeInstallation.run(
                harness, try harness.proof(installation, deadline: MonotonicInstant.now()))
        }
        #expect(harness.stages.stages == [.deviceProof])
    }
}
