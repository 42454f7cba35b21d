import Foundation
import PushAttest
import PushCrypto

/// The Android app of the demo: a fresh Keystore key whose certificate chain under the local Key
/// Attestation root carries the enrollment transcript's digest (docs/protocol.md §4.2a), delegating
/// with an ECDSA signature over the transcript (§3, §4.3), woken on the platform-neutral
/// `/v1/deliveries` (§4.7); its record is `fcm-mock`'s (§8a).
struct AndroidDemoApp: DemoApp {
    static let enrollPath = "/v1/installations/android"
    static let deliveriesPath = "/v1/deliveries"

    let root: LocalKeyAttestationRoot
    /// The profile's `…_ANDROID_PACKAGE` and one of its `…_ANDROID_SIGNING_CERT_SHA256` digests.
    let packageName: String
    let signingCertificateDigest: [UInt8]
    /// The JSON-lines record file of `fcm-mock --record`, shown after the delivery when given.
    let fcmRecordFile: String?
    /// The Keystore key the app enrolls and signs with.
    let key: P256PrivateKey
    /// A made-up FCM registration token.
    let endpoint: String

    init(
        root: LocalKeyAttestationRoot, packageName: String, signingCertificateDigest: [UInt8], fcmRecordFile: String?
    ) throws {
        self.root = root
        self.packageName = packageName
        self.signingCertificateDigest = signingCertificateDigest
        self.fcmRecordFile = fcmRecordFile
        key = try P256PrivateKey.generate()
        endpoint = try Self.registrationToken()
    }

    var introduction: String {
        "Device: an Android phone with a TEE, running \(packageName) (a synthetic Keystore key)"
    }

    /// docs/protocol.md §4.2a: the Keystore key's attestation challenge is SHA-256 of the enrollment
    /// transcript; the chain it gets is what the body carries.
    func enrollment(
        settings: DemoSettings, challenge: (id: String, challenge: String), expiresAt: Int64
    ) throws -> (title: String, path: String, body: String) {
        let transcript = Self.enrollmentTranscript(
            origin: settings.origin, challengeID: challenge.id, challenge: challenge.challenge,
            appProfile: settings.profile, endpoint: endpoint, expiresAt: expiresAt)
        let chain = try root.attestationChain(
            for: key.publicKey,
            description: DemoKeyDescription(
                challenge: SHA256.hash(transcript), packageName: packageName,
                signingCertificateDigest: signingCertificateDigest))
        let attestation = chain.map { "\"\(Base64.encode($0))\"" }.joined(separator: ",")
        return (
            "2. enroll: a Keystore chain of \(chain.count) certificates under the local root, made-up FCM token "
                + endpoint, Self.enrollPath,
            """
            {"v":1,"challenge_id":"\(challenge.id)","challenge":"\(challenge.challenge)","attestation":[\(attestation)],\
            "app_profile":"\(settings.profile)","endpoint":"\(endpoint)","endpoint_epoch":1,"expires_at":\(expiresAt)}
            """
        )
    }

    /// Android signs the delegate transcript with the attested key, Signature("SHA256withECDSA"),
    /// instead of an App Attest assertion.
    func delegationProof(for transcript: AppAttestTranscript) throws -> (name: String, bytes: [UInt8]) {
        ("ECDSA signature of the transcript", try key.derSignature(for: transcript.bytes))
    }

    /// The last `send` line of the `fcm-mock` record file whose message is for this app's token (FCM
    /// messages carry no request id; the demo's made-up token is its own).
    func showRecord(requestID: String, say: (String) -> Void) throws -> FCMRecord? {
        guard let file = fcmRecordFile else { return nil }
        let record = try lastRecord(in: file, standIn: "fcm-mock", reading: FCMRecord.init(jsonLine:)) {
            $0.kind == "send" && $0.token == endpoint
        }
        say("==> 6. what fcm-mock received (\(file)):")
        say("    POST \(record.path) answered \(record.status.map(String.init) ?? "none")")
        say("    message: \(record.message ?? "none")")
        return record
    }

    /// docs/protocol.md §3's Android enrollment transcript, built the way docs/android-integration.md's
    /// Kotlin builds it: the domain, a newline, and the members in the table's order.
    static func enrollmentTranscript(
        origin: String, challengeID: String, challenge: String, appProfile: String, endpoint: String, expiresAt: Int64
    ) -> [UInt8] {
        func quoted(_ text: String) -> String {
            var result = "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": result += "\\\""
                case "\\": result += "\\\\"
                case _ where scalar.value < 0x20: result += String(format: "\\u%04x", scalar.value)
                default: result.unicodeScalars.append(scalar)
                }
            }
            return result + "\""
        }
        let members: [(String, String)] = [
            ("v", "1"), ("audience", quoted(origin + enrollPath)), ("challenge_id", quoted(challengeID)),
            ("challenge", quoted(challenge)), ("app_profile", quoted(appProfile)), ("endpoint", quoted(endpoint)),
            ("endpoint_epoch", "1"), ("expires_at", String(expiresAt)),
        ]
        let json = "{" + members.map { quoted($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
        return Array(("push-gateway.enroll-android.v1\n" + json).utf8)
    }

    /// A made-up registration token in FCM's shape, `<instance id>:APA91b<base64url>`.
    static func registrationToken() throws -> String {
        "demo" + Hex.encode(try SecureRandom.bytes(6)) + ":APA91b"
            + Base64.encodeURLNoPadding(try SecureRandom.bytes(96))
    }
}

/// One line of the `fcm-mock --record` file: `{"time","kind","path","status","message"}`.
struct FCMRecord: Sendable {
    let kind: String
    let path: String
    let status: Int?
    /// The FCM message exactly as the line holds it (the mock writes `message` last, members in the
    /// order received); nil for a non-send.
    let message: String?
    let token: String?

    init?(jsonLine: some Collection<UInt8>) {
        let text = String(decoding: jsonLine, as: UTF8.self)
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
            let kind = object["kind"] as? String, let path = object["path"] as? String
        else { return nil }
        self.kind = kind
        self.path = path
        status = object["status"] as? Int
        token = (object["message"] as? [String: Any])?["token"] as? String
        message =
            token == nil
            ? nil : text.range(of: #","message":"#).map { String(text[$0.upperBound...].dropLast()) }
    }
}
