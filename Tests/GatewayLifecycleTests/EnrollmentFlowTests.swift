import GatewayCredentials
import PushCrypto
import PushPostgres
import PushSystem
import PushTestSupport
import Testing

@testable import GatewayLifecycle

@Suite("Enrollment flow (docs/protocol.md §4.2, §4.2a) over an in-memory store", .testBodyThreads)
struct EnrollmentFlowTests {
    @Test(
        "an iOS enrollment stores its profile's provider, epoch 1, counter 0, the sealed token and its fingerprint, and consumes the challenge"
    )
    func iosEnrollmentStoresTheInstallation() throws {
        let harness = try LifecycleHarness()
        let key = try P256PrivateKey.generate().publicKey
        let enrollment = try harness.enrollment(key: key, endpoint: "token-ios")

        let handle = try harness.flows.enroll(enrollment, now: harness.now)

        let row = try #require(harness.database.tables.installations[handle])
        #expect(row.platform == .ios && row.provider == "apns" && row.proofCounter == 0 && row.endpointEpoch == 1)
        #expect(row.keyID == SHA256.hash(key.uncompressedPoint) && row.publicKey == key)
        #expect(row.expiresAt == enrollment.expiresAt && row.revokedAt == nil)
        #expect(try harness.keys.tokens.open(row.encryptedEndpoint) == Array("token-ios".utf8))
        #expect(row.endpointFingerprint == harness.fingerprint("token-ios", profileID: LifecycleHarness.iosProfile))
        #expect(
            harness.database.tables.consumedChallenges
                == [enrollment.challengeID: LifecycleFlows.consumedChallengeExpiry(enrollment.challengeID)])
        #expect(harness.stages.stages == [.transaction])
    }

    @Test("an Android enrollment stores platform android, the profile's provider fcm and no counter")
    func androidEnrollmentStoresItsProvider() throws {
        let harness = try LifecycleHarness()
        let enrollment = try harness.enrollment(
            key: try P256PrivateKey.generate().publicKey, profileID: LifecycleHarness.androidProfile)

        let handle = try harness.flows.enroll(enrollment, now: harness.now)

        let row = try #require(harness.database.tables.installations[handle])
        #expect(row.platform == .android && row.provider == "fcm" && row.proofCounter == nil)
        #expect(row.appProfile == LifecycleHarness.androidProfile)
    }

    @Test("an enrollment under a profile whose provider is not its platform's default stores the profile's provider")
    func enrollmentStoresTheProfilesProvider() throws {
        let harness = try LifecycleHarness(webPush: true)
        let enrollment = try harness.enrollment(
            key: try P256PrivateKey.generate().publicKey, profileID: LifecycleHarness.androidProfile)

        let handle = try harness.flows.enroll(enrollment, now: harness.now)

        #expect(harness.database.tables.installations[handle]?.provider == "webpush")
    }

    @Test("the same enrollment again under a new challenge answers the first handle and inserts nothing")
    func identicalRetryAnswersTheFirstHandle() throws {
        let harness = try LifecycleHarness()
        let key = try P256PrivateKey.generate().publicKey
        let first = try harness.enrollment(key: key)
        let handle = try harness.flows.enroll(first, now: harness.now)

        let retry = try harness.enrollment(key: key)
        #expect(retry.challengeID != first.challengeID)
        #expect(try harness.flows.enroll(retry, now: harness.now) == handle)
        #expect(harness.database.tables.installations.count == 1)
        #expect(harness.database.tables.consumedChallenges.count == 2)
    }

    @Test(
        "a live installation holding the key id refuses an enrollment that differs in expiry: not_authorized, nothing written"
    )
    func liveDuplicateKeyIsRefused() throws {
        let harness = try LifecycleHarness()
        let key = try P256PrivateKey.generate().publicKey
        _ = try harness.flows.enroll(try harness.enrollment(key: key), now: harness.now)

        let other = try harness.enrollment(key: key, expiresIn: 3600)
        harness.expectRefusal(.notAuthorized) { try harness.flows.enroll(other, now: harness.now) }
    }

    @Test("another key's enrollment of a token a live installation of the profile holds is not_authorized")
    func liveEndpointConflictIsRefused() throws {
        let harness = try LifecycleHarness()
        _ = try harness.flows.enroll(
            try harness.enrollment(key: try P256PrivateKey.generate().publicKey, endpoint: "token-shared"),
            now: harness.now)

        let other = try harness.enrollment(key: try P256PrivateKey.generate().publicKey, endpoint: "token-shared")
        harness.expectRefusal(.notAuthorized) { try harness.flows.enroll(other, now: harness.now) }
    }

    @Test("an expired installation holding the token is deleted with its delegations and the enrollment succeeds")
    func expiredConflictIsClearedFirst() throws {
        let harness = try LifecycleHarness()
        let expired = try harness.seed(.ios, endpoint: "token-old", expiresIn: -1)
        let relay = [UInt8](repeating: 7, count: 32)
        let delegationID = try CanonicalUUID.version4()
        harness.database.seed {
            $0.delegations[.init(installation: expired.handle, relay: relay)] = .init(
                delegationID: delegationID, generation: 1, endpointEpoch: 1, notBefore: 0,
                expiresAt: harness.now.seconds - 10, revokedAt: nil)
        }

        let handle = try harness.flows.enroll(
            try harness.enrollment(key: try P256PrivateKey.generate().publicKey, endpoint: "token-old"),
            now: harness.now)

        #expect(Array(harness.database.tables.installations.keys) == [handle])
        #expect(harness.database.tables.delegations.isEmpty)
    }

    @Test("an enrollment whose challenge was already consumed is not_authorized and inserts nothing")
    func consumedChallengeIsRefused() throws {
        let harness = try LifecycleHarness()
        let first = try harness.enrollment(key: try P256PrivateKey.generate().publicKey, endpoint: "token-a")
        _ = try harness.flows.enroll(first, now: harness.now)

        let again = try harness.enrollment(
            key: try P256PrivateKey.generate().publicKey, endpoint: "token-b", challengeID: first.challengeID)
        #expect(throws: LifecycleError(.notAuthorized)) { try harness.flows.enroll(again, now: harness.now) }
        #expect(harness.database.tables.installations.count == 1)
    }

    @Test(
        "an insert that loses a live-uniqueness race runs the transaction once more; another unique violation does not")
    func lostUniquenessRaceIsRetriedOnce() throws {
        let harness = try LifecycleHarness()
        let lost = PostgresError(
            code: .server, sqlState: "23505", message: "duplicate", constraintName: "installations_live_key_id")
        harness.database.fail(.insertInstallation, with: lost)
        let handle = try harness.flows.enroll(
            try harness.enrollment(key: try P256PrivateKey.generate().publicKey), now: harness.now)
        #expect(harness.database.tables.installations[handle] != nil)
        #expect(harness.database.rolledBackTransactions == 1 && harness.database.committedTransactions == 1)

        let other = PostgresError(
            code: .server, sqlState: "23505", message: "duplicate", constraintName: "installations_pkey")
        harness.database.fail(.insertInstallation, with: other)
        let refused = try harness.enrollment(key: try P256PrivateKey.generate().publicKey, endpoint: "token-b")
        #expect(throws: LifecycleError(.notAuthorized)) { try harness.flows.enroll(refused, now: harness.now) }
        #expect(harness.database.rolledBackTransactions == 2 && harness.database.tables.installations.count == 1)
    }

    @Test("an enrollment whose 408 fired before its transaction is late: no transaction begins, nothing is timed")
    func lateEnrollmentBeginsNothing() throws {
        let harness = try LifecycleHarness()
        let enrollment = try harness.enrollment(
            key: try P256PrivateKey.generate().publicKey, deadline: MonotonicInstant.now())

        #expect(throws: LifecycleError(.late)) { try harness.flows.enroll(enrollment, now: harness.now) }
        #expect(harness.database.tables == InMemoryLifecycleDatabase.Tables())
        #expect(harness.database.committedTransactions == 0 && harness.database.rolledBackTransactions == 0)
        #expect(harness.stages.stages.isEmpty)
    }
}
