import Foundation
import PushAttest
import PushCrypto
import PushTestSupport
import Testing

@testable import GatewayAPI
@testable import GatewayMetrics
@testable import PushGateway

/// A `LifecycleGateway` with the Android profile `buzz-android` beside the iOS one, trusting a
/// synthetic Key Attestation authority (docs/protocol.md §4.2a, §5a).
final class AndroidLifecycleGateway {
    static let profile = ConfigurationTestEnvironment.androidProfile
    static let path = "/v1/installations/android"

    let lifecycle: LifecycleGateway
    let authority: SyntheticKeyAttestationAuthority

    /// `statusList`: the status file's content (nil: no file, so no list); `providers` builds the push
    /// providers from the final configuration.
    init(
        statusList: String? = #"{"entries":{}}"#, clock: LifecycleTestClock = LifecycleTestClock(),
        providers: ProviderFactory = .none,
        _ adjust: @escaping (ConfigurationTestEnvironment) -> ConfigurationTestEnvironment = { $0 }
    ) throws {
        let authority = try SyntheticKeyAttestationAuthority()
        lifecycle = try LifecycleGateway(clock: clock, providers: providers) { environment in
            adjust(try! environment.withAndroidProfile(authority: authority, statusList: statusList))
        }
        self.authority = authority
    }

    var metrics: GatewayMetrics { lifecycle.server.application.metrics }

    func makeDevice() throws -> AndroidLifecycleDevice {
        AndroidLifecycleDevice(device: try authority.makeDevice())
    }

    func post(_ path: String, _ body: String) throws -> HTTPTestResponse { try lifecycle.post(path, body) }

    /// Enrolls `device` with a fresh challenge; returns the handle.
    @discardableResult
    func enroll(_ device: AndroidLifecycleDevice, expiresIn: Int64 = 86_400) throws -> String {
        let response = try post(
            Self.path,
            try device.enrollBody(
                challenge: try lifecycle.challenge(), expiresAt: lifecycle.clock.unixSeconds() + expiresIn))
        guard response.status == 201, let handle = try lifecycleObject(response)["installation_handle"] as? String
        else { throw TestSupportError("android enrollment answered \(response.status) \(response.bodyText)") }
        device.handle = handle
        return handle
    }
}

/// The app side of one synthetic Android device: the §4.2a body with its Keystore chain, and the
/// §4.3–§4.6 bodies signed with `Signature("SHA256withECDSA")` over the transcript (docs/protocol.md §3).
final class AndroidLifecycleDevice {
    let device: SyntheticAndroidDevice
    /// An FCM registration token's shape: `<instance id>:<base64url>`.
    let endpoint: String
    var handle: String?
    var epoch: Int64 = 1

    init(device: SyntheticAndroidDevice) {
        self.device = device
        endpoint = Self.fcmToken()
    }

    static func fcmToken() -> String {
        "dK3" + Hex.encode((0..<8).map { _ in UInt8.random(in: 0...255) }) + ":APA91b"
            + Base64.encodeURLNoPadding((0..<96).map { _ in UInt8.random(in: 0...255) })
    }

    /// The KeyDescription a genuine device makes for `challenge`: TEE, verified boot, locked,
    /// generated, SIGN, EC P-256, the profile's package and signing digest.
    static func genuineDescription(challenge: [UInt8]) -> SyntheticKeyDescription {
        SyntheticKeyDescription(
            challenge: challenge, packageName: ConfigurationTestEnvironment.androidPackage,
            signatureDigests: [ConfigurationTestEnvironment.androidSigningDigest])
    }

    func transcript(
        challenge: LifecycleChallenge, endpoint: String, expiresAt: Int64,
        profile: String = AndroidLifecycleGateway.profile
    ) -> AndroidEnrollmentTranscript {
        AndroidEnrollmentTranscript(
            origin: LifecycleGateway.origin, challengeID: challenge.id, challenge: challenge.challenge,
            appProfile: profile, endpoint: endpoint, endpointEpoch: 1, expiresAt: expiresAt)
    }

    /// The §4.2a body; `chain` replaces the genuine chain (leaf first) when given, `alter` changes one
    /// property of the genuine KeyDescription.
    func enrollBody(
        challenge: LifecycleChallenge, expiresAt: Int64, endpoint: String? = nil,
        profile: String = AndroidLifecycleGateway.profile, serialNumber: Int = 1, chain: [[UInt8]]? = nil,
        alter: (inout SyntheticKeyDescription) -> Void = { _ in }
    ) throws -> String {
        let endpoint = endpoint ?? self.endpoint
        let transcript = transcript(challenge: challenge, endpoint: endpoint, expiresAt: expiresAt, profile: profile)
        var description = Self.genuineDescription(challenge: transcript.attestationChallenge)
        alter(&description)
        let certificates = try chain ?? device.attestationChain(description, serialNumber: serialNumber)
        let attestation = certificates.map { "\"\(Base64.encode($0))\"" }.joined(separator: ",")
        return """
            {"v":1,"challenge_id":"\(challenge.id)","challenge":"\(challenge.challenge)",\
            "attestation":[\(attestation)],"app_profile":"\(profile)","endpoint":"\(endpoint)",\
            "endpoint_epoch":1,"expires_at":\(expiresAt)}
            """
    }

    /// The DER ECDSA signature of `transcript`'s bytes, base64; `forge` signs other bytes instead.
    func signature(_ transcript: AppAttestTranscript, forge: Bool = false) throws -> String {
        Base64.encode(try device.sign(transcript: forge ? transcript.bytes + [0x0a] : transcript.bytes))
    }

    func delegateBody(
        challenge: LifecycleChallenge, relay: String, generation: Int64, notBefore: Int64, expiresAt: Int64,
        forge: Bool = false
    ) throws -> String {
        try AssertedBodies.delegate(
            challenge: challenge, handle: handle ?? "", epoch: epoch, generation: generation, relay: relay,
            notBefore: notBefore, expiresAt: expiresAt
        ) { try signature($0, forge: forge) }
    }

    func rotateBody(challenge: LifecycleChallenge, endpoint: String, forge: Bool = false) throws -> String {
        try AssertedBodies.rotate(challenge: challenge, handle: handle ?? "", epoch: epoch, endpoint: endpoint) {
            try signature($0, forge: forge)
        }
    }

    func revokeDelegationBody(
        challenge: LifecycleChallenge, relay: String, generation: Int64, forge: Bool = false
    ) throws -> String {
        try AssertedBodies.revokeDelegation(
            challenge: challenge, handle: handle ?? "", relay: relay, generation: generation
        ) { try signature($0, forge: forge) }
    }

    func revokeInstallationBody(challenge: LifecycleChallenge, forge: Bool = false) throws -> String {
        try AssertedBodies.revokeInstallation(challenge: challenge, handle: handle ?? "", epoch: epoch) {
            try signature($0, forge: forge)
        }
    }
}
