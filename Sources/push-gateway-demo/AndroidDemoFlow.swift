import Foundation
import PushAttest
import PushCrypto
import PushRelayClient

/// What the Android demo plays against: the gateway's public listener and its android profile.
struct AndroidDemoSettings: Sendable {
    /// `http://host:port` of the public listener, no trailing slash.
    var gatewayURL: String
    /// `PUSH_GATEWAY_ORIGIN`, the prefix of every transcript audience (docs/protocol.md §3).
    var origin: String
    var profile: String
    /// The profile's `…_ANDROID_PACKAGE` and one of its `…_ANDROID_SIGNING_CERT_SHA256` digests.
    var packageName: String
    var signingCertificateDigest: [UInt8]
    /// The JSON-lines record file of `fcm-mock --record`, shown after the delivery when given.
    var fcmRecordFile: String?
    /// The relay's secret key file (`--relay-key-file`); nil: a fresh key for this run.
    var relayKeyFile: String?
}

/// Everything the Android demo saw, for callers that check it (tests) rather than read it.
struct AndroidDemoOutcome: Sendable {
    let steps: [DemoStep]
    /// The made-up FCM registration token the demo enrolled.
    let endpoint: String
    let relayPublicKey: String
    let grant: String
    /// The `fcm-mock` record of the delivery, when a record file was given.
    let fcmRecord: FCMRecord?
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

/// Plays an Android app and a relay through docs/protocol.md §4 for an `android` profile: challenge,
/// enroll with a Keystore certificate chain under the local Key Attestation root (§4.2a), challenge,
/// delegate with an ECDSA signature over the transcript (§3, §4.3), then a NIP-98-signed delivery on
/// the platform-neutral path (§4.7) and, when given its record file, what fcm-mock received (§8a).
struct AndroidDemoFlow {
    static let enrollPath = "/v1/installations/android"
    static let delegationsPath = "/v1/delegations"
    static let deliveriesPath = "/v1/deliveries"
    static let installationLifetime: Int64 = 86_400
    static let grantLifetime: Int64 = 3600

    let settings: AndroidDemoSettings
    let root: LocalKeyAttestationRoot
    let client: HTTPPostClient
    let say: (String) -> Void

    init(
        settings: AndroidDemoSettings, root: LocalKeyAttestationRoot,
        client: HTTPPostClient = HTTPPostClient(connectTimeoutSeconds: 5, totalTimeoutSeconds: 30),
        say: @escaping (String) -> Void
    ) {
        self.settings = settings
        self.root = root
        self.client = client
        self.say = say
    }

    func run() throws -> AndroidDemoOutcome {
        var exchange = DemoExchange(gatewayURL: settings.gatewayURL, client: client, say: say)
        let relay = try DemoRelayKey.load(from: settings.relayKeyFile)
        let endpoint = try Self.registrationToken()
        let now = DemoExchange.unixSeconds()

        say("Device: an Android phone with a TEE, running \(settings.packageName) (a synthetic Keystore key)")
        let first = try exchange.challenge(number: 1)

        // docs/protocol.md §4.2a: a new Keystore key whose attestation challenge is SHA-256 of the
        // enrollment transcript; the chain it gets is what the body carries.
        let expiresAt = now + Self.installationLifetime
        let transcript = Self.enrollmentTranscript(
            origin: settings.origin, challengeID: first.id, challenge: first.challenge, appProfile: settings.profile,
            endpoint: endpoint, expiresAt: expiresAt)
        let key = try P256PrivateKey.generate()
        let chain = try root.attestationChain(
            for: key.publicKey,
            description: DemoKeyDescription(
                challenge: SHA256.hash(transcript), packageName: settings.packageName,
                signingCertificateDigest: settings.signingCertificateDigest))
        let attestation = chain.map { "\"\(Base64.encode($0))\"" }.joined(separator: ",")
        let enrolled = try exchange.post(
            "2. enroll: a Keystore chain of \(chain.count) certificates under the local root, made-up FCM token "
                + endpoint, Self.enrollPath,
            """
            {"v":1,"challenge_id":"\(first.id)","challenge":"\(first.challenge)","attestation":[\(attestation)],\
            "app_profile":"\(settings.profile)","endpoint":"\(endpoint)","endpoint_epoch":1,"expires_at":\(expiresAt)}
            """, expecting: 201)
        guard let handle = enrolled["installation_handle"] as? String else {
            throw DemoError("enroll: the answer has no installation_handle")
        }

        let second = try exchange.challenge(number: 3)
        let relayPubkey = relay.publicKey.hex
        let grantExpiresAt = now + Self.grantLifetime
        // The delegate transcript is the same for both platforms (docs/protocol.md §3); Android signs
        // it with the attested key, Signature("SHA256withECDSA"), instead of an App Attest assertion.
        let delegateTranscript = AppAttestTranscript.delegate(
            origin: settings.origin, challengeID: second.id, challenge: second.challenge, installationHandle: handle,
            endpointEpoch: 1, generation: 1, relayPubkey: relayPubkey, notBefore: now, expiresAt: grantExpiresAt)
        let signature = try key.derSignature(for: delegateTranscript.bytes)
        let delegated = try exchange.post(
            "4. delegate to the relay key \(relayPubkey) (ECDSA signature of the transcript)", Self.delegationsPath,
            """
            {"v":1,"challenge_id":"\(second.id)","challenge":"\(second.challenge)",\
            "installation_handle":"\(handle)","endpoint_epoch":1,"generation":1,\
            "relay_pubkey":"\(relayPubkey)","not_before":\(now),"expires_at":\(grantExpiresAt),\
            "assertion":"\(Base64.encode(signature))"}
            """, expecting: 201)
        guard let grant = delegated["endpoint_grant"] as? String else {
            throw DemoError("delegate: the answer has no endpoint_grant")
        }
        say("    (the grant above is this demo's own; a real app hands it only to its relay)")

        _ = try exchange.deliver(title: "5. deliver", path: Self.deliveriesPath, grant: grant, relay: relay)

        var fcmRecord: FCMRecord?
        if let file = settings.fcmRecordFile {
            let found = try Self.fcmRecord(in: file, token: endpoint)
            say("==> 6. what fcm-mock received (\(file)):")
            say("    POST \(found.path) answered \(found.status.map(String.init) ?? "none")")
            say("    message: \(found.message ?? "none")")
            fcmRecord = found
        }
        exchange.showRelaySide(
            relay: relay, keyFile: settings.relayKeyFile, grant: grant, deliveryPath: Self.deliveriesPath)
        return AndroidDemoOutcome(
            steps: exchange.steps, endpoint: endpoint, relayPublicKey: relayPubkey, grant: grant, fcmRecord: fcmRecord)
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

    /// The last `send` line of the `fcm-mock` record file whose message is for `token` (FCM messages
    /// carry no request id; the demo's made-up token is its own).
    static func fcmRecord(in file: String, token: String) throws -> FCMRecord {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw DemoError("cannot read the fcm-mock record file")
        }
        for line in data.split(separator: UInt8(ascii: "\n")).reversed() {
            if let record = FCMRecord(jsonLine: line), record.kind == "send", record.token == token { return record }
        }
        throw DemoError("fcm-mock recorded no message for this delivery")
    }
}
