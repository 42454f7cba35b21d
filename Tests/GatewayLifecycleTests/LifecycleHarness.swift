import GatewayConfiguration
import GatewayCredentials
import PushAttest
import PushCrypto
import PushDelivery
import PushMetrics
import PushSystem
import PushTestSupport
import Synchronization
import Testing

@testable import GatewayLifecycle

/// `LifecycleFlows` over an in-memory database, with an iOS profile (`apns`) and an Android one
/// (`fcm`, or `webpush`: a provider other than the platform's default). An Android installation's proofs are real ECDSA signatures (docs/protocol.md §3); an iOS
/// installation's App Attest assertion is scripted: its 4 bytes are the counter the assertion
/// verifier would return, since building App Attest assertions is the verifier's tests' business.
struct LifecycleHarness {
    static let iosProfile = "buzz-ios-production"
    static let androidProfile = ConfigurationTestEnvironment.androidProfile

    /// Keeps the configuration's temporary files for as long as the harness lives.
    private let environment: ConfigurationTestEnvironment
    let configuration: GatewayConfiguration
    let keys: GatewayKeys
    let database = InMemoryLifecycleDatabase()
    let stages = RecordedStages()
    let logs = RecordedLog()
    let flows: LifecycleFlows
    /// The instant of every request; challenges are issued at it.
    let now = LifecycleInstant(unixMilliseconds: SystemWallClock().unixMilliseconds())

    init(webPush: Bool = false) throws {
        let authority = try SyntheticKeyAttestationAuthority()
        environment =
            webPush
            ? try ConfigurationTestEnvironment().withWebPushProfile(authority: authority)
            : try ConfigurationTestEnvironment().withAndroidProfile(authority: authority)
        configuration = try environment.parse().get()
        keys = GatewayKeys(configuration: configuration)
        flows = LifecycleFlows(
            configuration: configuration, keys: keys,
            providers: PushProviderModules([
                PrefixEndpointModule(service: PushService(rawValue: "apns"), platform: .ios),
                PrefixEndpointModule(service: PushService(rawValue: "fcm"), platform: .android),
                PrefixEndpointModule(service: PushService(rawValue: "webpush"), platform: .android),
            ]),
            database: database, logger: logs.logger, timer: stages,
            proofs: { platform in platform == .ios ? ScriptedAppAttestProof() : DeviceProofs.proof(for: platform) })
    }

    func profile(_ id: String) throws -> AppProfile { try #require(configuration.profile(id: id)) }

    /// Expects `attempt` to be refused with `code` and to leave every table as it was.
    func expectRefusal(
        _ code: LifecycleError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ attempt: () throws -> Void
    ) {
        let before = database.tables
        #expect(throws: LifecycleError(code), sourceLocation: sourceLocation) { try attempt() }
        #expect(database.tables == before, "the refused request changed the tables", sourceLocation: sourceLocation)
    }

    static func laterDeadline() -> MonotonicInstant { MonotonicInstant.now().advanced(by: .seconds(3600)) }

    func challenge() throws -> IssuedChallenge { try keys.challenges.issue(unixMilliseconds: now.unixMilliseconds) }

    // MARK: Enrollment

    /// An enrollment of `key` into `profileID` with a fresh challenge.
    func enrollment(
        key: P256PublicKey, profileID: String = iosProfile, endpoint: String = "token-a", expiresIn: Int64 = 86_400,
        challengeID: CanonicalUUID? = nil, deadline: MonotonicInstant = laterDeadline()
    ) throws -> Enrollment {
        let profile = try profile(profileID)
        return Enrollment(
            platform: profile.platform, profile: profile,
            key: AttestedEnrollmentKey(keyID: SHA256.hash(key.uncompressedPoint), publicKey: key, receipt: []),
            endpoint: try #require(flows.endpoint(endpoint, profile: profile)), expiresAt: now.seconds + expiresIn,
            challengeID: try challengeID ?? challenge().challengeID, deadline: deadline, route: "enroll")
    }

    // MARK: Installations and their proofs

    /// An installation as a committed enrollment (and later changes) left it.
    struct Seeded {
        let handle: CanonicalUUID
        let key: P256PrivateKey
        let platform: AppProfile.Platform
    }

    /// Seeds an installation of `platform` holding `endpoint`.
    func seed(
        _ platform: AppProfile.Platform = .android, endpoint: String = "token-a", epoch: Int64 = 1,
        counter: UInt32 = 0, revokedAt: Int64? = nil, expiresIn: Int64 = 86_400
    ) throws -> Seeded {
        let key = try P256PrivateKey.generate()
        let profileID = platform == .ios ? Self.iosProfile : Self.androidProfile
        let row = InMemoryLifecycleDatabase.Installation(
            handle: try CanonicalUUID.version4(), platform: platform,
            provider: try profile(profileID).provider.rawValue,
            keyID: SHA256.hash(key.publicKey.uncompressedPoint), publicKey: key.publicKey,
            proofCounter: platform == .ios ? counter : nil, appProfile: profileID,
            encryptedEndpoint: try keys.tokens.seal(Array(endpoint.utf8)),
            endpointFingerprint: fingerprint(endpoint, profileID: profileID), endpointEpoch: epoch,
            revokedAt: revokedAt,
            expiresAt: now.seconds + expiresIn)
        database.seed { $0.installations[row.handle] = row }
        return Seeded(handle: row.handle, key: key, platform: platform)
    }

    func fingerprint(_ endpoint: String, profileID: String) -> [UInt8] {
        keys.fingerprinter.fingerprint(profileID: profileID, token: Array(endpoint.utf8))
    }

    /// A proof of `installation` under a fresh challenge (or `challenge`): an Android signature by
    /// `signer` (the installation's key unless given), or an iOS assertion carrying `counter`. The
    /// flows read the transcript only to verify the proof and to name the route in a log line.
    func proof(
        _ installation: Seeded, counter: UInt32 = 1, signer: P256PrivateKey? = nil, challenge: IssuedChallenge? = nil,
        deadline: MonotonicInstant = laterDeadline()
    ) throws -> DeviceAssertion {
        let issued = try challenge ?? self.challenge()
        let transcript = AppAttestTranscript.revokeInstallation(
            origin: configuration.origin.text, challengeID: issued.challengeID.text,
            challenge: Hex.encode(issued.challenge), installationHandle: installation.handle.text,
            endpointEpoch: 1, newEndpointEpoch: 2)
        let assertion =
            installation.platform == .ios
            ? ScriptedAppAttestProof.assertion(counter: counter)
            : try (signer ?? installation.key).derSignature(for: transcript.bytes)
        return DeviceAssertion(
            handle: installation.handle, challenge: (issued.challengeID, issued.challenge),
            assertion: (assertion, transcript), deadline: deadline)
    }
}

/// An iOS installation's App Attest proof, scripted: the assertion is the counter it carries, or
/// (empty) none at all.
struct ScriptedAppAttestProof: DeviceProof {
    static func assertion(counter: UInt32) -> [UInt8] { withUnsafeBytes(of: counter.bigEndian) { Array($0) } }

    func verify(
        assertion: [UInt8], transcript: AppAttestTranscript, installation: InstallationRecord, profile: AppProfile
    ) throws(LifecycleError) -> UInt32? {
        if assertion.isEmpty { return nil }
        guard assertion.count == 4 else { throw LifecycleError(.invalidAttestation) }
        return assertion.reduce(0) { $0 << 8 | UInt32($1) }
    }
}

/// A provider whose endpoints are the texts starting `token-`.
struct PrefixEndpointModule: PushProviderModule {
    let service: PushService
    let platform: AppProfile.Platform
    var displayName: String { "prefix \(service)" }
    var endpointSyntax: String { "token- and any text" }

    func endpoint(_ text: String) -> [UInt8]? { text.hasPrefix("token-") ? Array(text.utf8) : nil }
    func reasonLabel(_ report: PushReport) -> String? { nil }
    func makeMetrics(profileIDs: [String]) -> any PushProviderMetrics { NoProviderMetrics() }
    func describe(_ profile: AppProfile) -> String { displayName }

    func makeProvider(
        profiles: [AppProfile], configuration: GatewayConfiguration, runtime: Runtime
    ) throws(PushProviderStartError) -> any PushProvider {
        throw PushProviderStartError(profileID: nil, problem: "the lifecycle tests send no push")
    }
}

/// The lifecycle tests count no push.
struct NoProviderMetrics: PushProviderMetrics {
    var families: [any MetricFamily] { [] }
    func record(_ report: PushReport, profile: String) {}
}

/// The stages the flows timed, in order.
final class RecordedStages: LifecycleStageTimer {
    private let recorded = Mutex<[LifecycleStage]>([])
    var stages: [LifecycleStage] { recorded.withLock { $0 } }

    func time<Result>(_ stage: LifecycleStage, _ body: () throws -> Result) rethrows -> Result {
        recorded.withLock { $0.append(stage) }
        return try body()
    }
}

/// Every line the flows logged.
final class RecordedLog: Sendable {
    private let lines = Mutex<[String]>([])
    var all: [String] { lines.withLock { $0 } }
    var logger: Logger { Logger(sink: { line in self.lines.withLock { $0.append(line) } }) }
}
